import ChimeCore
import Foundation
import HTTPClient

/// Delivers to Apple devices through the APNs provider API: HTTP/2, token authentication
/// (Apple, "Sending notification requests to APNs"), one kept connection set per environment.
///
/// `POST {base}/3/device/<token>` with `authorization: bearer <ES256 JWT>` and the headers and
/// payload ``APNsNotification`` makes; the answer is classified by ``APNsResponse``. A refused
/// provider token is remade (when Apple's 20-minute rule allows) and the request sent once
/// more. Transport failures (timeouts, refused connections, TLS) are `.retry`.
///
/// ```swift
/// let channel = try APNsChannel(configuration: APNsConfiguration(keyFile: "/etc/chime/AuthKey.p8", keyID: "ABC123DEFG", teamID: "DEF123GHIJ"))
/// let result = channel.deliver(attempt)
/// ```
public final class APNsChannel: DeliveryChannel {
    /// What the channel was made with.
    public let configuration: APNsConfiguration
    private let providerToken: APNsProviderToken
    private let production: HTTPSession
    private let sandbox: HTTPSession
    private let now: @Sendable () -> Date

    /// A channel reading its key from `configuration.keyFile`.
    /// - Parameter now: the clock tokens are dated by (tests pass a manual one).
    /// - Throws: `CryptoError` — `.badKeyFile` or `.loosePermissions` for the key file,
    ///   `.badPEM` or `.wrongKeyType` for its contents, `.libraryMissing` without libcrypto.
    public init(configuration: APNsConfiguration, now: @escaping @Sendable () -> Date = { Date() }) throws(CryptoError) {
        let pem = String(decoding: try KeyFile.read(configuration.keyFile), as: UTF8.self)
        let key: SigningKey
        do {
            key = try SigningKey(pem: pem, algorithm: .es256)
        } catch {
            throw CryptoError(error.code, "\(configuration.keyFile): \(error.message)")
        }
        self.configuration = configuration
        providerToken = APNsProviderToken(key: key, keyID: configuration.keyID, teamID: configuration.teamID)
        let client = HTTPClient(
            timeout: configuration.timeout, certificateAuthorityFile: configuration.certificateAuthorityFile, maximumResponseBytes: 64 << 10,
            httpVersion: .http2)
        production = HTTPSession(client: client)
        sandbox = HTTPSession(client: client)
        self.now = now
    }

    /// Sends `attempt` to its APNs device and classifies the answer; an attempt for another
    /// kind of destination is a programming error and is refused without a request.
    public func deliver(_ attempt: DeliveryAttempt) -> DeliveryResult {
        guard case .apns(let device) = attempt.destination else {
            return .refused(status: nil, reason: "the APNs channel was given a \(attempt.destination.channel) destination", removesDestination: false)
        }
        guard APNsNotification.isWellFormed(deviceToken: device.token) else {
            return .refused(status: nil, reason: "APNs device token is not 64 to 400 hexadecimal digits", removesDestination: true)
        }
        let notification: APNsNotification
        do {
            notification = APNsNotification(attempt: attempt, device: device, apnsID: try APNsNotification.apnsID(for: attempt.firing.firingId))
        } catch {
            return .retry(status: nil, reason: "APNs: \(error.message)", retryAfter: nil)
        }
        guard notification.body.count <= APNsNotification.maximumPayloadBytes else {
            return .refused(
                status: nil, reason: "APNs payload is \(notification.body.count) bytes; at most \(APNsNotification.maximumPayloadBytes) are sent",
                removesDestination: false)
        }
        let session = device.environment == .production ? production : sandbox
        let url = configuration.baseURL(for: device.environment) + notification.path
        // The second pass is the one resend after a refused provider token.
        for pass in 0..<2 {
            let token: String
            do {
                token = try providerToken.token(now: now())
            } catch {
                return .retry(status: nil, reason: "APNs provider token: \(error.message)", retryAfter: nil)
            }
            let request = HTTPClient.Request(
                method: "POST", url: url,
                headers: [("authorization", "bearer \(token)"), ("content-type", "application/json")] + notification.headers,
                body: notification.body)
            let response: HTTPClient.Response
            do {
                response = try session.send(request)
            } catch {
                return .retry(status: nil, reason: "APNs: \(error.message)", retryAfter: nil)
            }
            let retryAfter = RetryAfter.seconds(response.header("retry-after"), now: now())
            switch APNsResponse.classify(status: response.status, body: response.body, retryAfter: retryAfter) {
            case .outcome(let result):
                return result
            case .renewProviderToken(let reason):
                guard pass == 0, providerToken.refused(token, now: now()) else {
                    return .retry(status: response.status, reason: reason, retryAfter: retryAfter)
                }
            }
        }
        preconditionFailure("the APNs send loop returns on its second pass")
    }
}
