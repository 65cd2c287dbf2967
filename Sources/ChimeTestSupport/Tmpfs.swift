import Foundation

/// A small tmpfs mounted for one test, to run out of disk space on purpose (needs root:
/// `mount -t tmpfs -o size=1m tmpfs DIR`); unmounted (lazily) when the value goes.
public final class Tmpfs: Sendable {
    /// The mount point.
    public let path: String

    /// Mounts a tmpfs of `size` (`mount`'s units: `64k`, `1m`) at `path`, created when missing.
    /// - Throws: `TmpfsUnavailable` (with `mount`'s words) when it cannot be mounted here
    ///   (not root, no tmpfs); file-system errors.
    public init(at path: String, size: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (status, _, error) = try LocalCluster.run(
            binary: URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path], timeout: 10)
        guard status == 0 else { throw TmpfsUnavailable(reason: "mount -t tmpfs failed (\(status)): \(error)") }
        self.path = path
    }

    /// Fills what space is left with the file `name`, 4 KiB at a time, until a write fails.
    /// - Returns: the bytes written.
    /// - Throws: `CocoaError` when the file cannot be created.
    @discardableResult
    public func fill(with name: String) throws -> Int {
        let path = "\(self.path)/\(name)"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw CocoaError(.fileWriteOutOfSpace) }
        defer { try? handle.close() }
        let chunk = Data(repeating: 0x55, count: 4096)
        var written = 0
        while (try? handle.write(contentsOf: chunk)) != nil { written += chunk.count }
        return written
    }

    /// Changes the size in place (the files stay): space returns.
    /// - Throws: `TmpfsUnavailable` when `mount -o remount` fails.
    public func resize(to size: String) throws {
        let (status, _, error) = try LocalCluster.run(
            binary: URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,size=\(size)", path], timeout: 10)
        guard status == 0 else { throw TmpfsUnavailable(reason: "remount failed (\(status)): \(error)") }
    }

    deinit {
        // Best effort: a lazy unmount detaches at once even if a file is still open.
        _ = try? LocalCluster.run(binary: URL(fileURLWithPath: "/bin/umount"), ["-l", path], timeout: 10)
    }
}

/// Why a tmpfs could not be mounted here (tests print it and skip).
public struct TmpfsUnavailable: Error, Sendable {
    /// `mount`'s exit status and message.
    public var reason: String
}
