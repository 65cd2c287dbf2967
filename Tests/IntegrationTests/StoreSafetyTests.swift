import ChimeCore
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ChimeClient

/// Store-level safety over real processes: corruption is refused and repaired only on
/// request, the epoch never goes back, and a coordinator whose LOCK is deleted stops.
@Suite(.serialized) struct StoreSafetyTests {
    /// Schedules `count` reminders, one request each (a `scheduled` and an `answered` record).
    static func schedule(_ count: Int, prefix: String, with client: ControlClient) throws -> [Reminder] {
        let tomorrow = Date().addingTimeInterval(86_400)
        return try (0..<count).map { index in
            let reminder = try Durability.plainReminder(id: "\(prefix)-\(index)", due: tomorrow + Double(index))
            _ = try client.send(ControlRequest(command: .schedule([reminder])), expecting: ScheduleResult.self)
            return reminder
        }
    }

    /// `chime store ACTION DIR --json`: the exit status and the JSON object printed.
    static func store(_ action: String, _ directory: String, _ cluster: LocalCluster) throws -> (status: Int32, json: [String: Any]) {
        let result = try LocalCluster.run(binary: cluster.binary, ["store", action, directory, "--json"], timeout: 30)
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        return (result.status, try #require(object, "store \(action) printed JSON: \(result.output) \(result.error)"))
    }

    @Test func corruptionIsRefusedUntouchedAndRepairedOnlyOnRequest() throws {
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            let reminders = try Self.schedule(30, prefix: "keep", with: client)
            #expect(cluster.stop("coordinator")?.status == 0)

            let clean = try Self.store("verify", store, cluster)
            #expect(clean.status == 0)
            #expect(clean.json["verdict"] as? String == "clean")
            // 1 `started` record, then 2 per request.
            #expect(clean.json["recordsChecked"] as? Int == 61)
            #expect(clean.json["journalEpoch"] as? Int == 1)

            // A flipped byte in the 10th reminder's `scheduled` record (sequence 20).
            let segment = try StoreFiles.newest(in: "\(store)/journal", suffix: ".log")
            let records = try StoreFiles.records(ofSegment: segment)
            #expect(records.count == 61)
            let victim = records[19]
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
            bytes[victim.offset + RecordFraming.recordHeaderLength + 3] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: segment))
            let damaged = try StoreFiles.contents(of: store)

            let verified = try Self.store("verify", store, cluster)
            #expect(verified.status == 5, "acknowledged data is damaged")
            let corruption = try #require(verified.json["corruption"] as? [String: Any])
            // The lost record is named: one flipped bit, corrected by its checksum.
            let wouldLose = try #require(verified.json["loss"] as? [String: Any])
            #expect(wouldLose["reminders"] as? [String] == [reminders[9].key.text])
            #expect(wouldLose["exactRecords"] as? Int == 1)
            #expect(wouldLose["sequences"] as? [[Int]] == [[20, 20]])
            #expect(wouldLose["acknowledgedDataLost"] as? Bool == true)
            let humanVerify = try LocalCluster.run(binary: cluster.binary, ["store", "verify", store], timeout: 30)
            #expect(humanVerify.status == 5)
            #expect(humanVerify.output.contains("reminders: \(reminders[9].key.text)"), "\(humanVerify.output)")
            #expect(corruption["offset"] as? Int == victim.offset)
            #expect(corruption["validRecordsAfter"] as? Int == 41)
            #expect(corruption["nextValidOffset"] as? Int == records[20].offset)
            #expect(corruption["reason"] as? String == "checksum_mismatch")

            let refused = try cluster.run(["coordinator", "--store", store], timeout: 20)
            print("coordinator exited \(refused.status): \(refused.error)", terminator: "")
            #expect(refused.status == 1)
            #expect(refused.error.contains("corrupt") && refused.error.contains("followed by 41 valid records"))
            let afterRefusal = try StoreFiles.contents(of: store)
            #expect(Set(afterRefusal.keys) == Set(damaged.keys), "no file created or removed")
            for (path, data) in damaged where path != "LOCK" && path != "LEASE" { #expect(afterRefusal[path] == data, "\(path) unchanged") }

            let repaired = try Self.store("repair", store, cluster)
            #expect(repaired.status == 5, "the repair dropped an acknowledged record")
            let lost = try #require(repaired.json["loss"] as? [String: Any])
            #expect(lost["reminders"] as? [String] == [reminders[9].key.text])
            #expect(lost["sequences"] as? [[Int]] == [[20, 20]])
            #expect(repaired.json["recordsKept"] as? Int == 60)
            #expect(repaired.json["bytesDropped"] as? Int == victim.length)
            let segments = try #require(repaired.json["segments"] as? [[String: Any]])
            #expect(segments.count == 1)
            let copy = try #require(segments.first?["copy"] as? String)
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == damaged["journal/" + URL(fileURLWithPath: segment).lastPathComponent])
            let dropped = try #require(segments.first?["dropped"] as? [[String: Any]])
            #expect(dropped.count == 1)
            #expect(dropped.first?["offset"] as? Int == victim.offset)
            #expect(dropped.first?["bytes"] as? Int == victim.length)
            #expect(try Self.store("verify", store, cluster).status == 0)

            try cluster.restart("coordinator")
            try cluster.waitForCoordinator(timeout: 20)
            let listing = try Durability.listAll(cluster)
            #expect(listing.count == 29)
            for (index, reminder) in reminders.enumerated() {
                #expect((listing[reminder.id] != nil) == (index != 9), "\(reminder.id)")
            }
            #expect(try Durability.storeReport(cluster).epoch == 2)
        }
    }

    @Test func verifyExitsFourOnATornTailThatAStartTruncates() throws {
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            let client = try ControlClient(endpoint: cluster.controlEndpoint)
            _ = try Self.schedule(5, prefix: "torn", with: client)
            #expect(cluster.stop("coordinator")?.status == 0)
            let segment = try StoreFiles.newest(in: "\(store)/journal", suffix: ".log")
            let records = try StoreFiles.records(ofSegment: segment)
            let last = try #require(records.last)
            try FileHandle(forWritingTo: URL(fileURLWithPath: segment)).truncate(atOffset: UInt64(last.offset + last.length - 4))
            // The last request's records are one group: the start cuts from its first record.
            let groupStart = StoreFiles.groupStart(of: records.count - 1, in: records)
            let groupRecords = records.filter { $0.offset >= groupStart }.count

            let verified = try Self.store("verify", store, cluster)
            #expect(verified.status == 4)
            let tail = try #require(verified.json["tornTail"] as? [String: Any])
            #expect(tail["offset"] as? Int == groupStart)
            #expect(tail["bytes"] as? Int == last.offset + last.length - 4 - groupStart)
            #expect(tail["incompleteGroupRecords"] as? Int == groupRecords - 1)
            let human = try LocalCluster.run(binary: cluster.binary, ["store", "verify", store], timeout: 30)
            #expect(human.status == 4)
            #expect(human.output.contains("torn tail (a start truncates it): \(last.offset + last.length - 4 - groupStart) bytes at offset \(groupStart)"))
        }
    }

    @Test func aDeletedEpochFileIsRebuiltAboveTheJournalsEpoch() throws {
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            #expect(try Durability.storeReport(cluster).epoch == 1)
            #expect(cluster.stop("coordinator")?.status == 0)
            try cluster.restart("coordinator")
            try cluster.waitForCoordinator(timeout: 20)
            #expect(try Durability.storeReport(cluster).epoch == 2)
            #expect(cluster.stop("coordinator")?.status == 0)

            try FileManager.default.removeItem(atPath: "\(store)/EPOCH")
            try cluster.restart("coordinator")
            try cluster.waitForCoordinator(timeout: 20)
            #expect(try Durability.storeReport(cluster).epoch == 3, "previous + 1, not 1")
            #expect(try String(contentsOfFile: "\(store)/EPOCH", encoding: .utf8) == "chime-epoch 1 3\n")
            let warning = try #require(StoreFiles.lastLine(containing: "EPOCH file missing", in: cluster.log(of: "coordinator")))
            #expect(warning.fields["recordedEpoch"] == "2" && warning.fields["epoch"] == "3", "\(warning.line)")
        }
    }

    @Test func aCoordinatorWhoseLockIsDeletedStopsAndTheStandbyTakesOver() throws {
        try withLocalCluster(workers: 0, coordinatorArguments: ["--store", "store"]) { cluster in
            let store = cluster.directory.path("store")
            try cluster.startStandby(store: store)
            try expectEventually(timeout: 10, "the standby to wait for the store lock") {
                cluster.log(of: "standby").contains("standby: waiting for the store lock")
            }
            let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 5)
            let reminders = try Self.schedule(3, prefix: "lock", with: client)
            let activePid = try #require(cluster.pid(of: "coordinator"))

            let deletedAt = Date()
            try FileManager.default.removeItem(atPath: "\(store)/LOCK")
            try expectEventually(timeout: 5, interval: 0.01, "the coordinator whose LOCK was deleted to exit") {
                cluster.pid(of: "coordinator") == nil
            }
            let stoppedAfter = Date().timeIntervalSince(deletedAt)
            print(String(format: "LOCK deleted: the coordinator (pid %d) exited after %.0f ms", activePid, stoppedAfter * 1000))
            #expect(cluster.stop("coordinator")?.status == 1)
            let log = cluster.log(of: "coordinator")
            // Deleted, or already replaced by the standby's new LOCK when the check ran.
            let lost = try #require(log.split(separator: "\n").last { $0.hasPrefix("chime: lock_lost: ") }, "\(log)")
            #expect(lost.hasSuffix("so this one stops writing"), "\(lost)")
            #expect(lost.contains("LOCK was deleted while this process held it") || lost.contains("LOCK names another file"))

            try cluster.waitForCoordinator(timeout: 10)
            print(String(format: "LOCK deleted: the standby answered %.0f ms after the deletion", Date().timeIntervalSince(deletedAt) * 1000))
            let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
            #expect(status.result?.pid == cluster.pid(of: "standby"), "the standby is the coordinator now")
            #expect(try Durability.storeReport(cluster).epoch == 2)
            #expect(cluster.log(of: "standby").contains("LOCK was missing from an existing store"))
            let listing = try Durability.listAll(cluster)
            #expect(Set(listing.keys) == Set(reminders.map(\.id)))
        }
    }
}
