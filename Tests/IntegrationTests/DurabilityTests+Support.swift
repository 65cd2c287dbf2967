import ChimeCore
import ChimeStore
import ChimeTestSupport
import ChimeWire
import Foundation
import Synchronization
import Testing
import ChimeClient

/// One schedule request of a durability test: its reminders as the coordinator must store
/// them, and whether an ok reply came back.
struct SentRequest: Sendable {
    enum Outcome: Sendable, Equatable {
        /// An ok reply arrived: every reminder must survive any crash.
        case acknowledged
        /// No reply before the client's timeout: all of the request or none of it may exist.
        case noReply
        /// An error reply: none of it may exist.
        case rejected(String)
    }

    var round: Int
    var reminders: [Reminder]
    var outcome: Outcome
    /// The first occurrence each reminder was armed at, from the ok reply (a repeating
    /// reminder applied after its start begins at its next occurrence).
    var armedAt: [ReminderID: Date] = [:]
}

/// Every schedule request sent during a test, from any thread.
final class RequestLedger: Sendable {
    private let requests = Mutex<[SentRequest]>([])

    var all: [SentRequest] { requests.withLock { $0 } }

    /// Sends one schedule request of `reminders` (already `normalized`) and records the outcome.
    func schedule(_ reminders: [Reminder], round: Int, with client: ControlClient) {
        let outcome: SentRequest.Outcome
        var armedAt: [ReminderID: Date] = [:]
        do {
            let reply = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
            for item in reply.result?.scheduled ?? [] { armedAt[item.id] = item.nextFireAt }
            outcome = .acknowledged
        } catch where error.code == .unavailable {
            outcome = .noReply
        } catch {
            outcome = .rejected("\(error)")
        }
        let request = SentRequest(round: round, reminders: reminders, outcome: outcome, armedAt: armedAt)
        requests.withLock { $0.append(request) }
    }
}

/// A flag one thread raises and another polls.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}

/// Acknowledged fire events fetched through the control socket (`events` after a cursor),
/// as `chime subscribe --since` replays them, to cover what the live subscriber missed
/// while the forwarder restarted.
final class CatchUpLog {
    private(set) var eventsBySeq: [UInt64: FireEvent] = [:]
    private var cursor: UInt64 = 0

    var events: [FireEvent] { Array(eventsBySeq.values) }

    /// Fetches the events after the cursor; a coordinator that does not answer (it is
    /// restarting) is asked again on the next call, so the error is dropped here.
    func fetch(with client: ControlClient) {
        let request = ControlRequest(command: .events(after: cursor, recipient: nil, limit: nil))
        guard let result = (try? client.send(request, expecting: EventsResult.self))?.result else { return }
        for event in result.events { eventsBySeq[event.seq] = event }
        cursor = max(cursor, result.through)
    }
}

enum Durability {
    /// Two-second leases and a 600 ms liveness window, so crashes are noticed quickly; enough
    /// attempts and retention that no firing is dead-lettered or evicted during a test.
    static let fastFailover = """
        {"coordinator": {"leaseSeconds": 2, "maxAttempts": 50, "eventRetention": 1000000},
         "heartbeat": {"intervalMilliseconds": 200, "liveness": 3}}
        """

    /// `fastFailover` with frequent snapshots and small journal segments, so crashes also
    /// land in snapshot writes and segment roll-overs, and recovery starts from snapshots.
    static let crashRounds = """
        {"coordinator": {"leaseSeconds": 2, "maxAttempts": 50, "eventRetention": 1000000},
         "heartbeat": {"intervalMilliseconds": 200, "liveness": 3},
         "store": {"snapshotEveryRecords": 300, "segmentBytes": 32768}}
        """

    /// `date` cut to whole milliseconds, the precision of the wire.
    static func wholeMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// `reminder` after a trip through the wire codec: what the coordinator receives, and
    /// so what it must list back.
    static func normalized(_ reminder: Reminder) throws -> Reminder {
        let codec = WireCodec()
        return try codec.decode(Reminder.self, from: codec.encode(reminder))
    }

    /// A reminder with every content field set (distinct per index), one in three
    /// repeating every minute.
    static func richReminder(id: String, index: Int, round: Int, due: Date) -> Reminder {
        let userInfo: [String: PropertyListValue] = [
            "id": .string(id), "round": .integer(Int64(round)), "index": .integer(Int64(index)),
            "weight": .real(Double(index) + 0.25), "urgent": .boolean(index.isMultiple(of: 5)),
            "tags": .array([.string("t\(index % 4)"), .integer(Int64(index * 7))]),
            "owner": .dictionary(["name": .string("user-\(index % 5)"), "level": .integer(Int64(index % 3))]),
        ]
        let content = Content(
            title: "Round \(round) reminder \(index)", body: "Body of \(id): ünïcødé ✓",
            action: index.isMultiple(of: 2) ? "Open" : nil, sound: index.isMultiple(of: 3) ? "default" : nil,
            badge: index.isMultiple(of: 4) ? index + 1 : nil, userInfo: userInfo,
            category: index.isMultiple(of: 2) ? "reminder" : nil, threadId: "round-\(round)")
        return Reminder(
            id: ReminderID(id), recipient: RecipientID("user-\(index % 5)"), content: content,
            trigger: Trigger(
                start: .instant(wholeMilliseconds(due)),
                repeatRule: index.isMultiple(of: 3) ? RepeatRule(unit: .minute, interval: 1) : nil))
    }

    /// A plain one-shot reminder due at `due`, `normalized`.
    static func plainReminder(id: String, due: Date, recipient: RecipientID = "load") throws -> Reminder {
        try normalized(Reminder(
            id: ReminderID(id), recipient: recipient, content: Content(body: "body of \(id)", userInfo: ["id": .string(id)]),
            trigger: Trigger(start: .instant(due))))
    }

    /// The firing ids of `reminder`'s occurrences due from `first` (default: its start)
    /// through `cutoff` (absolute triggers, repeating by minutes, as this suite schedules them).
    static func dueFiringIDs(of reminder: Reminder, from first: Date? = nil, through cutoff: Date) -> [FiringID] {
        guard reminder.enabled, case .instant(let start) = reminder.trigger.start else { return [] }
        let step = reminder.trigger.repeatRule.map { Double($0.interval) * 60 }
        var ids: [FiringID] = []
        var occurrence = 0
        while true {
            let due = start.addingTimeInterval(Double(occurrence) * (step ?? 0))
            guard due <= cutoff else { break }
            if due >= (first ?? start) { ids.append(FiringID(reminder.key, dueAt: due)) }
            guard step != nil else { break }
            occurrence += 1
        }
        return ids
    }

    /// Every reminder in any state, from `chime list --all --json`.
    static func listAll(_ cluster: LocalCluster) throws -> [ReminderID: ReminderListing] {
        // Every page (the default page is 250 listings): one listing a line.
        let (status, output, error) = try cluster.run(["list", "--all", "--all-pages", "--json"])
        try #require(status == 0, "chime list --all --all-pages --json failed: \(error)")
        let codec = WireCodec()
        let listings = try output.split(separator: "\n").map { try codec.decode(ReminderListing.self, from: Data($0.utf8)) }
        return Dictionary(listings.map { ($0.reminder.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The store report of `chime ctl store --json`.
    static func storeReport(_ cluster: LocalCluster) throws -> StoreReport {
        let (status, output, error) = try cluster.run(["ctl", "store", "--json"])
        try #require(status == 0, "chime ctl store --json failed: \(error)")
        return try #require(try WireCodec().decode(ControlReply<StoreReport>.self, from: Data(output.utf8)).result)
    }

    /// Checks that every delivery of one firing id describes the same occurrence and that no
    /// occurrence was delivered under two firing ids.
    /// - Returns: how many deliveries repeated a firing id already seen.
    @discardableResult
    static func expectDuplicatesShareTheirFiringID(_ events: [FireEvent], _ context: String) -> Int {
        var first: [FiringID: FireEvent] = [:]
        var idsByOccurrence: [String: Set<FiringID>] = [:]
        var duplicates = 0
        for event in events {
            let firing = event.firing
            #expect(firing.firingId == FiringID(ReminderKey(firing.reminderId, of: firing.recipient), dueAt: firing.dueAt), "\(context): \(firing.firingId) is <recipient>/<reminderId>@<dueAt>")
            idsByOccurrence["\(firing.reminderId)|\(RFC3339.format(firing.dueAt))", default: []].insert(firing.firingId)
            guard let earlier = first[firing.firingId] else {
                first[firing.firingId] = event
                continue
            }
            duplicates += 1
            #expect(
                earlier.firing.reminderId == firing.reminderId && earlier.firing.dueAt == firing.dueAt
                    && earlier.firing.recipient == firing.recipient && earlier.firing.content == firing.content,
                "\(context): two deliveries of \(firing.firingId) disagree: \(earlier) vs \(event)")
        }
        let split = idsByOccurrence.filter { $0.value.count > 1 }
        #expect(split.isEmpty, "\(context): occurrences delivered under several firing ids: \(split)")
        return duplicates
    }
}

/// The files of a store directory, for damaging them and comparing them.
enum StoreFiles {
    /// One journal record's place in its segment.
    struct Record {
        var offset: Int
        var length: Int
        /// The group mark (`RecordFraming`): the record's group goes on after it.
        var continuesGroup = false
    }

    /// The offset of the first record of the group `records[index]` belongs to: where a
    /// start cuts the journal when that record is torn.
    static func groupStart(of index: Int, in records: [Record]) -> Int {
        var first = index
        while first > 0, records[first - 1].continuesGroup { first -= 1 }
        return records[first].offset
    }

    /// The newest file with `suffix` in `directory` (names sort by sequence number).
    static func newest(in directory: String, suffix: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(suffix) }.sorted()
        let name = try #require(names.last, "no *\(suffix) file in \(directory)")
        return "\(directory)/\(name)"
    }

    /// The records of a segment file, walking the framing of `RecordFraming`.
    static func records(ofSegment path: String) throws -> [Record] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var records: [Record] = []
        var offset = RecordFraming.segmentHeaderLength
        while offset + RecordFraming.recordHeaderLength <= bytes.count {
            let payload = bytes[(offset + 4)..<(offset + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
            let length = RecordFraming.recordHeaderLength + payload
            guard offset + length <= bytes.count else { break }
            // Records of version 2 carry the group mark in bit 7 of their encoding byte.
            records.append(Record(offset: offset, length: length, continuesGroup: bytes[offset + 2] >= 2 && bytes[offset + 3] & 0x80 != 0))
            offset += length
        }
        return records
    }

    /// Every regular file under `directory` by relative path, with its bytes.
    static func contents(of directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory))
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = "\(directory)/\(relative)"
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    /// Rewrites a snapshot's format version (bytes 8..<12) and fixes its checksum (bytes
    /// 12..<16: CRC-32C of bytes 0..<12, 16..<32 and the payload), so the file reads as a
    /// well-formed snapshot of a newer format (see `SnapshotStore`).
    static func setSnapshotFormatVersion(_ version: UInt32, at path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes.replaceSubrange(8..<12, with: withUnsafeBytes(of: version.littleEndian) { Array($0) })
        var crc = CRC32C()
        crc.update(bytes[0..<12])
        crc.update(bytes[16...])
        bytes.replaceSubrange(12..<16, with: withUnsafeBytes(of: crc.value.littleEndian) { Array($0) })
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The last line of `log` containing `marker`, with its `key=value` fields.
    static func lastLine(containing marker: String, in log: String) -> (line: String, fields: [String: String])? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains(marker) }) else { return nil }
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        return (String(line), fields)
    }
}

/// Bulk scheduling for the figures, with request bodies written as text so the test's own
/// JSON encoding does not weigh on the coordinator's numbers.
enum Figures {
    /// Schedules `count` one-shot reminders `<prefix>-<first>`… due from tomorrow on, one
    /// millisecond apart, in one request.
    /// - Throws: `WireError` when the coordinator does not answer ok.
    static func schedule(_ count: Int, from first: Int, prefix: String, with client: ControlClient) throws {
        let tomorrow = Date().addingTimeInterval(86_400)
        var body = #"{"op":"schedule","requestId":"\#(UUID().uuidString)","reminders":["#
        for index in first..<(first + count) {
            if index > first { body += "," }
            let due = RFC3339.format(tomorrow.addingTimeInterval(Double(index) / 1000))
            body += #"{"id":"\#(prefix)-\#(index)","recipient":"bulk-\#(index % 100)","content":{"title":"t\#(index)","body":"pending reminder \#(index)","userInfo":{"n":\#(index)}},"trigger":{"at":"\#(due)"}}"#
        }
        body += "]}"
        let reply = try WireCodec().decode(ControlReply<EmptyResult>.self, from: client.exchange(Data(body.utf8)))
        guard reply.ok else { throw reply.error ?? WireError(.malformed, "no error in a failed reply") }
    }
}
