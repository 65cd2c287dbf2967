import Foundation

/// A failure of the file store: the journal, a snapshot, the lock or the epoch file.
///
/// Two errors are equal when their codes are equal, so callers can match with
/// `#expect(throws: JournalError(.locked))` or compare `error.code`; the path, offset and
/// message are context. New codes may be added without breaking callers.
public struct JournalError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable name (`"io"`, `"corrupt"`, …).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code.
        public var rawValue: String

        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A system call failed (the message names the call and its `errno`), or the
        /// journal is unusable after an earlier write or fsync failure.
        public static let io = Code(rawValue: "io")
        /// Stored bytes failed a check in a place where they cannot simply be discarded as
        /// a torn tail: damage before the end of the journal, a gap between segments, a
        /// journal that does not reach back to the newest valid snapshot.
        public static let corrupt = Code(rawValue: "corrupt")
        /// A file was written by a newer format version than this code reads; nothing was
        /// changed on disk.
        public static let unsupportedVersion = Code(rawValue: "unsupported_version")
        /// Another open file description holds the store's `LOCK` (another coordinator,
        /// or another open in this process).
        public static let locked = Code(rawValue: "locked")
        /// A checksummed record holds an entry kind this version does not know (written by
        /// a newer version); nothing was changed on disk.
        public static let unknownEntryKind = Code(rawValue: "unknown_entry_kind")
        /// A checksummed record of a known kind could not be decoded.
        public static let undecodableEntry = Code(rawValue: "undecodable_entry")
        /// An entry's encoded payload exceeds `RecordFraming.maximumPayloadLength`, or it
        /// could not be encoded at all.
        public static let invalidEntry = Code(rawValue: "invalid_entry")
        /// The journal or store was closed.
        public static let closed = Code(rawValue: "closed")
        /// The store's `LOCK` path no longer names the file this holder locked (deleted or
        /// replaced), so another coordinator may lock the new one: the holder stops writing.
        public static let lockLost = Code(rawValue: "lock_lost")
        /// A write or file creation failed with `ENOSPC` or `EDQUOT`. The journal keeps what
        /// it had buffered and stays usable: `FileJournal.sync` can be called again once
        /// there is space (an `fsync` that fails this way is `.io`, never this).
        public static let noSpace = Code(rawValue: "no_space")
        /// The journal's last segment was truncated, replaced or deleted by someone else
        /// while this process appended to it (`FileJournal.verifyTailUnchanged()`).
        public static let journalChanged = Code(rawValue: "journal_changed")

        /// The stable name.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The file or directory involved, when there is one.
    public var path: String?
    /// The byte offset in `path` where the problem was found, when it is known.
    public var offset: UInt64?
    /// A sentence for operators, such as "fdatasync failed: Input/output error (errno 5)".
    public var message: String
    /// For `.corrupt` damage inside the journal: where it is and how many valid records
    /// follow it (`nil` for the other `.corrupt` cases, such as a missing segment).
    public var corruption: JournalCorruption?

    /// Creates an error.
    public init(
        _ code: Code, path: String? = nil, offset: UInt64? = nil, message: String = "",
        corruption: JournalCorruption? = nil
    ) {
        self.code = code
        self.path = path
        self.offset = offset
        self.message = message
        self.corruption = corruption
    }

    /// Compares codes only; the path, offset and message are context.
    public static func == (lhs: JournalError, rhs: JournalError) -> Bool {
        lhs.code == rhs.code
    }

    /// The code, path, offset and message, such as
    /// "corrupt: /var/lib/chime/journal/00000000000000000001.log at offset 4096: …".
    public var description: String {
        var subject = "\(code)"
        if let path { subject += ": \(path)" }
        if let offset { subject += " at offset \(offset)" }
        return message.isEmpty ? subject : "\(subject): \(message)"
    }
}
