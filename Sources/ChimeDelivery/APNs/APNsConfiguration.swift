import ChimeCore
import Foundation

/// How a worker reaches APNs with token authentication (Apple, "Establishing a token-based
/// connection to APNs").
///
/// JSON shape (of the file the worker configuration's `delivery.apnsConfigFile` names):
/// `{"keyFile": "/etc/chime/AuthKey_ABC123DEFG.p8", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ",
///   "productionUrl": "https://api.push.apple.com", "sandboxUrl": "https://api.sandbox.push.apple.com",
///   "timeoutSeconds": 10, "caFile": null}`; only `keyFile`, `keyId` and `teamId` are required.
public struct APNsConfiguration: Codable, Hashable, Sendable {
    /// The `.p8` token-signing key from Apple's developer account (PKCS #8, EC P-256); the file
    /// must be owner-only.
    public var keyFile: String
    /// The key's 10-character id, the JWT's `kid`.
    public var keyID: String
    /// The 10-character team id, the JWT's `iss`.
    public var teamID: String
    /// The base URL for devices in the production environment (no trailing slash).
    public var productionURL: String
    /// The base URL for devices in the sandbox (development) environment.
    public var sandboxURL: String
    /// Each request's deadline, in seconds.
    public var timeout: Double
    /// A PEM CA bundle the server must chain to; `nil`: the system's (tests name their own).
    public var certificateAuthorityFile: String?

    /// Apple's production host.
    public static let appleProductionURL = "https://api.push.apple.com"
    /// Apple's sandbox host.
    public static let appleSandboxURL = "https://api.sandbox.push.apple.com"

    /// A configuration from its parts; Apple's hosts unless told otherwise.
    public init(
        keyFile: String, keyID: String, teamID: String, productionURL: String = Self.appleProductionURL,
        sandboxURL: String = Self.appleSandboxURL, timeout: Double = 10, certificateAuthorityFile: String? = nil
    ) {
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.timeout = timeout
        self.certificateAuthorityFile = certificateAuthorityFile
    }

    /// The base URL for `environment`, trailing slashes dropped.
    public func baseURL(for environment: APNsDestination.Environment) -> String {
        var url = environment == .production ? productionURL : sandboxURL
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    private enum CodingKeys: String, CodingKey {
        case keyFile, keyID = "keyId", teamID = "teamId", productionURL = "productionUrl", sandboxURL = "sandboxUrl"
        case timeout = "timeoutSeconds", certificateAuthorityFile = "caFile"
    }

    /// Decodes the JSON shape above; absent optional keys take their defaults.
    /// - Throws: `DecodingError` for a missing required key or a wrongly typed value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            keyFile: try container.decode(String.self, forKey: .keyFile),
            keyID: try container.decode(String.self, forKey: .keyID),
            teamID: try container.decode(String.self, forKey: .teamID),
            productionURL: try container.decodeIfPresent(String.self, forKey: .productionURL) ?? Self.appleProductionURL,
            sandboxURL: try container.decodeIfPresent(String.self, forKey: .sandboxURL) ?? Self.appleSandboxURL,
            timeout: try container.decodeIfPresent(Double.self, forKey: .timeout) ?? 10,
            certificateAuthorityFile: try container.decodeIfPresent(String.self, forKey: .certificateAuthorityFile))
    }
}
