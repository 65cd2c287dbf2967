import Foundation

/// Reads a provider's secret file (an APNs `.p8`, a Google service-account JSON): owner-only,
/// as Chime's secret certificates must be (`ChimeSecurity`'s `Certificate` makes the same check).
enum KeyFile {
    /// The largest key file read, in bytes (a service-account JSON is about 2.3 KiB).
    static let maximumBytes = 65_536

    /// The contents of `path` when only its owner may read or write it.
    /// - Throws: `CryptoError(.badKeyFile)` for a missing, unreadable or over-64-KiB file,
    ///   `.loosePermissions` when group or others have any permission (mode & 0o077 != 0); the
    ///   link's target is checked (Kubernetes mounts Secret files as links into `..data`).
    static func read(_ path: String) throws(CryptoError) -> Data {
        let mode: Int
        do {
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let attributes = try FileManager.default.attributesOfItem(atPath: target)
            mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        } catch {
            throw CryptoError(.badKeyFile, "\(path): cannot read its permissions (missing?)")
        }
        guard mode & 0o077 == 0 else {
            throw CryptoError(
                .loosePermissions, "\(path) holds a private key and has mode \(String(mode, radix: 8)); allow only its owner (chmod 600 \(path))")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= maximumBytes else {
            throw CryptoError(.badKeyFile, "\(path): cannot read it (unreadable or over 64 KiB)")
        }
        return data
    }
}
