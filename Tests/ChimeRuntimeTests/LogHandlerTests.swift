import ChimeRuntime
import ChimeTestSupport
import Foundation
import Testing

/// Lines go through the logger's handler: level filtering and metadata merging happen in
/// the logger, the handler sees what passed.
@Suite struct LogHandlerTests {
    @Test func linesReachTheHandlerWithTheLoggersAndTheLinesMetadata() {
        let capture = CapturingLogHandler()
        var logger = Logger(label: "coordinator", minimumLevel: .info, handler: capture)
        logger[metadataKey: "pid"] = 42
        logger[metadataKey: "epoch"] = 1
        logger.debug("dropped", ["n": 1])
        logger.info("recovered", ["epoch": 3, "entries": 10])
        logger.warning("worker lost", ["worker": "w1"] as [String: String])
        #expect(capture.lines == [
            "INFO coordinator: recovered entries=10 epoch=3 pid=42",
            "WARN coordinator: worker lost epoch=1 pid=42 worker=w1",
        ])
        #expect(capture.all.map(\.level) == [.info, .warning])
        #expect(capture.all.first?.metadata["epoch"] == .int(3), "the line's own value wins")
    }

    @Test func copiesShareTheMinimumLevelAndTheHandler() {
        let capture = CapturingLogHandler()
        let logger = Logger(label: "worker", minimumLevel: .warning, handler: capture)
        let copy = logger
        logger.info("before")
        copy.minimumLevel = .debug
        logger.debug("after")
        #expect(capture.lines == ["DEBUG worker: after"])
    }

    /// The capture's text is the standard-error text line without its time.
    @Test func capturedLinesAreTheTextFormatWithoutTheTime() {
        let capture = CapturingLogHandler()
        Logger(label: "c", handler: capture).error("m", ["b": 2.5, "a": true])
        let written = LogLineFormat().line(.error, "m", ["b": 2.5, "a": true], label: "c", at: Date(timeIntervalSince1970: 0))
        #expect(written == "1970-01-01T00:00:00.000Z " + (capture.lines.first ?? ""))
    }

    @Test func aRateLimitedLogWritesOneLinePerIntervalThroughTheHandler() {
        let capture = CapturingLogHandler()
        let log = RateLimitedLog(
            logger: Logger(label: "coordinator", handler: capture), level: .warning, message: "connections refused",
            examplesKey: "addresses", interval: .seconds(1))
        let start = ContinuousClock.now
        log.record(examples: ["10.0.0.1"], at: start)
        log.record(examples: ["10.0.0.2"], at: start + .milliseconds(300))
        log.record(examples: ["10.0.0.3"], at: start + .milliseconds(600))
        log.flush(at: start + .milliseconds(900))
        log.flush(at: start + .milliseconds(1100))
        #expect(capture.lines == [
            "WARN coordinator: connections refused addresses=10.0.0.1 count=1 windowSeconds=0.0",
            "WARN coordinator: connections refused addresses=10.0.0.2,10.0.0.3 count=2 windowSeconds=0.8",
        ])
    }
}
