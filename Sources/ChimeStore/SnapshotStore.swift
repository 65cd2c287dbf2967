import ChimeCore
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

    /// Writes `payload` as the snapshot covering the journal through `sequence` (see
    /// ``write(payloadLength:coveringThrough:payload:)``).
    /// - Returns: the new file.
    /// - Throws: `JournalError` `.io`; the temp file is then removed when possible.
    @discardableResult
    public func write(_ payload: Data, coveringThrough sequence: UInt64) throws -> File {
        try write(payloadLength: payload.count, coveringThrough: sequence) { sink in
            payload.withUnsafeBytes { sink.writeBytes($0) }
        }
    }

    /// Writes the snapshot covering the journal through `sequence`, its payload streamed by
    /// `payload` into a ``SnapshotPayloadSink`` that writes 1 MiB chunks as they fill, so a
    /// payload of any size costs the writer one chunk of memory: temp file (header with the
    /// CRC left zero, payload, then the header again with its CRC), `fsync`, rename,
    /// directory `fsync`. An existing snapshot of the same sequence is replaced.
    /// - Parameters:
    ///   - payloadLength: the exact number of bytes `payload` writes, in the header before
    ///     the payload is written (count them first with a `ByteCounter`).
    ///   - sequence: the journal sequence number the payload reflects every entry through.
    ///   - beforeRename: called once the file is written and synced, before it is renamed into
    ///     place; an error it throws abandons the file (e.g. `StoreLock.verifyOwnership`).
    /// - Throws: `JournalError` `.io` (also when `payload` writes other than
    ///   `payloadLength` bytes); what `beforeRename` throws; the temp file is then removed
    ///   when possible.
    /// - Returns: the new file.
    @discardableResult
    public func write(
        payloadLength: Int, coveringThrough sequence: UInt64, beforeRename: (() throws -> Void)? = nil,
        payload: (inout SnapshotPayloadSink) -> Void
    ) throws -> File {
        if !FileCalls.isDirectory(directory.path) {
            try FileCalls.makeDirectory(directory.path)
            try FileCalls.syncDirectory(directory.deletingLastPathComponent().path)
        }
        let path = "\(directory.path)/\(Self.fileName(sequence: sequence))"
        let temporaryPath = path + ".tmp"
        var header = Self.makeHeader(sequence: sequence, payloadLength: payloadLength)
        let descriptor = try FileCalls.openFile(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC)
        // Closed exactly once: another thread may reuse the number as soon as it is closed.
        var isOpen = true
        do {
            try header.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: temporaryPath) }
            var crc = CRC32C()
            crc.update(header[0..<12])
            crc.update(header[16..<32])
            var sink = SnapshotPayloadSink(descriptor: descriptor, path: temporaryPath, crc: crc)
            payload(&sink)
            try sink.finish()
            guard sink.written == payloadLength else {
                throw JournalError(
                    .io, path: temporaryPath,
                    message: "the snapshot payload was \(sink.written) bytes, not the \(payloadLength) announced")
            }
            header.replaceSubrange(12..<16, with: withUnsafeBytes(of: sink.crc.value.littleEndian) { Array($0) })
            try header.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, at: 0, path: temporaryPath) }
            try FileCalls.syncFile(descriptor, path: temporaryPath)
            FileCalls.closeFile(descriptor)
            isOpen = false
            try beforeRename?()
            try FileCalls.renameFile(temporaryPath, to: path)
        } catch {
            if isOpen { FileCalls.closeFile(descriptor) }
            // Best effort: the write already failed, and a leftover .tmp is never read.
            try? FileCalls.removeFile(temporaryPath)
            throw error
        }
        try FileCalls.syncDirectory(directory.path)
        return File(sequence: sequence, path: path, size: header.count + payloadLength)
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

    /// The store's retention: deletes all but the newest `count` snapshot files.
    /// - Returns: the files kept, oldest first.
    /// - Throws: `JournalError` `.io`.
    public func retainNewest(_ count: Int) throws -> [File] {
        try removeAll(keepingNewest: count)
        return try list()
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

    /// The header of a snapshot whose payload is `payloadLength` bytes, its CRC field zero
    /// (``write(payloadLength:coveringThrough:payload:)`` fills it in).
    static func makeHeader(sequence: UInt64, payloadLength: Int) -> [UInt8] {
        var header = magic
        header.appendLittleEndian(formatVersion)
        header.appendLittleEndian(UInt32(0))
        header.appendLittleEndian(sequence)
        header.appendLittleEndian(UInt64(payloadLength))
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

/// Where ``SnapshotStore/write(payloadLength:coveringThrough:payload:)`` streams a payload:
/// bytes gather in a 1 MiB buffer written to the temp file when full, the CRC-32C kept as
/// they go. A write error is kept and reported by the store once the payload is written.
public struct SnapshotPayloadSink: BinarySink {
    /// `true`: the bytes are kept (written to the file).
    public static var keepsBytes: Bool { true }
    /// The buffer's size, in bytes.
    static let chunkSize = 1 << 20

    let descriptor: Int32
    let path: String
    var crc: CRC32C
    private var buffer: [UInt8] = []
    private(set) var written = 0
    private var failure: (any Error)?

    init(descriptor: Int32, path: String, crc: CRC32C) {
        self.descriptor = descriptor
        self.path = path
        self.crc = crc
        buffer.reserveCapacity(Self.chunkSize)
    }

    /// Appends one byte.
    public mutating func writeByte(_ byte: UInt8) {
        buffer.append(byte)
        flushIfFull()
    }

    /// Appends unsigned LEB128, shortest form.
    public mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        buffer.append(UInt8(truncatingIfNeeded: rest))
        flushIfFull()
    }

    /// Appends eight bytes, little-endian.
    public mutating func writeFixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
        flushIfFull()
    }

    /// Appends the UTF-8 bytes of `text`, without a length.
    public mutating func writeUTF8(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        flushIfFull()
    }

    /// Appends raw bytes, without a length.
    public mutating func writeBytes(_ raw: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: raw)
        flushIfFull()
    }

    private mutating func flushIfFull() {
        if buffer.count >= Self.chunkSize { flush() }
    }

    private mutating func flush() {
        guard !buffer.isEmpty else { return }
        written += buffer.count
        crc.update(buffer)
        if failure == nil {
            do {
                try buffer.withUnsafeBytes { try FileCalls.writeAll(descriptor, $0, path: path) }
            } catch {
                failure = error
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered.
    /// - Throws: the first write error.
    mutating func finish() throws {
        flush()
        if let failure { throw failure }
    }
}
