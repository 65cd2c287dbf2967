import ChimeCore
import ChimeWire
import Foundation

/// `cancel` by filter in slices (issue 15: no op holds the loop).
///
/// A cancel walks the reminders in id order (`reminderIndex`, one recipient's run of
/// `entries.byRecipient`, or the named ids sorted),
/// at most ``cancelSlice`` a turn: each slice's matches are journaled and applied as a
/// `.cancelled` entry through the one fold, so firings, pings and other requests are served
/// between slices. The reply, with every id cancelled in id order, goes out after the last
/// slice; for a request with a `requestId` the `.answered` entry is recorded then, so a retry
/// during the walk joins it and a retry after it gets the same bytes.
///
/// Like a listing, the walk is a key-ordered continuation: a reminder present from the first
/// slice to the last is cancelled if it matches; one scheduled behind the walk meanwhile is
/// not. A crash in the middle leaves the slices already journaled cancelled; the request was
/// not answered, so its retry cancels the rest.
extension CoordinatorState {
    /// Reminders examined per slice (per loop turn) at most: about 4 ms in a debug build,
    /// under 1 ms in a release build.
    static let cancelSlice = 250

    /// A cancel still walking, with the clients waiting for its reply.
    struct BulkCancel: Sendable {
        let filter: ReminderFilter
        /// The named ids, sorted and without duplicates, when the filter names ids.
        let named: [ReminderID]?
        /// Where the walk goes on: after this key (`nil`: from the start, or of a named id: from
        /// the first key of `named[namedPosition]`).
        var after: ReminderKey?
        /// The position in `named` where the walk goes on.
        var namedPosition = 0
        /// The ids cancelled so far, as the reply's JSON list.
        var cancelled = CancelReplyWriter()
        /// The ids cancelled by the first slice, when it was the only one.
        var firstSlice: [ReminderID] = []
        let requestId: String?
        var clients: [ClientAddress]
    }

    /// Starts a cancel: its first slice now; the rest in later turns (`continueBulkCancel`).
    /// - Returns: the outcome when the first slice finished the walk, else `nil` (the reply
    ///   comes when the walk ends).
    mutating func startCancel(
        _ filter: ReminderFilter, requestId: String?, from client: ClientAddress, at now: Date,
        directives: inout [CoordinatorDirective]
    ) -> ControlOutcome? {
        if let requestId, let index = bulkCancels.firstIndex(where: { $0.requestId == requestId && $0.clients.first?.tenant == client.tenant }) {
            // A retry of a cancel still walking: it gets the reply when the walk ends.
            bulkCancels[index].clients.append(client)
            return nil
        }
        var job = BulkCancel(
            filter: filter, named: filter.ids.map { Array(Set($0)).sorted() }, requestId: requestId, clients: [client])
        guard bulkCancels.isEmpty else {
            // One walk at a time, in arrival order.
            bulkCancels.append(job)
            return nil
        }
        if cancelSlice(of: &job, at: now, directives: &directives) {
            return .cancelled(CancelResult(cancelled: job.firstSlice))
        }
        bulkCancels.append(job)
        return nil
    }

    /// One slice of the oldest walking cancel, and its reply when that slice ends it.
    mutating func continueBulkCancel(at now: Date, directives: inout [CoordinatorDirective]) {
        guard var job = bulkCancels.first else { return }
        guard cancelSlice(of: &job, at: now, directives: &directives) else {
            bulkCancels[0] = job
            return
        }
        bulkCancels.removeFirst()
        let reply = job.cancelled.reply(requestId: job.requestId)
        for client in job.clients {
            answer(encoded: reply, requestId: job.requestId, about: job.filter.recipient, to: client, at: now, directives: &directives)
        }
    }

    /// Cancels the matches among the next ``cancelSlice`` reminders of `job`'s walk.
    /// - Returns: whether the walk has reached its end.
    private mutating func cancelSlice(
        of job: inout BulkCancel, at now: Date, directives: inout [CoordinatorDirective]
    ) -> Bool {
        var slice: [ReminderKey] = []
        var examined = 0
        var isFinished = true
        // Only a userInfo match needs the reminder decoded; ids and recipient are on the key.
        let isMatching = !(job.filter.match?.isEmpty ?? true)
        func matches(_ key: ReminderKey) -> Bool {
            guard let entry = entries[key] else { return false }
            if let recipient = job.filter.recipient, entry.recipient != recipient { return false }
            // A restricted key's cancel reaches its own recipients' reminders only.
            guard job.clients.first?.sees(entry.recipient) ?? true else { return false }
            return !isMatching || job.filter.matches(entry.reminder)
        }
        if let named = job.named {
            // Each named id counts (its lookup), and so does each reminder it names: an id
            // without a recipient names every recipient's reminder of that id.
            walk: while job.namedPosition < named.count {
                if examined == Self.cancelSlice {
                    isFinished = false
                    break
                }
                examined += 1
                let id = named[job.namedPosition]
                for key in durable.keys(named: [id], of: job.filter.recipient, after: job.after) {
                    if examined == Self.cancelSlice {
                        isFinished = false
                        break walk
                    }
                    examined += 1
                    job.after = key
                    if matches(key) { slice.append(key) }
                }
                job.namedPosition += 1
                job.after = nil
            }
        } else {
            // One recipient's cancel walks its run of the recipient index: O(its reminders).
            let keys = job.filter.recipient.map { AnySequence(entries.byRecipient.keys(of: $0, after: job.after)) }
                ?? AnySequence(reminderIndex.keys(after: job.after))
            for key in keys {
                if examined == Self.cancelSlice {
                    isFinished = false
                    break
                }
                examined += 1
                job.after = key
                if matches(key) { slice.append(key) }
            }
        }
        // Several entries when one would not fit a journal record; each cancels its ids.
        for run in Self.recordSizedRuns(of: slice) {
            record(.cancelled(Array(run), at: now), into: &directives)
        }
        let ids = slice.map(\.id)
        job.cancelled.append(ids)
        if isFinished && job.cancelled.count == slice.count { job.firstSlice = ids }
        return isFinished
    }
}
