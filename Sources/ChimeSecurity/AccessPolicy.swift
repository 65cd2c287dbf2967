import ChimeCore
import Foundation
import ZeroMQ

/// Who may connect to which socket: the public keys of each role's allow-list, and the
/// ZAP decisions that follow from them. A value: a reload builds a new one.
///
/// The ZAP user id of an admitted connection is `"<role> <public key>"`; the coordinator
/// reads the role from it (``Principal``), never from a message field.
public struct AccessPolicy: Sendable, Hashable {
    /// What one allowed key may do.
    public struct Grant: Sendable, Hashable {
        /// The key's role (the allow-list folder its certificate is in).
        public var role: Role
        /// For a `client`: the recipients it may act for; `nil` for every recipient.
        public var scope: RecipientScope?
        /// For a restricted `client`: the limits its certificate sets (``TenantQuota``); `nil`
        /// when it sets none (the configured defaults apply to a restricted key).
        public var quota: TenantQuota?
        /// The certificate's file name, for logs.
        public var name: String

        /// Creates the value from its fields (see each property for meaning).
        public init(role: Role, scope: RecipientScope? = nil, quota: TenantQuota? = nil, name: String) {
            self.role = role
            self.scope = scope
            self.quota = quota
            self.name = name
        }
    }

    /// Allowed public keys (40 Z85 characters) and their grants.
    public var grants: [String: Grant]

    /// Creates a policy from its grants.
    public init(grants: [String: Grant] = [:]) {
        self.grants = grants
    }

    /// The roles admitted on each socket. Every role reaches control, where each request is
    /// checked against the role (``ControlAuthorization``), so a refusal there is an exact
    /// `forbidden` reply rather than a silent drop.
    static func roles(for domain: SocketDomain) -> Set<Role> {
        switch domain {
        case .control: [.operator, .client, .worker, .subscriber]
        case .dispatch, .results, .eventsIngest: [.worker]
        case .events: [.operator, .client, .subscriber]
        case .selfTest: []
        }
    }

    /// The ZAP answer for `request`: CURVE only, a known key, a role the socket admits, and
    /// for the event stream no recipient restriction (a subscription cannot be limited to
    /// some recipients: restricted clients catch up through the control `events` request).
    public func decide(_ request: ZAPRequest) -> ZAPDecision {
        guard let domain = SocketDomain(rawValue: request.domain) else {
            return .deny(reason: "unknown ZAP domain '\(request.domain)'")
        }
        guard let key = request.curvePublicKey else {
            return .deny(reason: "mechanism \(request.mechanism) refused: CURVE only")
        }
        guard let grant = grants[key] else {
            return .deny(reason: "unknown key \(key)")
        }
        guard Self.roles(for: domain).contains(grant.role) else {
            return .deny(reason: "role \(grant.role.rawValue) may not connect to \(domain.rawValue)")
        }
        if domain == .events, grant.scope != nil {
            return .deny(reason: "a client restricted to some recipients may not subscribe to every event")
        }
        return .allow(userID: Principal(role: grant.role, publicKey: key).userID)
    }

    /// Loads the allow-lists `operator/`, `client/`, `worker/` and `subscriber/` of a key
    /// directory (each a folder of public certificates `*.key`; a missing folder is empty).
    ///
    /// A client certificate's metadata `recipients` and `recipient-prefixes` (lists separated
    /// by commas or spaces) restrict it; `max-reminders` and `max-reminder-bytes` set a
    /// restricted key's quota (``TenantQuota``).
    ///
    /// - Throws: `SecurityError(.badCertificate)` for a certificate that does not parse or a
    ///   key listed under two roles; `.loosePermissions` for an allow-list folder or file
    ///   that group or others may write (they could let themselves in), and for anything in
    ///   the directory owned by another user or a symbolic link leading out of it
    ///   (``KeyDirectoryTrust``).
    public static func load(directory: URL) throws(SecurityError) -> AccessPolicy {
        try KeyDirectoryTrust.check(directory)
        var grants: [String: Grant] = [:]
        let manager = FileManager.default
        for role in Role.allCases {
            let folder = directory.appendingPathComponent(role.rawValue)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                continue
            }
            try Self.requireNotWritableByOthers(folder.path)
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".key") }.sorted()
            } catch {
                throw SecurityError(.badCertificate, "\(folder.path): cannot list it")
            }
            for name in names {
                let file = folder.appendingPathComponent(name)
                try Self.requireNotWritableByOthers(file.path)
                let certificate = try Certificate(contentsOf: file)
                if let other = grants[certificate.publicKey], other.role != role {
                    throw SecurityError(
                        .badCertificate,
                        "\(file.path): this key is also allowed as \(other.role.rawValue) (\(other.name)); give each key one role")
                }
                let scope: RecipientScope?
                let quota: TenantQuota?
                do {
                    scope = role == .client ? try Self.scope(certificate.metadata) : nil
                    quota = scope == nil ? nil : try TenantQuota.read(certificate.metadata)
                } catch {
                    throw SecurityError(.badCertificate, "\(file.path): \(error.message)")
                }
                grants[certificate.publicKey] = Grant(role: role, scope: scope, quota: quota, name: "\(role.rawValue)/\(name)")
            }
        }
        return AccessPolicy(grants: grants)
    }

    /// The recipient scope certificate metadata describes; `nil` when it has neither key.
    /// - Throws: `SecurityError(.badCertificate)` when a key is there but names nothing (an
    ///   empty prefix would otherwise make an unrestricted key: fail closed).
    static func scope(_ metadata: [String: String]) throws(SecurityError) -> RecipientScope? {
        func list(_ key: String) -> [String] {
            (metadata[key] ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        }
        guard metadata["recipients"] != nil || metadata["recipient-prefixes"] != nil else { return nil }
        let recipients = list("recipients")
        let prefixes = list("recipient-prefixes")
        guard !recipients.isEmpty || !prefixes.isEmpty else {
            throw SecurityError(
                .badCertificate, "recipients/recipient-prefixes name no recipient; an empty prefix would allow every one")
        }
        return RecipientScope(recipients: Set(recipients), prefixes: prefixes)
    }

    static func requireNotWritableByOthers(_ path: String) throws(SecurityError) {
        let mode = try Certificate.permissions(of: path)
        guard mode & 0o022 == 0 else {
            throw SecurityError(
                .loosePermissions,
                "\(path) has mode \(String(mode, radix: 8)): group or others could add keys to an allow-list (chmod go-w \(path))")
        }
    }
}

/// An authenticated peer as the coordinator sees it: the role and key its ZAP user id names.
public struct Principal: Sendable, Hashable {
    /// The role the key was admitted with.
    public var role: Role
    /// The peer's public key, 40 Z85 characters.
    public var publicKey: String

    /// Creates the value from its fields (see each property for meaning).
    public init(role: Role, publicKey: String) {
        self.role = role
        self.publicKey = publicKey
    }

    /// Reads a ZAP user id `"<role> <public key>"`; `nil` for anything else.
    public init?(userID: String) {
        let parts = userID.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let role = Role(rawValue: String(parts[0])) else { return nil }
        self.init(role: role, publicKey: String(parts[1]))
    }

    /// The ZAP user id: `"<role> <public key>"`.
    public var userID: String { "\(role.rawValue) \(publicKey)" }
}
