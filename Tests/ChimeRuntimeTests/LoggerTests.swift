import Foundation
import Testing

@testable import ChimeRuntime

/// The exact lines `Logger` writes: JSON with typed values, text, syslog priority prefixes.
@Suite struct LoggerTests {
    static let instant = Date(timeIntervalSince1970: 1_798_099_200.125)  // 2026-12-24T08:00:00.125Z

    @Test func jsonLinesWriteNumbersAndBooleansUnquotedAndSlashesAsTheyAre() {
        let line = LogLineFormat(json: true).line(
            .info, "recovered",
            ["pid": 18066, "milliseconds": .rounded(12.345, digits: 1), "warm": true, "store": "/var/lib/chime/store",
             "epoch": .integer(UInt64(7))],
            label: "coordinator", at: Self.instant)
        #expect(line == #"{"time":"2026-12-24T08:00:00.125Z","level":"info","label":"coordinator","message":"recovered","epoch":7,"milliseconds":12.3,"pid":18066,"store":"/var/lib/chime/store","warm":true}"#)
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["pid"] as? Int == 18066)
    }

    @Test func jsonStringsEscapeQuotesBackslashesAndControlCharactersOnly() {
        let line = LogLineFormat(json: true).line(.warning, "say \"hi\"\n", ["path": "C:\\x/y\t\u{1}é"], label: "worker", at: Self.instant)
        #expect(line == #"{"time":"2026-12-24T08:00:00.125Z","level":"warn","label":"worker","message":"say \"hi\"\n","path":"C:\\x/y\t\u0001é"}"#)
        #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil)
    }

    @Test func metadataCannotRepeatTheFixedKeys() {
        let line = LogLineFormat(json: true).line(.error, "m", ["level": "x", "message": 1, "z": 2.5], label: "l", at: Self.instant)
        #expect(line == #"{"time":"2026-12-24T08:00:00.125Z","level":"error","label":"l","message":"m","z":2.5}"#)
    }

    @Test func nonFiniteRealsAreNull() {
        #expect(LogValue.double(.nan).jsonText == "null")
        #expect(LogValue.double(-.infinity).jsonText == "null")
        #expect(LogValue.double(1e-5).jsonText == "1e-05")
    }

    @Test func textLinesListMetadataInKeyOrder() {
        let line = LogLineFormat().line(
            .warning, "worker lost", ["worker": "w1", "leases": 2, "silentSeconds": 3.5], label: "coordinator", at: Self.instant)
        #expect(line == "2026-12-24T08:00:00.125Z WARN coordinator: worker lost leases=2 silentSeconds=3.5 worker=w1")
    }

    @Test(arguments: [
        (Logger.Level.error, "<3>"), (.warning, "<4>"), (.info, "<6>"), (.debug, "<7>"),
    ])
    func syslogPrefixCarriesThePriority(level: Logger.Level, prefix: String) {
        let text = LogLineFormat(syslogPrefix: true).line(level, "m", [:], label: "c", at: Self.instant)
        #expect(text == "\(prefix)2026-12-24T08:00:00.125Z \(level.name) c: m")
        let json = LogLineFormat(json: true, syslogPrefix: true).line(level, "m", [:], label: "c", at: Self.instant)
        #expect(json.hasPrefix("\(prefix){\"time\""))
    }

    @Test func syslogPrefixIsAutomaticUnderJournald() throws {
        let settings = ChimeConfiguration.Log()
        #expect(try settings.lineFormat(environment: ["JOURNAL_STREAM": "8:12345"]).syslogPrefix)
        #expect(try !settings.lineFormat(environment: [:]).syslogPrefix)
        var never = settings
        never.syslogPrefix = "never"
        #expect(try !never.lineFormat(environment: ["JOURNAL_STREAM": "8:12345"]).syslogPrefix)
        var bad = settings
        bad.level = "loud"
        #expect(throws: ConfigurationError.self) { try bad.makeLogger(label: "c", environment: [:]) }
    }

    @Test func copiesShareTheMinimumLevel() {
        let logger = Logger(label: "c", minimumLevel: .info)
        let copy = logger
        copy.minimumLevel = .debug
        #expect(logger.minimumLevel == .debug)
    }
}

/// One line per interval per kind, with the count since the previous line.
@Suite struct LogRateWindowTests {
    @Test func firstEventIsReportedAtOnceAndABurstIsSummedIntoOneLinePerSecond() {
        var window = LogRateWindow(interval: .seconds(1))
        let start = ContinuousClock.now
        #expect(window.add(1, examples: ["a"], at: start) == .init(count: 1, seconds: 0, examples: ["a"]))
        for (index, name) in ["b", "c", "d", "e"].enumerated() {
            #expect(window.add(1, examples: [name], at: start + .milliseconds(100 * (index + 1))) == nil)
        }
        #expect(window.takeDue(at: start + .milliseconds(900)) == nil)
        #expect(window.takeDue(at: start + .seconds(1)) == .init(count: 4, seconds: 0.9, examples: ["b", "c", "d"]))
        #expect(window.takeDue(at: start + .seconds(5)) == nil, "nothing new, no line")
        #expect(window.add(3, at: start + .seconds(6)) == .init(count: 3, seconds: 0, examples: []))
    }
}
