import ChimeCore
import ChimeTestSupport
import Foundation

/// Writes schedule requests as a person or another JSON library might, unlike `JSONEncoder`:
/// keys in random order and sometimes escaped, random whitespace, optional keys absent or
/// `null`, strings with every escape (short forms, `\/`, `\uXXXX` in either case, surrogate
/// pairs), whole numbers spelt `5.0` or `5e0`, repeats as `"day"`, `before` as `"90s"`.
struct VariedJSONWriter {
    /// An object member: its value text, or `nil` for an absent key, which is written as
    /// `null` half the time when `nullable`.
    typealias Member = (key: String, value: String?, nullable: Bool)

    var random: SeededRandomNumberGenerator

    init(seed: UInt64) { random = SeededRandomNumberGenerator(seed: seed) }

    mutating func coin() -> Bool { Bool.random(using: &random) }

    mutating func space() -> String {
        ["", "", " ", "\n", "\t", "\r\n  "].randomElement(using: &random) ?? ""
    }

    mutating func scheduleRequest(requestId: String?, reminders: [Reminder]) -> String {
        let reminderMembers: [Member]
        if reminders.count == 1 && coin() {
            reminderMembers = [("reminder", reminder(reminders[0]), false), ("reminders", nil, true)]
        } else {
            reminderMembers = [("reminders", array(reminders.map { reminder($0) }), false)]
        }
        let members: [Member] = [("op", string("schedule"), false), ("requestId", requestId.map { string($0) }, true)]
        return space() + object(members + reminderMembers) + space()
    }

    mutating func reminder(_ reminder: Reminder) -> String {
        let nag = reminder.nag.map { nag in
            object([("count", integer(Int64(nag.count)), false), ("interval", double(nag.interval), false)])
        }
        return object([
            ("id", reminder.id.rawValue.isEmpty && coin() ? nil : string(reminder.id.rawValue), true),
            ("recipient", string(reminder.recipient.rawValue), false),
            ("content", reminder.content == Content() && coin() ? nil : content(reminder.content), true),
            ("trigger", trigger(reminder.trigger), false),
            ("enabled", reminder.enabled && coin() ? nil : "\(reminder.enabled)", true),
            ("nag", nag, true),
        ])
    }

    mutating func content(_ content: Content) -> String {
        var badge: String?
        switch content.badgeChange {
        case .set(let number)?: badge = integer(Int64(number))
        case .increment?: badge = string(BadgeChange.incrementText)
        case nil: badge = nil
        }
        return object([
            ("title", content.title.map { string($0) }, true), ("body", content.body.map { string($0) }, true),
            ("action", content.action.map { string($0) }, true),
            ("launchImage", content.launchImage.map { string($0) }, true),
            ("sound", content.sound.map { string($0) }, true), ("badge", badge, true),
            ("userInfo", content.userInfo.map { value(.dictionary($0)) }, true),
            ("category", content.category.map { string($0) }, true),
            ("threadId", content.threadId.map { string($0) }, true),
            ("subtitle", content.subtitle.map { string($0) }, true),
            ("interruptionLevel", content.interruptionLevel == .active ? nil : string(content.interruptionLevel.rawValue), true),
            ("relevanceScore", content.relevanceScore.map { "\($0)" }, true),
            ("targetContentIdentifier", content.targetContentIdentifier.map { string($0) }, true),
            ("filterCriteria", content.filterCriteria.map { string($0) }, true),
            ("hasAction", content.hasAction ? nil : "false", true),
            ("unhandled", content.unhandled == .stack ? nil : string(content.unhandled.rawValue), true),
            ("collapseKey", content.collapseKey.map { string($0) }, true),
            ("attachments", content.attachments.map { list in
                "[" + list.map { attachment in
                    object([
                        ("identifier", string(attachment.identifier), false), ("url", string(attachment.url), false),
                        ("type", string(attachment.type), false), ("size", "\(attachment.size)", false),
                    ])
                }.joined(separator: ",") + "]"
            }, true),
            ("titleKey", content.titleKey.map { string($0) }, true),
            ("titleArgs", content.titleArgs.map { "[" + $0.map { string($0) }.joined(separator: ",") + "]" }, true),
            ("bodyKey", content.bodyKey.map { string($0) }, true),
            ("bodyArgs", content.bodyArgs.map { "[" + $0.map { string($0) }.joined(separator: ",") + "]" }, true),
            ("soundVolume", content.soundVolume.map { "\($0)" }, true),
            ("throttled", content.throttled == .hold ? nil : string(content.throttled.rawValue), true),
        ])
    }

    mutating func trigger(_ trigger: Trigger) -> String {
        var members: [Member]
        switch trigger.start {
        case .instant(let date):
            members = [("at", string(RFC3339.format(date)), false), ("timeZone", nil, true)]
        case .wallClock(let local, let zone):
            members = [("at", string(local.description), false), ("timeZone", string(zone), false)]
        }
        let repeatText = trigger.repeatRule.map { rule in
            rule.interval == 1 && coin()
                ? string(rule.unit.rawValue)
                : object([
                    ("unit", string(rule.unit.rawValue), false),
                    ("interval", rule.interval == 1 && coin() ? nil : integer(Int64(rule.interval)), true),
                ])
        }
        let before = trigger.offset.map { offset in
            offset.rounded() == offset && (0...1e6).contains(offset) && coin()
                ? string("\(Int(offset))s") : double(offset)
        }
        members += [
            ("repeat", repeatText, true), ("rrule", trigger.recurrenceRule.map { string($0.description) }, true),
            ("rdates", dateTimes(trigger.recurrenceDates), true), ("exdates", dateTimes(trigger.exceptionDates), true),
            ("monthEnd", trigger.monthEnd == .skip && coin() ? nil : string(trigger.monthEnd.rawValue), true),
            // `before: null` is an error, not an absent offset.
            ("before", before, false), ("misfire", trigger.misfire.map { string($0.rawValue) }, true),
            ("misfireThreshold", trigger.misfireThreshold.map { double($0) }, true),
        ]
        return object(members)
    }

    mutating func dateTimes(_ dates: [RecurrenceDateTime]) -> String? {
        dates.isEmpty && coin() ? nil : array(dates.map { string($0.description) })
    }

    mutating func value(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): return string(text)
        case .integer(let number): return integer(number)
        case .real(let number): return double(number)
        case .boolean(let flag): return flag ? "true" : "false"
        case .array(let values): return array(values.map { self.value($0) })
        case .dictionary(let entries): return object(entries.map { ($0.key, self.value($0.value), false) })
        }
    }

    mutating func object(_ members: [Member]) -> String {
        var written: [(key: String, value: String)] = []
        for member in members {
            if let value = member.value {
                written.append((member.key, value))
            } else if member.nullable && coin() {
                written.append((member.key, "null"))
            }
        }
        written.shuffle(using: &random)
        var text = "{" + space()
        for (index, member) in written.enumerated() {
            if index > 0 { text += space() + "," + space() }
            text += string(member.key) + space() + ":" + space() + member.value
        }
        return text + space() + "}"
    }

    mutating func array(_ values: [String]) -> String {
        var text = "[" + space()
        for (index, value) in values.enumerated() {
            if index > 0 { text += space() + "," + space() }
            text += value
        }
        return text + space() + "]"
    }

    mutating func integer(_ number: Int64) -> String {
        guard number.magnitude < 1 << 53, coin() else { return "\(number)" }
        return ["\(number).0", "\(number)e0", "\(number).00E+00", "\(number)"].randomElement(using: &random) ?? ""
    }

    /// The shortest round-tripping spelling (`1e-05`, `-0.0`, `100000.0`), or the integer
    /// form `JSONEncoder` writes for whole numbers.
    mutating func double(_ number: Double) -> String {
        if number.rounded() == number, number.magnitude < 1e15, coin() { return "\(Int64(number))" }
        return "\(number)"
    }

    mutating func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += coin() ? "\\/" : "/"
            case "\u{8}": out += coin() ? "\\b" : escape(scalar)
            case "\u{C}": out += coin() ? "\\f" : escape(scalar)
            case "\n": out += coin() ? "\\n" : escape(scalar)
            case "\r": out += coin() ? "\\r" : escape(scalar)
            case "\t": out += coin() ? "\\t" : escape(scalar)
            case "\u{0}"..."\u{1F}": out += escape(scalar)
            default:
                if Int.random(in: 0..<4, using: &random) == 0 {
                    out += escape(scalar)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `\uXXXX`, a surrogate pair above U+FFFF, hex digits in random case.
    mutating func escape(_ scalar: Unicode.Scalar) -> String {
        let units = scalar.value > 0xFFFF
            ? [0xD800 + ((scalar.value - 0x10000) >> 10), 0xDC00 + ((scalar.value - 0x10000) & 0x3FF)]
            : [scalar.value]
        return units.map { unit in
            let hex = String(unit, radix: 16, uppercase: coin())
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }.joined()
    }
}
