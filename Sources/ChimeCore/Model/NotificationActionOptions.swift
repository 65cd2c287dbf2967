import Foundation

/// What a text-input action asks for (`UNTextInputNotificationAction`): the button that sends
/// the text and the placeholder of the field. Only an action that declares it takes
/// `chime act … --text`.
///
/// JSON shape: `{"buttonTitle": "Send", "placeholder": "Reply…"}`; `buttonTitle` required,
/// both 1 to 256 UTF-8 bytes.
public struct TextInputOptions: Hashable, Sendable {
    /// The title of the button that sends the text (`textInputButtonTitle`).
    public var buttonTitle: String
    /// The text shown in the empty field (`textInputPlaceholder`); `nil`: none.
    public var placeholder: String?

    /// Creates the options; not checked, see ``validate(field:)``.
    public init(buttonTitle: String, placeholder: String? = nil) {
        self.buttonTitle = buttonTitle
        self.placeholder = placeholder
    }

    /// Checks both strings are 1 to 256 bytes.
    /// - Throws: `ValidationError` `.invalidArgument` naming `<field>.buttonTitle` or `<field>.placeholder`.
    public func validate(field: String) throws(ValidationError) {
        try validateLabel(buttonTitle, field: "\(field).buttonTitle")
        if let placeholder { try validateLabel(placeholder, field: "\(field).placeholder") }
    }
}

extension TextInputOptions: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case buttonTitle, placeholder
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for a missing `buttonTitle`, a malformed field or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        buttonTitle = try container.decode(String.self, forKey: .buttonTitle)
        placeholder = try container.decodeIfPresent(String.self, forKey: .placeholder)
    }
}

/// An action's icon (`UNNotificationActionIcon`, iOS 15): an SF Symbol by name or a template
/// image of the app's bundle by name, exactly one of the two.
///
/// JSON shape: `{"systemImageName": "bell"}` or `{"templateImageName": "snooze-icon"}`; the
/// name 1 to 256 UTF-8 bytes.
public enum ActionIcon: Hashable, Sendable {
    /// An SF Symbol (`UNNotificationActionIcon(systemImageName:)`).
    case system(String)
    /// A template image in the app's bundle (`UNNotificationActionIcon(templateImageName:)`).
    case template(String)

    /// The image name.
    public var name: String {
        switch self {
        case .system(let name), .template(let name): name
        }
    }

    /// Checks the name is 1 to 256 bytes.
    /// - Throws: `ValidationError` `.invalidArgument` naming `<field>.systemImageName` or
    ///   `<field>.templateImageName`.
    public func validate(field: String) throws(ValidationError) {
        switch self {
        case .system(let name): try validateLabel(name, field: "\(field).systemImageName")
        case .template(let name): try validateLabel(name, field: "\(field).templateImageName")
        }
    }
}

extension ActionIcon: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case systemImageName, templateImageName
    }

    /// Decodes the JSON shape above.
    /// - Throws: `DecodingError` for neither or both names, a malformed name or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let system = try container.decodeIfPresent(String.self, forKey: .systemImageName)
        let template = try container.decodeIfPresent(String.self, forKey: .templateImageName)
        switch (system, template) {
        case (let name?, nil): self = .system(name)
        case (nil, let name?): self = .template(name)
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "an icon names exactly one of systemImageName and templateImageName"))
        }
    }

    /// Encodes the JSON shape above.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .system(let name): try container.encode(name, forKey: .systemImageName)
        case .template(let name): try container.encode(name, forKey: .templateImageName)
        }
    }
}

/// A category's summary format (`UNNotificationCategory.categorySummaryFormat`): the line a
/// summary shows for the category's firings in it, `%u` standing for their count and `%%` for
/// a percent sign (`"%u more reminders"`). Apple's `%@` (a summary argument) has no
/// counterpart in Chime's content and is refused.
public enum SummaryFormat {
    /// The longest format, in UTF-8 bytes.
    public static let maximumLength = 256

    /// `format` with `%u` replaced by `count` and `%%` by `%`.
    public static func text(_ format: String, count: Int) -> String {
        var text = ""
        var iterator = format.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                text.append(character)
                continue
            }
            switch iterator.next() {
            case "u": text += String(count)
            case "%": text.append("%")
            case let other?: text.append("%"); text.append(other)
            case nil: text.append("%")
            }
        }
        return text
    }

    /// Checks `format` is 1 to 256 bytes whose only specifiers are `%u` and `%%`.
    /// - Throws: `ValidationError` `.invalidArgument` naming `field`.
    public static func validate(_ format: String, field: String) throws(ValidationError) {
        try validateLabel(format, field: field)
        var iterator = format.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else { continue }
            let next = iterator.next()
            guard next == "u" || next == "%" else {
                throw ValidationError(
                    .invalidArgument, field: field,
                    "takes %u (the count) and %% only, not %\(next.map(String.init) ?? "") in '\(format)'")
            }
        }
    }
}

/// Checks a display string is 1 to 256 UTF-8 bytes.
func validateLabel(_ text: String, field: String) throws(ValidationError) {
    guard !text.isEmpty, text.utf8.count <= 256 else {
        throw ValidationError(.invalidArgument, field: field, "must be 1 to 256 bytes, not \(text.utf8.count)")
    }
}
