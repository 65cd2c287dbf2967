import Foundation
import HTTPClient

/// How a webhook's answer maps to a ``DeliveryResult`` (Standard Webhooks, "Retry schedule";
/// Svix and GitHub behave the same):
/// - 2xx: delivered;
/// - 410 Gone: refused, and the destination is removed (the receiver says it no longer exists);
/// - 408, 429 and 5xx: retry, honouring `Retry-After`;
/// - any other status (other 4xx, 1xx, 3xx: redirects are not followed): refused;
/// - a timeout or a failed connection: retry; a TLS failure or a response over the bound: refused.
///
/// Reasons name the status and a bounded excerpt of the response body
/// (``ChimeWire/DeliveryReport/maximumExcerptBytes``).
public enum WebhookClassification {
    /// The result of an answer with `status` and `body`; `retryAfter` in seconds when given.
    public static func classify(status: Int, body: Data, retryAfter: Double?) -> DeliveryResult {
        let reason = "HTTP \(status)\(excerpt(body).map { ": \($0)" } ?? "")"
        switch status {
        case 200..<300: return .delivered(status: status)
        case 410: return .refused(status: status, reason: reason, removesDestination: true)
        case 408, 429, 500..<600: return .retry(status: status, reason: reason, retryAfter: retryAfter)
        default: return .refused(status: status, reason: reason, removesDestination: false)
        }
    }

    /// The result of a request that got no answer.
    public static func classify(_ error: HTTPClientError) -> DeliveryResult {
        switch error.code {
        case .timedOut, .unreachable, .failed: .retry(status: nil, reason: error.message, retryAfter: nil)
        default: .refused(status: nil, reason: error.message, removesDestination: false)
        }
    }

    /// The first bytes of a response body as text (at most 200 bytes; `nil` when empty).
    static func excerpt(_ body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
