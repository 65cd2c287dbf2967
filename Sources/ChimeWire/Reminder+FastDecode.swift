import ChimeCore

// Each `init(fastJSON:)` mirrors the type's `init(from:)` in ChimeCore key by key: a key
// decoded with `decodeIfPresent` may be absent or `null`, one decoded with `decode` must be
// there. Anything `init(from:)` would throw on, and any key it would ignore, is Unsupported.

extension Reminder {
    /// Reads a reminder object as `Reminder.init(from:)` decodes it.
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        var id: ReminderID??
        var recipient: RecipientID?
        var content: Content??
        var trigger: Trigger?
        var enabled: Bool??
        var nag: NagPolicy??
        var object = try reader.beginObject()
        while let key = try reader.nextKey(in: &object) {
            switch key {
            case "id": try id.setOnce(reader.readStringOrNull().map(ReminderID.init(rawValue:)))
            case "recipient": try recipient.setOnce(RecipientID(rawValue: reader.readString()))
            case "content": try content.setOnce(reader.consumeNull() ? nil : Content(fastJSON: &reader))
            case "trigger": try trigger.setOnce(Trigger(fastJSON: &reader))
            case "enabled": try enabled.setOnce(reader.consumeNull() ? nil : reader.readBool())
            case "nag": try nag.setOnce(reader.consumeNull() ? nil : NagPolicy(fastJSON: &reader))
            default: throw FastJSONReader.Unsupported()
            }
        }
        guard let recipient, let trigger else { throw FastJSONReader.Unsupported() }
        self.init(
            id: (id ?? nil) ?? ReminderID(""), recipient: recipient, content: (content ?? nil) ?? Content(),
            trigger: trigger, enabled: (enabled ?? nil) ?? true, nag: nag ?? nil)
    }
}

extension Content {
    /// Reads a content object as `Content.init(from:)` decodes it.
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        var title: String??
        var body: String??
        var action: String??
        var launchImage: String??
        var sound: String??
        var badgeChange: BadgeChange??
        var userInfo: [String: PropertyListValue]??
        var category: String??
        var threadId: String??
        var subtitle: String??
        var interruptionLevel: InterruptionLevel??
        var relevanceScore: Double??
        var targetContentIdentifier: String??
        var filterCriteria: String??
        var hasAction: Bool??
        var unhandled: UnhandledPolicy??
        var collapseKey: String??
        var attachments: [NotificationAttachment]??
        var titleKey: String??
        var titleArgs: [String]??
        var bodyKey: String??
        var bodyArgs: [String]??
        var soundVolume: Double??
        var throttled: ThrottledPolicy??
        var object = try reader.beginObject()
        while let key = try reader.nextKey(in: &object) {
            switch key {
            case "title": try title.setOnce(reader.readStringOrNull())
            case "body": try body.setOnce(reader.readStringOrNull())
            case "action": try action.setOnce(reader.readStringOrNull())
            case "launchImage": try launchImage.setOnce(reader.readStringOrNull())
            case "sound": try sound.setOnce(reader.readStringOrNull())
            case "badge": try badgeChange.setOnce(reader.consumeNull() ? nil : BadgeChange(fastJSON: &reader))
            case "userInfo":
                try userInfo.setOnce(reader.consumeNull() ? nil : PropertyListValue.dictionary(fastJSON: &reader))
            case "category": try category.setOnce(reader.readStringOrNull())
            case "threadId": try threadId.setOnce(reader.readStringOrNull())
            case "subtitle": try subtitle.setOnce(reader.readStringOrNull())
            case "interruptionLevel":
                try interruptionLevel.setOnce(
                    reader.readStringOrNull().map { name throws(FastJSONReader.Unsupported) in
                        guard let level = InterruptionLevel(rawValue: name) else { throw FastJSONReader.Unsupported() }
                        return level
                    })
            case "relevanceScore": try relevanceScore.setOnce(reader.consumeNull() ? nil : reader.readDouble())
            case "targetContentIdentifier": try targetContentIdentifier.setOnce(reader.readStringOrNull())
            case "filterCriteria": try filterCriteria.setOnce(reader.readStringOrNull())
            case "hasAction": try hasAction.setOnce(reader.consumeNull() ? nil : reader.readBool())
            case "unhandled":
                try unhandled.setOnce(
                    reader.readStringOrNull().map { name throws(FastJSONReader.Unsupported) in
                        guard let policy = UnhandledPolicy(rawValue: name) else { throw FastJSONReader.Unsupported() }
                        return policy
                    })
            case "collapseKey": try collapseKey.setOnce(reader.readStringOrNull())
            case "attachments": try attachments.setOnce(reader.consumeNull() ? nil : NotificationAttachment.fastList(&reader))
            case "titleKey": try titleKey.setOnce(reader.readStringOrNull())
            case "titleArgs": try titleArgs.setOnce(reader.consumeNull() ? nil : Self.fastStrings(&reader))
            case "bodyKey": try bodyKey.setOnce(reader.readStringOrNull())
            case "bodyArgs": try bodyArgs.setOnce(reader.consumeNull() ? nil : Self.fastStrings(&reader))
            case "soundVolume": try soundVolume.setOnce(reader.consumeNull() ? nil : reader.readDouble())
            case "throttled":
                try throttled.setOnce(
                    reader.readStringOrNull().map { name throws(FastJSONReader.Unsupported) in
                        guard let policy = ThrottledPolicy(rawValue: name) else { throw FastJSONReader.Unsupported() }
                        return policy
                    })
            default: throw FastJSONReader.Unsupported()
            }
        }
        self.init(
            title: title ?? nil, body: body ?? nil, action: action ?? nil, launchImage: launchImage ?? nil,
            sound: sound ?? nil, badgeChange: badgeChange ?? nil, userInfo: userInfo ?? nil,
            category: category ?? nil, threadId: threadId ?? nil, subtitle: subtitle ?? nil,
            interruptionLevel: (interruptionLevel ?? nil) ?? .active, relevanceScore: relevanceScore ?? nil,
            targetContentIdentifier: targetContentIdentifier ?? nil, filterCriteria: filterCriteria ?? nil,
            hasAction: (hasAction ?? nil) ?? true, unhandled: (unhandled ?? nil) ?? .stack, collapseKey: collapseKey ?? nil,
            attachments: attachments ?? nil, titleKey: titleKey ?? nil, titleArgs: titleArgs ?? nil, bodyKey: bodyKey ?? nil,
            bodyArgs: bodyArgs ?? nil, soundVolume: soundVolume ?? nil, throttled: (throttled ?? nil) ?? .hold)
    }

    /// An array of strings (no `null` inside, as `[String]` decodes).
    private static func fastStrings(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) -> [String] {
        var list: [String] = []
        var array = try reader.beginArray()
        while try reader.nextElement(in: &array) { list.append(try reader.readString()) }
        return list
    }
}

extension NotificationAttachment {
    /// An attachment list as ``NotificationAttachment/init(from:)`` decodes it: every key
    /// required and once, no other; more than ``maximumCount`` is left to the decoder's error.
    fileprivate static func fastList(_ reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) -> [NotificationAttachment] {
        var list: [NotificationAttachment] = []
        var array = try reader.beginArray()
        while try reader.nextElement(in: &array) {
            guard list.count < maximumCount else { throw FastJSONReader.Unsupported() }
            var identifier: String?
            var url: String?
            var type: String?
            var size: Int?
            var object = try reader.beginObject()
            while let key = try reader.nextKey(in: &object) {
                switch key {
                case "identifier": try identifier.setOnce(reader.readString())
                case "url": try url.setOnce(reader.readString())
                case "type": try type.setOnce(reader.readString())
                case "size": try size.setOnce(reader.readInt())
                default: throw FastJSONReader.Unsupported()
                }
            }
            guard let identifier, let url, let type, let size else { throw FastJSONReader.Unsupported() }
            list.append(NotificationAttachment(identifier: identifier, url: url, type: type, size: size))
        }
        return list
    }
}

extension BadgeChange {
    /// Reads a badge as `BadgeChange.init(from:)` decodes it: an `Int`, or the string `"+1"`.
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        switch try reader.nextValueKind() {
        case .number:
            self = .set(try reader.readInt())
        case .string:
            guard try reader.readString() == Self.incrementText else { throw FastJSONReader.Unsupported() }
            self = .increment
        default:
            throw FastJSONReader.Unsupported()
        }
    }
}

extension NagPolicy {
    /// Reads `{"count", "interval"}` as `NagPolicy.init(from:)` decodes it (both required).
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        var count: Int?
        var interval: Double?
        var object = try reader.beginObject()
        while let key = try reader.nextKey(in: &object) {
            switch key {
            case "count": try count.setOnce(reader.readInt())
            case "interval": try interval.setOnce(reader.readSeconds())
            default: throw FastJSONReader.Unsupported()
            }
        }
        guard let count, let interval else { throw FastJSONReader.Unsupported() }
        self.init(count: count, interval: interval)
    }
}

extension PropertyListValue {
    /// Reads a value as `PropertyListValue.init(from:)` decodes it: `true`/`false` as booleans,
    /// numbers as `Number.propertyListValue()` decides; `null` is Unsupported (it throws).
    init(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported) {
        switch try reader.nextValueKind() {
        case .string:
            self = .string(try reader.readString())
        case .number:
            self = try reader.readNumber().propertyListValue()
        case .boolean:
            self = .boolean(try reader.readBool())
        case .array:
            var values: [PropertyListValue] = []
            var array = try reader.beginArray()
            while try reader.nextElement(in: &array) {
                values.append(try PropertyListValue(fastJSON: &reader))
            }
            self = .array(values)
        case .object:
            self = .dictionary(try Self.dictionary(fastJSON: &reader))
        case .null:
            throw FastJSONReader.Unsupported()
        }
    }

    /// Reads an object of values, as `[String: PropertyListValue]` decodes; a key given twice
    /// (as `String` equality sees it) is Unsupported.
    static func dictionary(fastJSON reader: inout FastJSONReader) throws(FastJSONReader.Unsupported)
        -> [String: PropertyListValue]
    {
        var entries: [String: PropertyListValue] = [:]
        var object = try reader.beginObject()
        while let key = try reader.nextStringKey(in: &object) {
            let value = try PropertyListValue(fastJSON: &reader)
            guard entries.updateValue(value, forKey: key) == nil else { throw FastJSONReader.Unsupported() }
        }
        return entries
    }
}
