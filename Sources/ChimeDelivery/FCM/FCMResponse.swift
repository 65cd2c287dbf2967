import Foundation

/// What an FCM HTTP v1 answer means, per Google's "ErrorCode" reference for
/// `projects.messages.send` (the `errorCode` of the `google.firebase.fcm.v1.FcmError` detail)
/// and the HTTP status. Pure.
public enum FCMResponse: Equatable, Sendable {
    /// A final outcome for the attempt.
    case outcome(DeliveryResult)
    /// The access token was refused (401 other than `THIRD_PARTY_AUTH_ERROR`): get a new one
    /// and send again.
    case renewAccessToken(reason: String)

    /// Classifies a response.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - body: the response body, `{"error": {"code", "message", "status", "details": [...]}}`
    ///     on errors.
    ///   - retryAfter: the `Retry-After` delay in seconds, when sent.
    public static func classify(status: Int, body: Data, retryAfter: Double?) -> FCMResponse {
        if (200...299).contains(status) { return .outcome(.delivered(status: status)) }
        let error = Self.error(in: body)
        let name = error.errorCode ?? error.status
        let said = "FCM \(status) \(name ?? "") \(error.message ?? responseExcerpt(body))".replacingOccurrences(of: "  ", with: " ")
        if error.errorCode == "UNREGISTERED" || status == 404 {
            return .outcome(.refused(status: status, reason: said, removesDestination: true))
        }
        switch status {
        case 401 where error.errorCode != "THIRD_PARTY_AUTH_ERROR":
            return .renewAccessToken(reason: said)
        case 408, 429, 500...599:
            return .outcome(.retry(status: status, reason: said, retryAfter: retryAfter))
        default:
            return .outcome(.refused(status: status, reason: said, removesDestination: false))
        }
    }

    /// The parts of a Google error body; all nil when the body is not one.
    static func error(in body: Data) -> (status: String?, errorCode: String?, message: String?) {
        struct Detail: Decodable { var errorCode: String? }
        struct Status: Decodable {
            var status: String?
            var message: String?
            var details: [Detail]?
        }
        struct Envelope: Decodable { var error: Status? }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: body), let error = envelope.error else { return (nil, nil, nil) }
        let message = error.message.map { String($0.prefix(200)) }
        return (error.status, error.details?.lazy.compactMap(\.errorCode).first, message)
    }
}
