import ChimeJournal
import ChimeStore
import ChimeCommandLine
import Foundation

/// `chime store verify|repair DIR`: checks and salvages a store directory without a cluster.
enum StoreCommand: Command {
    /// Exit status of `verify` when a start would refuse the store.
    static let corruptStatus: Int32 = 3
    /// Exit status of `verify` when the store is damaged in a way a start repairs by itself.
    static let recoverableStatus: Int32 = 4
    /// Exit status of `verify` and `repair` when records written whole (acknowledged data)
    /// are damaged, or were dropped by the repair: the lost ids are printed.
    static let acknowledgedDataLostStatus: Int32 = 5

    static let spec = CommandSpec(
        name: "store",
        summary: "Verify or repair a coordinator's store directory (no cluster needed).",
        usage: "chime store verify DIR [--json]\n       chime store repair DIR [--json]",
        options: [OptionSpec(name: "json", value: nil, help: "Print one JSON object.")],
        details: """
            verify  read-only: checks snapshots, segments, every record's checksum and entry,
                    and names what a repair would drop: the lost sequence numbers and every
                    reminder, firing, recipient and request id the damaged records still show.
                    Exit 0 clean; 4 damaged in a way a start handles by itself and nothing
                    acknowledged lost (a torn journal tail, a damaged snapshot); 5 records
                    written whole are damaged: acknowledged data is lost (a start refuses);
                    3 a start refuses for another reason (a missing segment, a newer format,
                    an entry that does not decode); 1 the directory cannot be read. A store
                    whose lock is held says "in use by pid N" after its verdict (JSON: "inUse",
                    "pid"): a running coordinator may write past what was read.
            repair  takes the store lock (stop the coordinator first), keeps a copy of each
                    damaged segment beside it (<segment>.damaged-<UTC time>), rewrites it
                    with every valid record and a gap record for lost sequence numbers (a
                    request's records that the damage cut keep their survivors; an
                    incomplete last request before a torn tail goes with it), and
                    prints what was dropped, by id. Exit 5 when it dropped records written
                    whole (acknowledged data lost: the ids are printed), else 0 when the
                    store verifies clean afterwards, else verify's status.
            """)

    static func run(_ arguments: Arguments) throws -> Int32 {
        guard arguments.positionals.count == 2, let action = arguments.positionals.first,
            ["verify", "repair"].contains(action)
        else {
            throw UsageError("give 'verify DIR' or 'repair DIR'")
        }
        let directory = URL(fileURLWithPath: arguments.positionals[1]).standardizedFileURL
        let json = arguments.has("json")
        if action == "verify" {
            // Asked first: a store in use may change while it is read, which the verdict cannot say.
            let inUse = try StoreLock.isHeld(directory: directory)
            let holder = inUse ? StoreLock.recordedHolder(of: directory) : nil
            let result = try FileStore.verify(directory: directory)
            if json {
                var document = object(result)
                document["inUse"] = inUse
                if let holder { document["pid"] = Int(holder) }
                output(jsonLine(document))
            } else {
                output(describe(result, inUseBy: inUse ? .some(holder) : nil))
            }
            return status(result)
        }
        let report = try FileStore.repair(directory: directory)
        output(json ? jsonLine(object(report)) : describe(report))
        if report.loss.isAcknowledgedDataLost && report.after.verdict == .clean { return acknowledgedDataLostStatus }
        return status(report.after)
    }

    static func status(_ result: StoreVerification) -> Int32 {
        switch result.verdict {
        case .clean: 0
        case .recoverable: result.loss?.isAcknowledgedDataLost == true ? acknowledgedDataLostStatus : recoverableStatus
        case .corrupt: result.loss?.isAcknowledgedDataLost == true ? acknowledgedDataLostStatus : corruptStatus
        }
    }

    /// The lines of `verify`; `inUseBy` is `nil` for a store nobody holds, else the pid its
    /// `LOCK` names (`.some(nil)` when it names none).
    static func describe(_ result: StoreVerification, inUseBy holder: Int32?? = nil) -> String {
        var first = "store \(result.directory): \(result.verdict.rawValue)"
        if let holder {
            first += " (in use\(holder.map { " by pid \($0)" } ?? ""): a running coordinator may write past what was read)"
        }
        var lines = [first]
        var journal = "journal: \(result.segmentCount) segments, \(result.recordsChecked) records checked, last sequence \(result.lastSequence)"
        if result.gapRecords > 0 { journal += ", \(result.gapRecords) gaps left by a repair" }
        lines.append(journal)
        lines.append("snapshot: " + (result.snapshotSequence.map { "newest valid covers sequence \($0)" } ?? "none"))
        lines.append("epoch: file \(result.epochFile.map(String.init) ?? "missing"), journal \(result.highestJournalEpoch.map(String.init) ?? "none")")
        for skipped in result.damagedSnapshots { lines.append("damaged snapshot (a start sets it aside): \(skipped.path): \(skipped.reason)") }
        if let tail = result.tornTail {
            var line = "torn tail (a start truncates it): \(tail.bytesDiscarded) bytes at offset \(tail.offset) of \(tail.segmentPath) (\(tail.reason))"
            if tail.incompleteGroupRecords > 0 {
                line += ", with \(tail.incompleteGroupRecords) whole records of an incomplete group (never replayed)"
            }
            lines.append(line)
        }
        if let corruption = result.corruption {
            lines.append("corruption: \(corruption)")
            lines.append("a start refuses this store; 'chime store repair \(result.directory)' keeps a copy of each damaged segment and salvages every valid record")
        } else if let refusal = result.refusal {
            lines.append("a start refuses this store: \(refusal)")
        }
        if let loss = result.loss { lines += loss.lines.map { "a repair would drop: \($0)" } }
        return lines.joined(separator: "\n")
    }

    static func describe(_ report: StoreRepairReport) -> String {
        var lines: [String] = []
        if report.segments.isEmpty { lines.append("nothing to repair in \(report.directory)") }
        for segment in report.segments {
            lines.append("repaired \(segment.path): kept \(segment.recordsKept) records, \(segment.bytesBefore) -> \(segment.bytesAfter) bytes; copy of the original: \(segment.copyPath)")
            for range in segment.dropped { lines.append("  dropped \(range)") }
            if segment.gapRecordsWritten > 0 {
                lines.append("  \(segment.sequencesLost) sequence numbers lost (\(segment.gapRecordsWritten) gap records written)")
            }
            if segment.groupsClosed > 0 {
                lines.append("  \(segment.groupsClosed) groups of records cut by the damage: their surviving records kept, the last one ending the group")
            }
        }
        if !report.segments.isEmpty { lines.append("dropped \(report.bytesDropped) bytes in all") }
        lines += report.loss.lines
        lines.append(describe(report.after))
        return lines.joined(separator: "\n")
    }

    static func object(_ result: StoreVerification) -> [String: Any] {
        var object: [String: Any] = [
            "directory": result.directory, "verdict": result.verdict.rawValue, "segments": result.segmentCount,
            "recordsChecked": result.recordsChecked, "lastSequence": result.lastSequence, "gapRecords": result.gapRecords,
            "damagedSnapshots": result.damagedSnapshots.map { ["path": $0.path, "reason": $0.reason] },
        ]
        if let sequence = result.snapshotSequence { object["snapshotSequence"] = sequence }
        if let epoch = result.epochFile { object["epochFile"] = epoch }
        if let epoch = result.highestJournalEpoch { object["journalEpoch"] = epoch }
        if let tail = result.tornTail {
            object["tornTail"] = [
                "segment": tail.segmentPath, "offset": tail.offset, "bytes": tail.bytesDiscarded, "reason": tail.reason.rawValue,
                "incompleteGroupRecords": tail.incompleteGroupRecords,
            ]
        }
        if let corruption = result.corruption {
            var damage: [String: Any] = [
                "segment": corruption.segmentPath, "offset": corruption.offset, "reason": corruption.reason.rawValue,
                "validRecordsAfter": corruption.validRecordsAfter, "laterSegments": corruption.laterSegmentPaths,
            ]
            if let next = corruption.nextValidOffset { damage["nextValidOffset"] = next }
            object["corruption"] = damage
        }
        if let refusal = result.refusal { object["refusal"] = ["code": refusal.code.rawValue, "message": refusal.message] }
        if let loss = result.loss { object["loss"] = Self.object(loss) }
        return object
    }

    static func object(_ loss: JournalLoss) -> [String: Any] {
        var object: [String: Any] = [
            "acknowledgedDataLost": loss.isAcknowledgedDataLost, "writtenBytes": loss.writtenBytes,
            "tornTailBytes": loss.tornTailBytes,
            "sequences": loss.sequences.map { [$0.lowerBound, $0.upperBound - 1] },
            "exactRecords": loss.exactRecords, "possiblyAlteredRecords": loss.possiblyAlteredRecords,
            "unreadableRecords": loss.unreadableRecords,
        ]
        for kind in JournalSubjects.Kind.all { object[kind.name] = loss.subjects[kind.name].sorted() }
        return object
    }

    static func object(_ report: StoreRepairReport) -> [String: Any] {
        [
            "directory": report.directory, "bytesDropped": report.bytesDropped, "recordsKept": report.recordsKept,
            "segments": report.segments.map { segment -> [String: Any] in
                [
                    "path": segment.path, "copy": segment.copyPath, "recordsKept": segment.recordsKept,
                    "gapRecords": segment.gapRecordsWritten, "sequencesLost": segment.sequencesLost,
                    "groupsClosed": segment.groupsClosed,
                    "bytesBefore": segment.bytesBefore, "bytesAfter": segment.bytesAfter,
                    "dropped": segment.dropped.map { ["offset": $0.offset, "bytes": $0.bytes, "reason": $0.reason] },
                ]
            },
            "after": object(report.after), "loss": object(report.loss),
        ]
    }
}
