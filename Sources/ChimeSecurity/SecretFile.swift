import Foundation

/// Reads small secret files (webhook signing secrets, provider keys): they must be owner-only,
/// as CURVE secret keys are, and their contents are never logged.
public enum SecretFile {
    /// The largest secret file read, in bytes.
    public static let maximumBytes = 65_536

    /// The file's contents, after checking that neither group nor others may read or write it.
    /// - Throws: `SecurityError` `.unreadableSecret` for a missing or unreadable file or one over
    ///   ``maximumBytes``; `.loosePermissions` for a mode with group or other bits
    ///   (`chmod 600`).
    public static func read(path: String) throws(SecurityError) -> Data {
        guard let data = FileManager.default.contents(atPath: path), data.count <= maximumBytes else {
            throw SecurityError(.unreadableSecret, "\(path): cannot read it (missing, unreadable or over \(maximumBytes) bytes)")
        }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else {
            throw SecurityError(.unreadableSecret, "\(path): cannot read its permissions")
        }
        guard mode & 0o077 == 0 else {
            throw SecurityError(
                .loosePermissions, "\(path) holds a secret and has mode \(String(mode, radix: 8)); allow only its owner (chmod 600 \(path))")
        }
        return data
    }

    /// The non-empty lines of the file (surrounding white space removed), checked as
    /// ``read(path:)`` does: a webhook's secrets, one per line (two while rotating).
    /// - Throws: as ``read(path:)``.
    public static func lines(path: String) throws(SecurityError) -> [String] {
        String(decoding: try read(path: path), as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }
}
