import ChimeStore
import Testing

/// The lease file's line read back exactly as written: found by the lease fuzz target, a
/// record with an empty `host=` (or `boot=`) parsed, but its bytes say `-`, so it read back as
/// another record.
@Suite struct LeaseRecordParseTests {
    static func line(boot: String, host: String) -> [UInt8] {
        Array("chime-lease 1 renewal=42 durationMs=3000 pid=77 start=12345 boot=\(boot) pidns=4026531837 host=\(host)\n".utf8)
    }

    @Test func anEmptyHostOrBootIsNotARecord() {
        #expect(LeaseRecord.parse(Self.line(boot: "4eea9c9-0def4255", host: "")) == nil)
        #expect(LeaseRecord.parse(Self.line(boot: "", host: "vm")) == nil)
    }

    @Test func aRecordReadsBackFromItsOwnBytes() throws {
        for (boot, host) in [("4eea9c9-0def4255", "vm"), ("-", "-"), ("b", "-")] {
            let record = try #require(LeaseRecord.parse(Self.line(boot: boot, host: host)))
            #expect(LeaseRecord.parse(record.bytes) == record)
            #expect(record.holder.host == host && record.holder.bootID == boot)
        }
    }
}
