import Foundation

/// How a worker reaches FCM HTTP v1 with a service account (Google, "Authorize send requests").
///
/// JSON shape (of the file the worker configuration's `delivery.fcmConfigFile` names):
/// `{"serviceAccountFile": "/etc/chime/firebase-sa.json", "projectId": null,
///   "baseUrl": "https://fcm.googleapis.com", "tokenUrl": null, "timeoutSeconds": 10, "caFile": null}`;
/// only `serviceAccountFile` is required. `projectId` defaults to the file's `project_id` and
/// `tokenUrl` to its `token_uri`.
public struct FCMConfiguration: Codable, Hashable, Sendable {
    /// The service-account JSON key file from the Firebase console; owner-only.
    public var serviceAccountFile: String
    /// The Firebase project; `nil`: the service account's `project_id`.
    public var projectID: String?
    /// The FCM base URL (no trailing slash); sends go to `{base}/v1/projects/{project}/messages:send`.
    public var baseURL: String
    /// Where the signed assertion is exchanged for an access token; `nil`: the service
    /// account's `token_uri`. It is also the assertion's `aud`.
    public var tokenURL: String?
    /// Each request's deadline, in seconds.
    public var timeout: Double
    /// A PEM CA bundle the servers must chain to; `nil`: the system's.
    public var certificateAuthorityFile: String?

    /// Google's FCM host.
    public static let googleBaseURL = "https://fcm.googleapis.com"

    /// A configuration from its parts; Google's endpoints unless told otherwise.
    public init(
        serviceAccountFile: String, projectID: String? = nil, baseURL: String = Self.googleBaseURL, tokenURL: String? = nil,
        timeout: Double = 10, certificateAuthorityFile: String? = nil
    ) {
        self.serviceAccountFile = serviceAccountFile
        self.projectID = projectID
        self.baseURL = baseURL
        self.tokenURL = tokenURL
        self.timeout = timeout
        self.certificateAuthorityFile = certificateAuthorityFile
    }

    private enum CodingKeys: String, CodingKey {
        case serviceAccountFile, projectID = "projectId", baseURL = "baseUrl", tokenURL = "tokenUrl", timeout = "timeoutSeconds"
        case certificateAuthorityFile = "caFile"
    }

    /// Decodes the JSON shape above; absent optional keys take their defaults.
    /// - Throws: `DecodingError` for a missing `serviceAccountFile` or a wrongly typed value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            serviceAccountFile: try container.decode(String.self, forKey: .serviceAccountFile),
            projectID: try container.decodeIfPresent(String.self, forKey: .projectID),
            baseURL: try container.decodeIfPresent(String.self, forKey: .baseURL) ?? Self.googleBaseURL,
            tokenURL: try container.decodeIfPresent(String.self, forKey: .tokenURL),
            timeout: try container.decodeIfPresent(Double.self, forKey: .timeout) ?? 10,
            certificateAuthorityFile: try container.decodeIfPresent(String.self, forKey: .certificateAuthorityFile))
    }
}

/// The fields of a Google service-account key file the channel uses.
///
/// JSON shape (Google, "Create and delete service account keys"): `{"type": "service_account",
/// "project_id": "...", "private_key_id": "...", "private_key": "-----BEGIN PRIVATE KEY-----...",
/// "client_email": "...@....iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token", ...}`.
public struct ServiceAccount: Decodable, Sendable, Equatable {
    /// `project_id`.
    public var projectID: String?
    /// `private_key_id`, sent as the assertion's `kid`.
    public var privateKeyID: String?
    /// `private_key`, a PKCS #8 PEM RSA key.
    public var privateKey: String
    /// `client_email`, the assertion's `iss`.
    public var clientEmail: String
    /// `token_uri`; Google's when absent.
    public var tokenURI: String

    private enum CodingKeys: String, CodingKey {
        case projectID = "project_id", privateKeyID = "private_key_id", privateKey = "private_key", clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    /// Decodes the fields above; unknown keys are ignored (the file has several more).
    /// - Throws: `DecodingError` without `private_key` or `client_email`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        projectID = try container.decodeIfPresent(String.self, forKey: .projectID)
        privateKeyID = try container.decodeIfPresent(String.self, forKey: .privateKeyID)
        privateKey = try container.decode(String.self, forKey: .privateKey)
        clientEmail = try container.decode(String.self, forKey: .clientEmail)
        tokenURI = try container.decodeIfPresent(String.self, forKey: .tokenURI) ?? "https://oauth2.googleapis.com/token"
    }

    /// Reads and decodes an owner-only service-account file.
    /// - Throws: `CryptoError(.badKeyFile)` for an unreadable or malformed file, `.loosePermissions`.
    public init(contentsOfFile path: String) throws(CryptoError) {
        let data = try KeyFile.read(path)
        do {
            self = try JSONDecoder().decode(ServiceAccount.self, from: data)
        } catch {
            throw CryptoError(.badKeyFile, "\(path) is not a service-account JSON with private_key and client_email")
        }
    }
}
