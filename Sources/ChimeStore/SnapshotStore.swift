import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `snapshot/` directory: whole-state snapshots, each covering the journal through a
/// sequence number.
///
/// A snapshot is the file `snapshot/<sequence, 20 digits>.snap`, all integers
/// little-endian:
///
/// | Offset | Size | Field |
/// |-------:|-----:|-------|
/// | 0      | 8    | magic, ASCII `CHIMESNP` |
/// | 8      | 4    | format version, UInt32, currently `1` |
/// | 12     | 4    | CRC-32C of bytes 0..<12, then bytes 16..<32, then the payload |
/// | 16     | 8    | sequence number covered through, UInt64 (equals the file name) |
/// | 24     | 8    | payload length *n* in bytes, UInt64 (the file is 32 + *n* bytes) |
/// | 32     | *n*  | payload, opaque to the store (the coordinator's encoded state) |
///
/// It is written as `<name>.snap.tmp`, `fsync`ed, renamed to `<name>.snap`, and the
/// directory `fsync`ed, so a crash leaves either the whole snapshot or none (a leftover
/// `.tmp` is ignored and removed by `FileStore.open`).
public struct SnapshotStore: Sendable {
    /// One snapshot file (valid or not).
    public struct File: Hashable, Sendable {
        /// The sequence number in the file name.
        public var sequence: UInt64
        /// The file's path.
        public var path: String
        /// The file's size in bytes.
        public var size: Int
    }

    /// The snapshot format version this code writes and reads.
    public static let formatVersion: UInt32 = 1
    /// The size of a snapshot header, in bytes.
    public static let headerLength = 32
    static let magic = Array("CHIMESNP".utf8)

    /// The `snapshot/` directory.
    public let directory: URL

    /// A store over `directory`; nothing is created before the first `write`.
    public init(directory: URL) { self.directory = directory }

    /// The file name of the snapshot covering through `sequence`, such as
    /// `00000000000000004096.snap`.
    public static func fileName(sequence: UInt64) -> String {
        String(RecordFraming.segmentFileName(firstSequence: sequence).dropLast(4)) + ".snap"
    }

    /// The snapshot files, oldest (lowest sequence) first.
    /// - Throws: `JournalError` `.io` when the directory cannot be read.
    public func list() throws -> [File] {
        try FileCalls.listDirectory(directory.path).compactMap { name -> File? in
            guard name.utf8.count == 25, name.hasSuffix(".snap"),
                let sequence = RecordFraming.firstSequence(ofSegmentFileName: name.dropLast(5) + ".log")
            else { return nil }
            let path = "\(directory.path)/\(name)"
            return File(sequence: sequence, path: path, size: try FileCalls.fileSize(atPath: path) ?? 0)
        }
        .sorted { $0.sequence < $1.sequence }
    }

    /// Writes `payload` as the snapshot covering the journal through `sequence`: temp
    /// file, `fsync`, rename, directory `fsync`. An existing snapshot of the same sequence
    /// is replaced.
    /// - Returns: the new file.
    /// - Throws: `JournalError` `.io`; the temp file is then removed when possible.
    @discardableResult
    public func write(_ payload: Data, coveringThrough sequence: UInt64) throws -> File {
        if !FileCalls.isDirectory(directory.path) {
            try FileCalls.makeDirectory(directory.path)
            try FileCalls.syncDirectory(directory.deletingLastPathComponent().path)
        }
        let path = "\(directory.path)/\(Self.fileName(sequence: sequence))"
        let temporaryPath = path + ".tmp"
        let header = Self.makeHeader(sequence: sequence, payload: payload)
        let descriptor = try FileCalls.openFile(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try header.withUnsafeBytes { header in
                try payload.withUnsafeBytes { payload in
                    try FileCalls.writeAll(descriptor, [header, payload], path: temporaryPath)
                }
            }
            try FileCalls.syncFile(descriptor, path: temporaryPath)
            FileCalls.closeFile(descriptor)
            try FileCalls.renameFile(temporaryPath, to: path)
        } catch {
            FileCalls.closeFile(descriptor)
            // Best effort: the write already failed, and a leftover .tmp is never read.
            try? FileCalls.removeFile(temporaryPath)
            throw error
        }
        try FileCalls.syncDirectory(directory.path)
        return File(sequence: sequence, path: path, size: header.count + payload.count)
    }

    /// The newest snapshot whose header and checksum verify, trying older ones when newer
    /// ones are damaged; reads only, changes nothing.
    /// - Returns: the snapshot (`nil` when none is valid or there is none) and the damaged
    ///   ones skipped on the way, newest first.
    /// - Throws: `JournalError` `.unsupportedVersion` when any snapshot has a format
    ///   version newer than this code reads (checked before anything else); `.io`.
    public func loadNewestValid() throws -> (snapshot: Snapshot?, skipped: [SkippedSnapshot]) {
        let files = try list()
        for file in files { try checkVersionIsSupported(file) }
        var skipped: [SkippedSnapshot] = []
        for file in files.reversed() {
            switch try load(file) {
            case .success(let snapshot): return (snapshot, skipped)
            case .failure(let problem): skipped.append(problem)
            }
        }
        return (nil, skipped)
    }

    /// Deletes all but the newest `count` snapshot files.
    /// - Returns: the deleted files.
    /// - Throws: `JournalError` `.io`.
    @discardableResult
    public func removeAll(keepingNewest count: Int) throws -> [File] {
        let removed = Array(try list().dropLast(count))
        for file in removed { try FileCalls.removeFile(file.path) }
        if !removed.isEmpty { try FileCalls.syncDirectory(directory.path) }
        return removed
    }

    /// Renames a damaged snapshot to `<name>.snap.corrupt`, keeping it for inspection but
    /// out of every later load and of the retention count.
    /// - Returns: the new path.
    /// - Throws: `JournalError` `.io`.
    @discardableResult
    public func quarantine(_ skipped: SkippedSnapshot) throws -> String {
        let newPath = skipped.path + ".corrupt"
        try FileCalls.renameFile(skipped.path, to: newPath)
        try FileCalls.syncDirectory(directory.path)
        return newPath
    }

    /// Deletes `*.snap.tmp` files left by a crash during `write`.
    /// - Returns: how many were deleted.
    /// - Throws: `JournalError` `.io`.
    @discardableResult
    public func removeTemporaryFiles() throws -> Int {
        let names = try FileCalls.listDirectory(directory.path).filter { $0.hasSuffix(".snap.tmp") }
        for name in names { try FileCalls.removeFile("\(directory.path)/\(name)") }
        return names.count
    }

    static func makeHeader(sequence: UInt64, payload: Data) -> [UInt8] {
        var header = magic
        header.appendLittleEndian(formatVersion)
        header.appendLittleEndian(UInt32(0))
        header.appendLittleEndian(sequence)
        header.appendLittleEndian(UInt64(payload.count))
        var crc = CRC32C()
        crc.update(header[0..<12])
        crc.update(header[16..<32])
        payload.withUnsafeBytes { crc.update($0) }
        header.replaceSubrange(12..<16, with: withUnsafeBytes(of: crc.value.littleEndian) { Array($0) })
        return header
    }

    private func checkVersionIsSupported(_ file: File) throws {
        let descriptor = try FileCalls.openFile(file.path, O_RDONLY)
        defer { FileCalls.closeFile(descriptor) }
        var prefix = [UInt8](repeating: 0, count: 12)
        let count = try prefix.withUnsafeMutableBytes {
            try FileCalls.readAll(descriptor, into: $0, at: 0, path: file.path)
        }
        guard count == 12, prefix.starts(with: Self.magic) else { return }
        let version = prefix.loadLittleEndian(UInt32.self, at: 8)
        if version > Self.formatVersion {
            throw JournalError(
                .unsupportedVersion, path: file.path,
                message:
                    "snapshot format version \(version) is newer than the supported \(Self.formatVersion); nothing was changed"
            )
        }
    }

    private func load(_ file: File) throws -> Result<Snapshot, SkippedSnapshot> {
        func damaged(_ reason: String) -> Result<Snapshot, SkippedSnapshot> {
            .failure(SkippedSnapshot(path: file.path, sequence: file.sequence, reason: reason))
        }
        let descriptor = try FileCalls.openFile(file.path, O_RDONLY)
        defer { FileCalls.closeFile(descriptor) }
        let size = try FileCalls.fileSize(descriptor, path: file.path)
        var header = [UInt8](repeating: 0, count: Self.headerLength)
        let headerCount = try header.withUnsafeMutableBytes {
            try FileCalls.readAll(descriptor, into: $0, at: 0, path: file.path)
        }
        guard headerCount == Self.headerLength else { return damaged("truncated header (\(size) bytes)") }
        guard header.starts(with: Self.magic) else { return damaged("bad magic") }
        guard header.loadLittleEndian(UInt32.self, at: 8) == Self.formatVersion else {
            return damaged("bad format version")
        }
        let sequence = header.loadLittleEndian(UInt64.self, at: 16)
        guard sequence == file.sequence else {
            return damaged("header sequence \(sequence) differs from the file name")
        }
        let length = header.loadLittleEndian(UInt64.self, at: 24)
        guard length == UInt64(size - Self.headerLength) else {
            return damaged("payload length \(length) but the file holds \(size - Self.headerLength) bytes")
        }
        var payload = Data(count: Int(length))
        let payloadCount = try payload.withUnsafeMutableBytes {
            try FileCalls.readAll(descriptor, into: $0, at: Self.headerLength, path: file.path)
        }
        guard payloadCount == Int(length) else { return damaged("file shrank while being read") }
        var crc = CRC32C()
        crc.update(header[0..<12])
        crc.update(header[16..<32])
        payload.withUnsafeBytes { crc.update($0) }
        guard crc.value == header.loadLittleEndian(UInt32.self, at: 12) else { return damaged("checksum mismatch") }
        return .success(Snapshot(sequence: sequence, payload: payload, path: file.path))
    }
}

/// A snapshot that verified: the store's state as of a journal sequence number.
public struct Snapshot: Sendable {
    /// The journal sequence number the snapshot covers through.
    public var sequence: UInt64
    /// The opaque payload (the coordinator's encoded state).
    public var payload: Data
    /// The file it was read from.
    public var path: String

    /// Creates a snapshot value.
    public init(sequence: UInt64, payload: Data, path: String) {
        self.sequence = sequence
        self.payload = payload
        self.path = path
    }
}

/// A damaged snapshot that loading skipped.
public struct SkippedSnapshot: Error, Hashable, Sendable, CustomStringConvertible {
    /// The damaged file.
    public var path: String
    /// The sequence number in its name.
    public var sequence: UInt64
    /// What check failed, such as "checksum mismatch".
    public var reason: String

    /// Creates a report of a skipped snapshot.
    public init(path: String, sequence: UInt64, reason: String) {
        self.path = path
        self.sequence = sequence
        self.reason = reason
    }

    /// Such as "skipped snapshot …/00000000000000000600.snap: checksum mismatch".
    public var description: String { "skipped snapshot \(path): \(reason)" }
}
