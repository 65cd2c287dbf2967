import Foundation

/// How a ``Destination`` is reached: its `kind`.
public enum ChannelKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// An HTTP endpoint (Standard Webhooks).
    case webhook
    /// Apple Push Notification service.
    case apns
    /// Firebase Cloud Messaging.
    case fcm
}

extension Destination {
    /// The channel this destination is reached over.
    public var channelKind: ChannelKind {
        switch self {
        case .webhook: .webhook
        case .apns: .apns
        case .fcm: .fcm
        }
    }
}

/// The delivery channels a recipient opted out of (Knock's preference sets, Novu's subscriber
/// preferences per channel): for every firing (`"*"`) and per category. An opted-out channel
/// gets no delivery of the firings it covers; the fire event is still published (the
/// subscriber channel is not a destination) and the firing is acknowledged as usual.
///
/// JSON shape (the recipient's `"optedOutChannels"`): `{"*": ["fcm"], "promo": ["apns",
/// "webhook"]}`, keys `"*"` or category identifiers (1 to 256 bytes, at most
/// ``Recipient/maximumCategories``), values channel names.
public struct ChannelOptOuts: Hashable, Sendable {
    /// The key that covers every firing, whatever its category.
    public static let everyFiring = "*"
    /// The opted-out channels by `"*"` or category identifier.
    public var channels: [String: Set<ChannelKind>]

    /// Creates the value; not checked, see ``validate()``.
    public init(_ channels: [String: Set<ChannelKind>] = [:]) {
        self.channels = channels
    }

    /// Whether no channel is opted out of.
    public var isEmpty: Bool { channels.values.allSatisfy(\.isEmpty) }

    /// The channels a firing of `category` (`nil`: none) is not delivered over: those of
    /// `"*"` and of its category.
    public func channels(forCategory category: String?) -> Set<ChannelKind> {
        let every = channels[Self.everyFiring] ?? []
        guard let category, let own = channels[category] else { return every }
        return every.union(own)
    }

    /// Whether some category (not `"*"`) has channels of its own.
    public var hasCategoryEntries: Bool {
        channels.contains { $0.key != Self.everyFiring && !$0.value.isEmpty }
    }

    /// Checks the number of keys and each key's length.
    /// - Throws: `ValidationError` `.invalidArgument` naming `optedOutChannels`.
    public func validate() throws(ValidationError) {
        guard channels.count <= Recipient.maximumCategories else {
            throw ValidationError(
                .invalidArgument, field: "optedOutChannels",
                "has \(channels.count) entries; at most \(Recipient.maximumCategories) are allowed")
        }
        for key in channels.keys.sorted() where key.isEmpty || key.utf8.count > 256 {
            throw ValidationError(
                .invalidArgument, field: "optedOutChannels", "a key is \"*\" or a category identifier of 1 to 256 bytes, not \(key.utf8.count) bytes")
        }
    }
}

extension ChannelOptOuts: Codable {
    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a value that is not an object of channel-name lists, or one
    ///   of more than ``Recipient/maximumCategories`` keys (counted before any value is decoded).
    public init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: AnyCodingKey.self)
        if keyed.allKeys.count > Recipient.maximumCategories {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "at most \(Recipient.maximumCategories) entries, not \(keyed.allKeys.count)"))
        }
        let container = try decoder.singleValueContainer()
        channels = try container.decode([String: [ChannelKind]].self).mapValues(Set.init)
    }

    /// Encodes the JSON shape above, each list in channel order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        let order = ChannelKind.allCases
        try container.encode(channels.mapValues { set in order.filter(set.contains) })
    }
}
