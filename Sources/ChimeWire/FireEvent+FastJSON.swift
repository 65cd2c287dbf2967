import ChimeCore
import Foundation

extension FireEvent {
    /// The event's JSON, byte for byte what `WireCodec.encode(_:)` produces (sorted keys,
    /// slashes unescaped), written by hand: a worker encodes one per firing, and Foundation's
    /// `JSONEncoder` was most of a worker's CPU in a burst. `userInfo` still goes through
    /// `userInfoEncoder` (sorted keys), as its values are open-ended.
    public func fastJSON(userInfoEncoder: JSONEncoder) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(320)
        var first = true
        func key(_ name: StaticString) {
            out.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            out.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            Self.appendQuoted(value, to: &out)
        }
        func raw(_ name: StaticString, _ text: String) {
            key(name)
            out.append(contentsOf: text.utf8)
        }
        let content = firing.content
        let attention = content.hasAttentionFields
        // The later fields (attachments, keys, critical volume) are rare and open-ended: through
        // the encoder, each in its sorted place.
        let extended = content.hasExtendedFields
        func encoded(_ name: StaticString, _ value: (some Encodable)?) {
            guard extended, let value, let json = try? userInfoEncoder.encode(value) else { return }
            key(name)
            out.append(contentsOf: json)
        }
        string("action", content.action)
        encoded("attachments", content.attachments)
        raw("attempt", String(firing.attempt))
        switch content.badgeChange {
        case .set(let number)?: raw("badge", String(number))
        case .increment?: string("badge", BadgeChange.incrementText)
        case nil: break
        }
        string("body", content.body)
        encoded("bodyArgs", content.bodyArgs)
        if extended { string("bodyKey", content.bodyKey) }
        string("category", content.category)
        if attention { string("collapseKey", content.collapseKey) }
        string("dueAt", RFC3339.format(firing.dueAt))
        if let eventAt = firing.eventAt { string("eventAt", RFC3339.format(eventAt)) }
        if attention { string("filterCriteria", content.filterCriteria) }
        string("firedAt", RFC3339.format(firedAt))
        string("firingId", firing.firingId.text)
        if !content.hasAction { raw("hasAction", "false") }
        if content.interruptionLevel != .active { string("interruptionLevel", content.interruptionLevel.rawValue) }
        raw("late", firing.late ? "true" : "false")
        string("launchImage", content.launchImage)
        if let missed = firing.missed { raw("missed", String(missed)) }
        string("publisher", publisher.rawValue)
        string("recipient", firing.recipient.rawValue)
        // Foundation's spelling of a Double (`1` for 1.0, exponents as it writes them); rare, so not by hand.
        if let score = content.relevanceScore, let json = try? userInfoEncoder.encode(score) {
            key("relevanceScore")
            out.append(contentsOf: json)
        }
        string("reminderId", firing.reminderId.rawValue)
        raw("seq", String(seq))
        if let shard { raw("shard", String(shard)) }
        string("sound", content.sound)
        encoded("soundVolume", content.soundVolume)
        if attention {
            string("subtitle", content.subtitle)
            string("targetContentIdentifier", content.targetContentIdentifier)
        }
        string("threadId", content.threadId)
        if extended && content.throttled != .hold { string("throttled", content.throttled.rawValue) }
        string("title", content.title)
        encoded("titleArgs", content.titleArgs)
        if extended { string("titleKey", content.titleKey) }
        raw("type", "\"fire\"")
        if content.unhandled != .stack { string("unhandled", content.unhandled.rawValue) }
        if let userInfo = content.userInfo, let json = try? userInfoEncoder.encode(userInfo) {
            key("userInfo")
            out.append(contentsOf: json)
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// Appends `value` as a JSON string the way Foundation's encoder writes it: `"` and `\`
    /// escaped, `\b \f \n \r \t` short forms, other control characters as `\u00XX`, the rest as
    /// UTF-8 (slashes unescaped).
    static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
