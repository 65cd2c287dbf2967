import ChimeTestSupport
import Foundation
import Testing
import ZeroMQ
@testable import ChimeSecurity

/// A restricted client key's quota in its certificate: written by `keys add`, read by the
/// allow-list loader, refused where it means nothing.
@Suite(.enabled(if: zeroMQSupports("curve"), "libzmq built without CURVE"))
struct TenantQuotaKeyTests {
    @Test func aQuotaWrittenWithTheKeyIsLoadedWithItsGrant() throws {
        let directory = try TemporaryDirectory(prefix: "keys")
        let keys = directory.url.appendingPathComponent("keys")
        try KeyDirectory.initialize(at: keys)
        let quota = TenantQuota(maxReminders: .atMost(500), maxReminderBytes: .unlimited)
        try KeyDirectory.add(role: .client, name: "alice", scope: RecipientScope(prefixes: ["a-"]), quota: quota, to: keys)
        let alice = try Certificate(contentsOf: keys.appendingPathComponent("client/alice.key"))
        #expect(alice.metadata["max-reminders"] == "500")
        #expect(alice.metadata["max-reminder-bytes"] == "unlimited")
        let policy = try AccessPolicy.load(directory: keys)
        #expect(policy.grants[alice.publicKey]
            == .init(role: .client, scope: RecipientScope(prefixes: ["a-"]), quota: quota, name: "client/alice.key"))
        // The unrestricted keys `keys init` made carry none.
        #expect(policy.grants.values.filter { $0.quota != nil }.count == 1)
    }

    @Test func aQuotaWithoutRecipientsIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "keys")
        let keys = directory.url.appendingPathComponent("keys")
        try KeyDirectory.initialize(at: keys)
        #expect(throws: SecurityError.self) {
            try KeyDirectory.add(role: .client, name: "everyone", scope: nil, quota: TenantQuota(maxReminders: .atMost(1)), to: keys)
        }
        #expect(!FileManager.default.fileExists(atPath: keys.appendingPathComponent("client/everyone.key").path))
    }
}
