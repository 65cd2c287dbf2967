import ChimeTestSupport
import Foundation
import Testing

/// A store written by the previous release (0.1.0: a format-3 snapshot, then journal entries
/// of that version; `Tests/Fixtures/store-0.1.0/make-store.sh` made it) opens with this one and
/// answers as that release did.
@Suite(.serialized) struct PreviousReleaseStoreTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/store-0.1.0")

    /// Parses NDJSON into objects, for comparison independent of key order.
    static func objects(_ text: String) throws -> [NSDictionary] {
        try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? NSDictionary)
        }
    }

    @Test func aStoreOfThePreviousReleaseListsEveryReminderAsItDid() throws {
        let copy = try TemporaryDirectory(prefix: "previous-store")
        let store = URL(fileURLWithPath: copy.path("store"))
        try FileManager.default.copyItem(at: Self.fixture, to: store)
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", store.path]) { cluster in
            let listed = try cluster.run(["list", "--all", "--all-pages", "--json"])
            #expect(listed.status == 0, "\(listed.error)")
            let expected = try String(contentsOf: Self.fixture.appendingPathComponent("list-all.ndjson"), encoding: .utf8)
            #expect(try Self.objects(listed.output) == Self.objects(expected))
            for recipient in ["alice", "bob"] {
                let delivered = try cluster.run(["delivered", recipient, "--json"])
                #expect(delivered.status == 0, "\(delivered.error)")
                let reply = try #require(try JSONSerialization.jsonObject(with: Data(delivered.output.utf8)) as? NSDictionary)
                let saved = try Data(contentsOf: Self.fixture.appendingPathComponent("delivered-\(recipient).json"))
                #expect(reply["result"] as? NSDictionary == (try JSONSerialization.jsonObject(with: saved) as? NSDictionary))
            }
            // The new release records its settings and writes its own snapshot format.
            let snapshot = try cluster.run(["ctl", "snapshot", "--json"])
            #expect(snapshot.status == 0, "\(snapshot.error)")
        }
        // Restarted from its own snapshot, it still lists the same.
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", store.path]) { cluster in
            let listed = try cluster.run(["list", "--all", "--all-pages", "--json"])
            let expected = try String(contentsOf: Self.fixture.appendingPathComponent("list-all.ndjson"), encoding: .utf8)
            #expect(try Self.objects(listed.output) == Self.objects(expected))
        }
    }
}
