import Foundation

/// What an APNs answer means, per Apple's "Handling notification responses from APNs"
/// (status codes and `reason` values). Pure.
public enum APNsResponse: Equatable, Sendable {
    /// A final outcome for the attempt.
    case outcome(DeliveryResult)
    /// The provider token was refused (403 `ExpiredProviderToken` or `InvalidProviderToken`):
    /// make a new one and send again.
    case renewProviderToken(reason: String)

    /// Classifies a response.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - body: the response body, `{"reason": "...", "timestamp": ms}` on errors.
    ///   - retryAfter: the `Retry-After` delay in seconds, when sent.
    public static func classify(status: Int, body: Data, retryAfter: Double?) -> APNsResponse {
        if (200...299).contains(status) { return .outcome(.delivered(status: status)) }
        let reason = Self.reason(in: body)
        let said = "APNs \(status) \(reason ?? responseExcerpt(body))"
        switch (status, reason) {
        case (400, "BadDeviceToken"), (410, _):
            return .outcome(.refused(status: status, reason: said, removesDestination: true))
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
            return .renewProviderToken(reason: said)
        case (408, _), (429, _), (500...599, _):
            return .outcome(.retry(status: status, reason: said, retryAfter: retryAfter))
        default:
            return .outcome(.refused(status: status, reason: said, removesDestination: false))
        }
    }

    /// The `reason` string of an APNs error body, or `nil` when the body is not that JSON.
    static func reason(in body: Data) -> String? {
        struct ErrorBody: Decodable { var reason: String? }
        return (try? JSONDecoder().decode(ErrorBody.self, from: body))?.reason
    }
}
