import Foundation

/// A fresh directory under the system temp folder, removed by `remove()` or at deinit.
public final class TemporaryDirectory {
    /// The directory's URL.
    public let url: URL

    /// Creates `…/chime-<prefix>-<uuid>`.
    /// - Throws: a file-system error when the directory cannot be created.
    public init(prefix: String = "test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Deletes the directory and its contents.
    public func remove() { try? FileManager.default.removeItem(at: url) }

    deinit { remove() }
}
