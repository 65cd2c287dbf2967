import Foundation

/// Creates and extends a key directory, the layout `chime coordinator --keys DIR` reads:
///
/// ```
/// DIR/server.key, DIR/server.key_secret          the coordinator's pair
/// DIR/<name>.key, DIR/<name>.key_secret          one pair per key made here
/// DIR/<role>/<name>.key                          role allow-lists: public certificates
/// ```
///
/// Secret certificates are written 0600, the directory 0700. czmq's `zcert` and pyzmq's
/// `zmq.auth.load_certificate` read every file.
public enum KeyDirectory {
    /// Makes `directory` (0700) with a server pair and one pair per role, each role's public
    /// certificate in its allow-list folder.
    ///
    /// - Returns: the files written, in order.
    /// - Throws: `SecurityError(.badCertificate)` when `server.key_secret` exists already
    ///   (keys are never overwritten) or a file cannot be written; `.curveUnavailable`.
    @discardableResult
    public static func initialize(at directory: URL) throws(SecurityError) -> [URL] {
        let serverSecret = directory.appendingPathComponent("server.key_secret")
        guard !FileManager.default.fileExists(atPath: serverSecret.path) else {
            throw SecurityError(.badCertificate, "\(directory.path) already has keys (server.key_secret); not overwritten")
        }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SecurityError(.badCertificate, "\(directory.path): cannot create it: \(error.localizedDescription)")
        }
        var written = try writePair(Certificate.generate(metadata: ["name": "server"]), named: "server", in: directory)
        for role in Role.allCases {
            written += try add(role: role, name: role.rawValue, scope: nil, to: directory)
        }
        return written
    }

    /// Makes a key pair `NAME.key` + `NAME.key_secret` in `directory` and allows its public
    /// key as `role` (`DIR/<role>/NAME.key`). A `scope` (clients only) goes into the
    /// certificate's metadata as `recipients` and `recipient-prefixes`, a `quota` (restricted
    /// clients only) as `max-reminders` and `max-reminder-bytes`.
    ///
    /// A running coordinator takes the key on its next SIGHUP.
    /// - Returns: the files written.
    /// - Throws: `SecurityError(.badCertificate)` for a name that is not a plain file name,
    ///   a file that exists, a scope on another role than `client`, or a quota without a scope.
    @discardableResult
    public static func add(
        role: Role, name: String, scope: RecipientScope?, quota: TenantQuota? = nil, to directory: URL
    ) throws(SecurityError) -> [URL] {
        guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), name != "server" else {
            throw SecurityError(.badCertificate, "'\(name)' cannot name a key (no '/', no leading '.', not 'server')")
        }
        guard scope == nil || role == .client else {
            throw SecurityError(.badCertificate, "only client keys take recipients or recipient prefixes")
        }
        guard quota == nil || scope != nil else {
            throw SecurityError(
                .badCertificate, "a quota needs recipients or recipient prefixes: usage is counted per restricted key's recipients")
        }
        if let scope, scope.prefixes.contains(where: \.isEmpty) || scope.recipients.contains(where: \.isEmpty)
            || scope.prefixes.contains(where: { $0.contains(",") || $0.contains(" ") })
            || scope.recipients.contains(where: { $0.contains(",") || $0.contains(" ") })
        {
            throw SecurityError(
                .badCertificate,
                "a recipient or recipient prefix must be non-empty without commas or spaces (an empty prefix would allow every recipient)")
        }
        var metadata = ["name": name, "role": role.rawValue]
        if let scope {
            if !scope.recipients.isEmpty { metadata["recipients"] = scope.recipients.sorted().joined(separator: ",") }
            if !scope.prefixes.isEmpty { metadata["recipient-prefixes"] = scope.prefixes.joined(separator: ",") }
        }
        if let quota { metadata.merge(quota.metadata) { $1 } }
        let certificate = try Certificate.generate(metadata: metadata)
        let folder = directory.appendingPathComponent(role.rawValue)
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        } catch {
            throw SecurityError(.badCertificate, "\(folder.path): cannot create it: \(error.localizedDescription)")
        }
        let allowed = folder.appendingPathComponent("\(name).key")
        var written = try writePair(certificate, named: name, in: directory)
        try certificate.publicCertificate.write(to: allowed)
        written.append(allowed)
        return written
    }

    private static func writePair(_ certificate: Certificate, named name: String, in directory: URL) throws(SecurityError) -> [URL] {
        let secret = directory.appendingPathComponent("\(name).key_secret")
        let publicFile = directory.appendingPathComponent("\(name).key")
        try certificate.write(to: secret)
        try certificate.publicCertificate.write(to: publicFile)
        return [publicFile, secret]
    }
}
