import ChimeCore
import Foundation

/// Reads one field of a control message, a reply or a reminder's JSON without decoding the
/// rest: the `requestId` a request or reply carries (to answer or match it), the error a
/// short reply carries (to wait it out or follow a redirect), the recipient of one reminder
/// (to route it to its shard).
///
/// Total: bytes that do not hold the field, or are not JSON at all, give `nil`, never a
/// throw; a caller that needs the whole message decodes it afterwards and reports what is
/// wrong with it.
public enum WirePeek {
    private struct RequestHead: Decodable { var requestId: String? }
    private struct RecipientHead: Decodable { var recipient: RecipientID }

    /// The `requestId` of a request or a reply, when it has one.
    public static func requestId(in message: Data) -> String? {
        (try? JSONDecoder().decode(RequestHead.self, from: message))?.requestId
    }

    /// The error a reply carries (`nil` for a reply that succeeded or does not decode).
    public static func error(in reply: Data) -> WireError? {
        (try? JSONDecoder().decode(ControlReply<EmptyResult>.self, from: reply))?.error
    }

    /// The `recipient` of one reminder's wire JSON.
    public static func recipient(in reminder: Data) -> RecipientID? {
        (try? JSONDecoder().decode(RecipientHead.self, from: reminder))?.recipient
    }
}
