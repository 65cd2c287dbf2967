import Foundation
import ZeroMQ

/// A CURVE certificate in the ZeroMQ certificate format that czmq's `zcert` writes and
/// pyzmq's `zmq.auth.load_certificate` reads (ZPL text: a `metadata` section of
/// `name = "value"` lines and a `curve` section with `public-key` and, in a secret
/// certificate, `secret-key`, each 40 Z85 characters).
///
/// `NAME.key` holds the public certificate, `NAME.key_secret` the secret one.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The public key, 40 Z85 characters.
    public var publicKey: String
    /// The secret key, 40 Z85 characters; `nil` in a public certificate.
    public var secretKey: String?
    /// The `metadata` section (Chime reads `name`, `recipients`, `recipient-prefixes`).
    public var metadata: [String: String]

    /// Creates a certificate from its fields.
    public init(publicKey: String, secretKey: String? = nil, metadata: [String: String] = [:]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.metadata = metadata
    }

    /// A fresh key pair.
    /// - Throws: `SecurityError(.curveUnavailable)` when libzmq has no CURVE.
    public static func generate(metadata: [String: String] = [:]) throws(SecurityError) -> Certificate {
        do {
            let pair = try CurveKeyPair.generate()
            return Certificate(publicKey: pair.publicKey, secretKey: pair.secretKey, metadata: metadata)
        } catch {
            throw SecurityError(.curveUnavailable, "cannot generate a CURVE key pair: \(error)")
        }
    }

    /// The public key and metadata, with the secret key redacted, so logging leaks nothing.
    public var description: String {
        "Certificate(publicKey: \(publicKey), secretKey: \(secretKey == nil ? "none" : "<redacted>"), metadata: \(metadata))"
    }

    /// The key pair of a secret certificate; `nil` for a public one.
    public var keyPair: CurveKeyPair? {
        secretKey.map { CurveKeyPair(publicKey: publicKey, secretKey: $0) }
    }

    /// The public half: the same certificate without the secret key.
    public var publicCertificate: Certificate {
        Certificate(publicKey: publicKey, metadata: metadata)
    }

    /// Parses certificate text; `source` names it in errors.
    ///
    /// - Throws: `SecurityError(.badCertificate)` when there is no valid `public-key`, a key is
    ///   not 40 Z85 characters, or the secret key does not belong to the public key.
    public init(parsing text: String, source: String) throws(SecurityError) {
        var section = ""
        var curve: [String: String] = [:]
        var metadata: [String: String] = [:]
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let isIndented = rawLine.first == " " || rawLine.first == "\t"
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard isIndented else {
                section = line
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw SecurityError(.badCertificate, "\(source): expected 'name = \"value\"', found '\(line)'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            switch section {
            case "curve": curve[name] = value
            case "metadata": metadata[name] = value
            default: continue
            }
        }
        guard let publicKey = curve["public-key"], Z85.isKey(publicKey) else {
            throw SecurityError(.badCertificate, "\(source): no public-key of 40 Z85 characters in its curve section")
        }
        if let secretKey = curve["secret-key"] {
            guard Z85.isKey(secretKey), (try? CurveKeyPair(secretKey: secretKey))?.publicKey == publicKey else {
                throw SecurityError(.badCertificate, "\(source): its secret-key is not the secret key of its public-key")
            }
        }
        self.init(publicKey: publicKey, secretKey: curve["secret-key"], metadata: metadata)
    }

    /// Reads a certificate file; a secret certificate must not be readable by group or others.
    ///
    /// - Throws: `SecurityError(.badCertificate)` for a missing, unreadable (over 64 KiB) or
    ///   malformed file, `.loosePermissions` for a secret certificate with group or other
    ///   permissions.
    public init(contentsOf url: URL) throws(SecurityError) {
        let path = url.path
        guard let data = FileManager.default.contents(atPath: path), data.count <= 65_536 else {
            throw SecurityError(.badCertificate, "\(path): cannot read it (missing, unreadable or over 64 KiB)")
        }
        try self.init(parsing: String(decoding: data, as: UTF8.self), source: path)
        if secretKey != nil {
            let mode = try Self.permissions(of: path)
            guard mode & 0o077 == 0 else {
                throw SecurityError(
                    .loosePermissions,
                    "\(path) holds a secret key and has mode \(String(mode, radix: 8)); allow only its owner (chmod 600 \(path))")
            }
        }
    }

    /// The file's text: a banner, `metadata` (sorted) and `curve` with the keys it has.
    public var text: String {
        var lines = [
            "#   ****  Generated by chime  ****",
            secretKey == nil
                ? "#   ZeroMQ CURVE Public Certificate: share it with the coordinator's operator."
                : "#   ZeroMQ CURVE **Secret** Certificate: DO NOT share it or loosen its permissions.",
            "",
            "metadata",
        ]
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            lines.append("    \(name) = \"\(value)\"")
        }
        lines.append("curve")
        lines.append("    public-key = \"\(publicKey)\"")
        if let secretKey { lines.append("    secret-key = \"\(secretKey)\"") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the certificate to `url`, mode 0600 for a secret one and 0644 for a public
    /// one, refusing to replace an existing file.
    /// - Throws: `SecurityError(.badCertificate)` when the file exists or cannot be written.
    public func write(to url: URL) throws(SecurityError) {
        let mode: Int = secretKey == nil ? 0o644 : 0o600
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw SecurityError(.badCertificate, "\(url.path) exists already; not replaced")
        }
        // Created with its final mode, so a secret is never readable by others, even briefly.
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: mode]) else {
            throw SecurityError(.badCertificate, "\(url.path): cannot create it")
        }
        do {
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data(text.utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            throw SecurityError(.badCertificate, "\(url.path): cannot write it: \(error.localizedDescription)")
        }
    }

    /// The permission bits of `path`, following symbolic links (Kubernetes mounts Secret
    /// files as links into a `..data` folder; a link's own mode says nothing).
    static func permissions(of path: String) throws(SecurityError) -> Int {
        do {
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let attributes = try FileManager.default.attributesOfItem(atPath: target)
            return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
        } catch {
            throw SecurityError(.badCertificate, "\(path): cannot read its permissions")
        }
    }
}
