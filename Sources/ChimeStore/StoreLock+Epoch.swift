import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension StoreLock {
    /// The current coordinator epoch from `<directory>/EPOCH`; 0 when the file does not
    /// exist yet.
    ///
    /// The file is one line of ASCII: `chime-epoch <format version> <epoch>`, such as
    /// `chime-epoch 1 7`, written to `EPOCH.tmp`, `fsync`ed, renamed over `EPOCH`, and the
    /// directory `fsync`ed.
    /// - Throws: `JournalError` `.unsupportedVersion` for a newer format; `.corrupt` for
    ///   an unreadable line; `.io`.
    public static func epoch(of directory: URL) throws -> UInt64 {
        try recordedEpoch(of: directory) ?? 0
    }

    /// The number in `<directory>/EPOCH`, or `nil` when the file does not exist (see
    /// `epoch(of:)` for the format).
    /// - Throws: as `epoch(of:)`.
    public static func recordedEpoch(of directory: URL) throws -> UInt64? {
        let path = epochPath(directory)
        guard try FileCalls.fileSize(atPath: path) != nil else { return nil }
        let text = String(decoding: try FileCalls.readFile(path), as: UTF8.self)
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 3, fields[0] == "chime-epoch", let version = UInt32(fields[1]) else {
            throw JournalError(.corrupt, path: path, message: "not an epoch file: \(text.prefix(80))")
        }
        guard version <= epochFormatVersion else {
            throw JournalError(
                .unsupportedVersion, path: path,
                message: "epoch file format version \(version) is newer than the supported \(epochFormatVersion)")
        }
        guard let epoch = UInt64(fields[2]) else {
            throw JournalError(.corrupt, path: path, message: "bad epoch number '\(fields[2])'")
        }
        return epoch
    }

    /// The current coordinator epoch of the locked directory (see `epoch(of:)`).
    /// - Throws: as `epoch(of:)`.
    public func currentEpoch() throws -> UInt64 { try Self.epoch(of: directory) }

    /// Adds one to the persisted coordinator epoch and returns the new value, durable
    /// before it returns. A coordinator calls it once when it takes over, and stamps the
    /// result on every dispatch.
    /// - Precondition: the lock is held.
    /// - Throws: as `epoch(of:)`, and `.io` when the file cannot be written.
    public func incrementEpoch() throws -> UInt64 {
        try advanceEpoch(above: 0)
    }

    /// Sets the persisted coordinator epoch to one more than the larger of the `EPOCH` file
    /// and `recorded` (the highest epoch the journal and snapshot hold), durable before it
    /// returns, and returns it. A missing `EPOCH` file is rebuilt from `recorded`, so the
    /// epoch never goes back.
    /// - Precondition: the lock is held.
    /// - Throws: as `epoch(of:)`; `.corrupt` when the epoch would pass `UInt64.max`; `.io`
    ///   when the file cannot be written.
    public func advanceEpoch(above recorded: UInt64) throws -> UInt64 {
        precondition(isHeld, "advanceEpoch needs the store lock")
        let path = Self.epochPath(directory)
        let (highest, overflow) = max(try currentEpoch(), recorded).addingReportingOverflow(1)
        guard !overflow else { throw JournalError(.corrupt, path: path, message: "the epoch cannot grow past \(UInt64.max)") }
        let epoch = highest
        let temporaryPath = path + ".tmp"
        let line = Array("chime-epoch \(Self.epochFormatVersion) \(epoch)\n".utf8)
        do {
            try Self.writeDurably(line, to: temporaryPath)
        } catch let error as JournalError where error.code == .noSpace {
            // Best effort: the failed temp file only takes space the journal needs.
            try? FileCalls.removeFile(temporaryPath)
            try overwriteEpochInPlace(line, path: path, after: error)
            return epoch
        }
        try FileCalls.renameFile(temporaryPath, to: path)
        try FileCalls.syncDirectory(directory.path)
        return epoch
    }

    private static func writeDurably(_ bytes: [UInt8], to path: String) throws {
        let descriptor = try FileCalls.openFile(path, O_WRONLY | O_CREAT | O_TRUNC)
        defer { FileCalls.closeFile(descriptor) }
        try bytes.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: path) }
        try FileCalls.syncFile(descriptor, path: path)
    }

    /// On a full disk: rewrites the existing `EPOCH` file in place (one `pwrite` of a few
    /// dozen bytes at offset 0 into a block the file already has, which needs no new space on
    /// ext4, xfs or tmpfs), so a coordinator can start on a full store and its epoch still
    /// grows. A line that short never spans two sectors, so it is not torn.
    /// - Throws: `noSpaceError` when there is no `EPOCH` file to overwrite; `.noSpace` or
    ///   `.io` when the overwrite fails too.
    private func overwriteEpochInPlace(_ line: [UInt8], path: String, after noSpaceError: JournalError) throws {
        guard try FileCalls.fileSize(atPath: path) != nil else { throw noSpaceError }
        let descriptor = try FileCalls.openFile(path, O_WRONLY)
        defer { FileCalls.closeFile(descriptor) }
        try line.withUnsafeBytes { bytes in
            try FileCalls.retrying("pwrite", path) { pwrite(descriptor, bytes.baseAddress, bytes.count, 0) < 0 ? -1 : 0 }
        }
        try FileCalls.truncateFile(descriptor, to: line.count, path: path)
        try FileCalls.syncFile(descriptor, path: path)
    }

    /// The format version of the `EPOCH` file this code writes and reads.
    public static let epochFormatVersion: UInt32 = 1

    static func epochPath(_ directory: URL) -> String { directory.appendingPathComponent("EPOCH").path }
}
