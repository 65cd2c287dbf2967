import Foundation
import Testing

@testable import ChimeBench

/// The `/proc` fields the benchmark's memory figures come from.
@Suite struct RSSSamplerTests {
    @Test func readsTheNamedKilobyteField() {
        let rollup = "55d0c0000000-7ffd0000 ---p 00000000 00:00 0 [rollup]\nRss:               25976 kB\nPss:                5126 kB\nPss_Anon:           2276 kB\n"
        #expect(RSSSampler.parseKilobytes(field: "Pss:", in: rollup) == 5126 * 1024)
        #expect(RSSSampler.parseKilobytes(field: "Rss:", in: rollup) == 25976 * 1024)
        #expect(RSSSampler.parseResidentBytes(status: "Name:\tchime\nVmRSS:\t   24124 kB\n") == 24124 * 1024)
    }

    @Test(arguments: ["", "Pss:", "Pss: x kB", "Pss_Anon: 12 kB", "Pss: 99999999999999999999999 kB", "Pss: 9000000000000000000 kB", "Pss: -4 kB"])
    func garbageGivesNil(_ text: String) {
        #expect(RSSSampler.parseKilobytes(field: "Pss:", in: text) == nil)
    }

    @Test func readsThisProcess() throws {
        let pid = getpid()
        let resident = try #require(RSSSampler.residentBytes(of: pid))
        let proportional = try #require(RSSSampler.proportionalBytes(of: pid))
        #expect(resident > 0 && proportional > 0 && proportional <= resident)
    }
}
