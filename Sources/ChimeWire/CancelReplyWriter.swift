import ChimeCore
import Foundation

/// Writes the reply to a `cancel` as its ids come, byte for byte what `WireCodec.encode(_:)`
/// makes of `ControlReply<CancelResult>` (sorted keys, slashes unescaped):
/// `{"ok":true,"requestId":"c1","result":{"cancelled":["a","b"]}}`.
///
/// A cancel of a million reminders walks them in slices (one per coordinator loop turn);
/// each slice appends its ids here, so the reply costs the last turn a copy, not the JSON of
/// every id.
public struct CancelReplyWriter: Sendable {
    private var ids: [UInt8] = []
    /// How many ids were appended.
    public private(set) var count = 0

    /// An empty list.
    public init() {}

    /// Appends `cancelled` to the list, in order.
    public mutating func append<IDs: Sequence>(_ cancelled: IDs) where IDs.Element == ReminderID {
        for id in cancelled {
            if count > 0 { ids.append(UInt8(ascii: ",")) }
            FireEvent.appendQuoted(id.rawValue, to: &ids)
            count += 1
        }
    }

    /// The reply's JSON with `requestId` echoed.
    public func reply(requestId: String?) -> Data {
        var out = Data()
        out.reserveCapacity(ids.count + 64 + (requestId?.utf8.count ?? 0) * 2)
        out.append(contentsOf: #"{"ok":true"#.utf8)
        if let requestId {
            var quoted: [UInt8] = []
            FireEvent.appendQuoted(requestId, to: &quoted)
            out.append(contentsOf: #","requestId":"#.utf8)
            out.append(contentsOf: quoted)
        }
        out.append(contentsOf: #","result":{"cancelled":["#.utf8)
        out.append(contentsOf: ids)
        out.append(contentsOf: "]}}".utf8)
        return out
    }
}

extension ControlReply where Result == CancelResult {
    /// The reply's JSON through ``CancelReplyWriter`` (an error reply through `WireCodec`).
    public func fastJSON() -> Data {
        guard ok, error == nil, warnings == nil, let result else { return WireCodec().encode(self) }
        var writer = CancelReplyWriter()
        writer.append(result.cancelled)
        return writer.reply(requestId: requestId)
    }
}
