import ChimeCore
import Foundation
import HTTPClient

/// Delivers to Android, iOS and web clients through FCM HTTP v1 (Google, "Send a message using
/// FCM HTTP v1 API"): `POST {base}/v1/projects/{project}/messages:send` with
/// `authorization: Bearer <access token>` (``FCMAccessToken``) and the body ``FCMMessage``
/// makes; the answer is classified by ``FCMResponse``. A refused access token is renewed and
/// the request sent once more. Transport failures and a failed token exchange are `.retry`.
///
/// ```swift
/// let channel = try FCMChannel(configuration: FCMConfiguration(serviceAccountFile: "/etc/chime/firebase-sa.json"))
/// let result = channel.deliver(attempt)
/// ```
public final class FCMChannel: DeliveryChannel {
    /// What the channel was made with.
    public let configuration: FCMConfiguration
    /// The send URL, `{base}/v1/projects/{project}/messages:send`.
    public let sendURL: String
    private let accessToken: FCMAccessToken
    private let session: HTTPSession
    private let now: @Sendable () -> Date

    /// A channel reading its service account from `configuration.serviceAccountFile`.
    /// - Parameter now: the clock assertions are dated by and token expiry is read against.
    /// - Throws: `CryptoError` — `.badKeyFile` (unreadable, malformed, or no project id in the
    ///   file or the configuration), `.loosePermissions`, `.badPEM` or `.wrongKeyType` for its
    ///   `private_key`, `.libraryMissing` without libcrypto.
    public init(configuration: FCMConfiguration, now: @escaping @Sendable () -> Date = { Date() }) throws(CryptoError) {
        let account = try ServiceAccount(contentsOfFile: configuration.serviceAccountFile)
        guard let project = configuration.projectID ?? account.projectID, !project.isEmpty else {
            throw CryptoError(.badKeyFile, "\(configuration.serviceAccountFile) has no project_id and the configuration names no projectId")
        }
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        let client = HTTPClient(
            timeout: configuration.timeout, certificateAuthorityFile: configuration.certificateAuthorityFile, maximumResponseBytes: 64 << 10,
            httpVersion: .http2)
        session = HTTPSession(client: client)
        do {
            accessToken = try FCMAccessToken(account: account, tokenURL: configuration.tokenURL ?? account.tokenURI, session: session)
        } catch {
            throw CryptoError(error.code, "\(configuration.serviceAccountFile): private_key: \(error.message)")
        }
        self.configuration = configuration
        sendURL = "\(base)/v1/projects/\(project)/messages:send"
        self.now = now
    }

    /// Sends `attempt` to its FCM registration and classifies the answer; an attempt for
    /// another kind of destination is a programming error and is refused without a request.
    public func deliver(_ attempt: DeliveryAttempt) -> DeliveryResult {
        guard case .fcm(let registration) = attempt.destination else {
            return .refused(status: nil, reason: "the FCM channel was given a \(attempt.destination.channel) destination", removesDestination: false)
        }
        let body = FCMMessage.body(attempt: attempt, registration: registration, now: now())
        // The second pass is the one resend after a refused access token.
        for pass in 0..<2 {
            let token: String
            do {
                token = try accessToken.token(now: now)
            } catch {
                return .retry(status: nil, reason: error.message, retryAfter: nil)
            }
            let request = HTTPClient.Request(
                method: "POST", url: sendURL, headers: [("authorization", "Bearer \(token)"), ("content-type", "application/json; charset=utf-8")],
                body: body)
            let response: HTTPClient.Response
            do {
                response = try session.send(request)
            } catch {
                return .retry(status: nil, reason: "FCM: \(error.message)", retryAfter: nil)
            }
            let retryAfter = RetryAfter.seconds(response.header("retry-after"), now: now())
            switch FCMResponse.classify(status: response.status, body: response.body, retryAfter: retryAfter) {
            case .outcome(let result):
                return result
            case .renewAccessToken(let reason):
                accessToken.rejected(token)
                if pass == 1 { return .retry(status: response.status, reason: reason, retryAfter: retryAfter) }
            }
        }
        preconditionFailure("the FCM send loop returns on its second pass")
    }
}
