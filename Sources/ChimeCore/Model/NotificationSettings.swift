import Foundation

/// Which parts of a notification a recipient allows (`UNNotificationSettings` /
/// `UIUserNotificationType`): alert text, sound, badge.
///
/// JSON shape: an array of names in any order, such as `["alert", "sound", "badge"]`; `[]`
/// allows nothing. Encodes in the order alert, sound, badge.
public struct NotificationSettings: OptionSet, Hashable, Sendable {
    /// The bit mask: alert 1, sound 2, badge 4.
    public var rawValue: UInt8

    /// Creates settings from their bit mask (alert 1, sound 2, badge 4).
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0b111
    }

    /// Alert text: title, body, action title and launch image.
    public static let alert = NotificationSettings(rawValue: 1 << 0)
    /// The firing's sound.
    public static let sound = NotificationSettings(rawValue: 1 << 1)
    /// Changes to the recipient's badge number.
    public static let badge = NotificationSettings(rawValue: 1 << 2)
    /// Alert, sound and badge: what an unregistered recipient gets unless
    /// `requireRegistration` is on.
    public static let all: NotificationSettings = [.alert, .sound, .badge]

    /// The JSON and command-line names, in encoding order.
    private static let names: [(name: String, setting: NotificationSettings)] = [
        ("alert", .alert), ("sound", .sound), ("badge", .badge),
    ]

    /// The allowed parts by name, in the order alert, sound, badge.
    public var allowedNames: [String] {
        Self.names.filter { contains($0.setting) }.map(\.name)
    }

    /// Parses the `--allow` form: names separated by commas (`alert,sound,badge`, spaces
    /// around names ignored), or `none` (or the empty string) for nothing.
    /// - Throws: `ValidationError` `.invalidArgument` (field `settings`) for an unknown name.
    public init(parsing text: String) throws(ValidationError) {
        self = []
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed != "none" else { return }
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let setting = Self.setting(named: name) else {
                throw Self.unknownName(name)
            }
            insert(setting)
        }
    }

    private static func setting(named name: String) -> NotificationSettings? {
        names.first { $0.name == name }?.setting
    }

    private static func unknownName(_ name: String) -> ValidationError {
        ValidationError(
            .invalidArgument, field: "settings",
            "'\(name)' is not a notification setting; use alert, sound and badge (or none)")
    }
}

extension NotificationSettings: Codable {
    /// Decodes an array of names.
    /// - Throws: `DecodingError.dataCorrupted` for an unknown name.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self = []
        while !container.isAtEnd {
            let name = try container.decode(String.self)
            guard let setting = Self.setting(named: name) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: Self.unknownName(name).message)
            }
            insert(setting)
        }
    }

    /// Encodes the allowed names in the order alert, sound, badge.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(contentsOf: allowedNames)
    }
}
