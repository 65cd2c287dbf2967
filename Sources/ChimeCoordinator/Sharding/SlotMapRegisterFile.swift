import ChimeCore
import ChimeJournal
import ChimeWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The map register of a deployment without Kubernetes: a JSON file (``SlotMapRecord``'s
/// Codable form) beside the cluster configuration, changed only by compare-and-swap.
///
/// A write takes an exclusive `flock` on `<path>.lock`, reads the file, compares its version
/// with the one the writer read, writes `<path>.tmp-<pid>`, fsyncs it, renames it over the
/// file and fsyncs the directory, then unlocks: two writers (two movers, a mover and an
/// operator) serialize on the lock and exactly one of two writes naming the same version wins.
/// Readers take no lock (a rename is atomic). Every process that reads the file (the
/// coordinators poll it, the CLI reads it for clients) sees a complete record.
public struct SlotMapRegisterFile: Sendable {
    /// The register file's path.
    public let path: String

    /// The largest register file read, in bytes (16 MiB).
    public static let maximumBytes = 16 << 20

    /// The register at `path` (nothing is read or created yet).
    public init(path: String) { self.path = path }

    /// The record in the file, `nil` when there is no file.
    /// - Throws: `WireError(.invalidArgument)` for a file that cannot be read or does not
    ///   decode to a valid record (`SlotMapRecord.validate()`).
    public func read() throws(WireError) -> SlotMapRecord? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // Bounded before it is read: a map of 4,096 slots over 64 shards with every move's
        // outcome is a few hundred KiB; anything past this is not a register.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size, size <= Self.maximumBytes else {
            throw WireError(.invalidArgument, "the map register \(path) is over \(Self.maximumBytes) bytes (or its size cannot be read)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw WireError(.invalidArgument, "cannot read the map register \(path): \(error.localizedDescription)")
        }
        return try Self.decode(data, path: path)
    }

    /// Decodes a register file's bytes (total: any bytes decode to a valid record or throw).
    /// - Throws: `WireError(.invalidArgument)` naming `path` and the problem.
    public static func decode(_ data: Data, path: String = "the map register") throws(WireError) -> SlotMapRecord {
        do {
            return try JSONDecoder().decode(SlotMapRecord.self, from: data)
        } catch let error as WireError {
            throw WireError(.invalidArgument, "\(path): \(error.message)", field: error.field)
        } catch {
            throw WireError(.invalidArgument, "\(path) does not decode as a map register: \(error)")
        }
    }

    /// The file's bytes for `record`.
    public static func encode(_ record: SlotMapRecord) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return (try? encoder.encode(record)) ?? Data()
    }

    /// A cheap stamp of the file (its size, modification time and inode), to poll without
    /// decoding: a changed stamp means a write happened. `nil` when there is no file.
    public func stamp() -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
    }

    /// Creates the file holding `map` at version 1 unless one exists; returns the file's record.
    /// - Throws: `WireError(.invalidArgument)` as ``read()``, or when the file cannot be written.
    @discardableResult
    public func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord {
        let fresh = SlotMapRecord(map: map)
        _ = try write { current in current == nil ? fresh : nil }
        guard let record = try read() else { throw WireError(.invalidArgument, "the map register \(path) vanished") }
        return record
    }

    /// Replaces the record with `new` (at `expectedVersion + 1`) if the file is still at
    /// `expectedVersion`.
    /// - Returns: whether the write won (`false`: another writer changed the file first, or
    ///   there is no file).
    /// - Throws: `WireError(.invalidArgument)` when the file cannot be locked, read or written.
    @discardableResult
    public func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool {
        try write { current in
            guard let current, current.version == expectedVersion else { return nil }
            var next = new
            next.version = expectedVersion &+ 1
            return next
        }
    }

    /// Under the lock: reads the current record, asks `decide` for the next (`nil`: write
    /// nothing) and writes it durably.
    private func write(_ decide: (SlotMapRecord?) -> SlotMapRecord?) throws(WireError) -> Bool {
        let lock = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lock >= 0 else { throw failure("cannot open \(path).lock") }
        defer { close(lock) }
        guard flock(lock, LOCK_EX) == 0 else { throw failure("cannot lock \(path).lock") }
        defer { flock(lock, LOCK_UN) }
        guard let next = decide(try read()) else { return false }
        let bytes = [UInt8](Self.encode(next))
        let temporary = "\(path).tmp-\(getpid())"
        let file = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
            guard count > 0 else {
                close(file)
                unlink(temporary)
                throw failure("cannot write \(temporary)")
            }
            written += count
        }
        let synced = fsync(file) == 0
        close(file)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot replace \(path)")
        }
        let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return true
    }

    private func failure(_ what: String) -> WireError {
        WireError(.invalidArgument, "\(what): \(String(cString: strerror(errno)))")
    }
}
