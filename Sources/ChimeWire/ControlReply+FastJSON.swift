import ChimeCore
import Foundation

extension ControlReply where Result == ScheduleResult {
    /// The reply's JSON, byte for byte what `WireCodec.encode(_:)` produces (sorted keys,
    /// slashes unescaped, absent optionals left out), written by hand: a bulk `schedule` of
    /// 1,000 reminders answers with 1,000 items, and `JSONEncoder` took a quarter of the
    /// coordinator's CPU during bulk ingest.
    ///
    /// Shape: `{"ok":true,"requestId":"q1","result":{"scheduled":[{"id":"a",
    /// "nextFireAt":"2026-12-24T09:00:00.000Z","replaced":false,"state":"pending"}]},
    /// "warnings":["…"]}`; an error reply goes through `WireCodec`.
    public func fastJSON() -> Data {
        guard ok, error == nil, let result else { return WireCodec().encode(self) }
        var out: [UInt8] = []
        out.reserveCapacity(64 + result.scheduled.count * 96)
        out.append(contentsOf: #"{"ok":true"#.utf8)
        if let requestId {
            out.append(contentsOf: #","requestId":"#.utf8)
            FireEvent.appendQuoted(requestId, to: &out)
        }
        out.append(contentsOf: #","result":{"scheduled":["#.utf8)
        for (index, item) in result.scheduled.enumerated() {
            out.append(contentsOf: (index == 0 ? #"{"id":"# : #",{"id":"#).utf8)
            FireEvent.appendQuoted(item.id.rawValue, to: &out)
            if let nextFireAt = item.nextFireAt {
                out.append(contentsOf: #","nextFireAt":""#.utf8)
                out.append(contentsOf: RFC3339.format(nextFireAt).utf8)
                out.append(UInt8(ascii: "\""))
            }
            out.append(contentsOf: (item.replaced ? #","replaced":true,"state":"# : #","replaced":false,"state":"#).utf8)
            FireEvent.appendQuoted(item.state.rawValue, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}".utf8)
        if let warnings {
            out.append(contentsOf: #","warnings":["#.utf8)
            for (index, warning) in warnings.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                FireEvent.appendQuoted(warning, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }
}
