import Foundation

/// How an action launches its handler (`UIUserNotificationActivationMode`,
/// `UNNotificationActionOptions.foreground`).
public enum ActivationMode: String, Codable, Hashable, Sendable, CaseIterable {
    /// Brings the app forward: Chime publishes an event on `action.<recipient>` for the
    /// subscriber to bring up.
    case foreground
    /// Runs the handler without bringing anything forward (the default).
    case background
}

/// A button shown with a notification (`UNNotificationAction`).
///
/// JSON shape: `{"identifier": "snooze", "title": "Snooze", "destructive": false,
/// "authenticationRequired": false, "activationMode": "background", "textInput":
/// {"buttonTitle": "Send", "placeholder": "Reply…"}, "icon": {"systemImageName": "bell"}}`;
/// `identifier` and `title` are required, the rest default to `false`, `false`,
/// `"background"`, no text input and no icon.
public struct NotificationAction: Codable, Hashable, Sendable {
    /// The action's id within its category, sent back by `chime act FIRING_ID ACTION_ID`.
    public var identifier: String
    /// The button's title.
    public var title: String
    /// Whether the action destroys something (shown in red on iOS); marked in events and logs.
    public var destructive: Bool
    /// Whether the action needs the recipient's token (the device unlock on iOS).
    public var authenticationRequired: Bool
    /// Whether the action brings the app forward.
    public var activationMode: ActivationMode
    /// The text field it shows (a text-input action, the only kind `act --text` is taken
    /// for); `nil`: a plain button.
    public var textInput: TextInputOptions?
    /// Its icon (iOS 15); `nil`: none.
    public var icon: ActionIcon?

    /// Creates an action without checking it; see ``validate(field:)``.
    public init(
        identifier: String, title: String, destructive: Bool = false, authenticationRequired: Bool = false,
        activationMode: ActivationMode = .background, textInput: TextInputOptions? = nil, icon: ActionIcon? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.destructive = destructive
        self.authenticationRequired = authenticationRequired
        self.activationMode = activationMode
        self.textInput = textInput
        self.icon = icon
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier, title, destructive, authenticationRequired, activationMode, textInput, icon
    }

    /// Decodes the JSON shape above, defaulting the optional fields.
    /// - Throws: `DecodingError` for a missing identifier or title, an unknown activation mode, or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        title = try container.decode(String.self, forKey: .title)
        destructive = try container.decodeIfPresent(Bool.self, forKey: .destructive) ?? false
        authenticationRequired = try container.decodeIfPresent(Bool.self, forKey: .authenticationRequired) ?? false
        activationMode = try container.decodeIfPresent(ActivationMode.self, forKey: .activationMode) ?? .background
        textInput = try container.decodeIfPresent(TextInputOptions.self, forKey: .textInput)
        icon = try container.decodeIfPresent(ActionIcon.self, forKey: .icon)
    }

    /// Checks that the identifier is 1–256 bytes without control characters, that the
    /// title is not empty, and the text input and icon (see their `validate(field:)`).
    /// - Parameter field: the action's dotted path, such as `categories[0].actions[1]`.
    /// - Throws: `ValidationError` `.invalidArgument` naming `<field>.identifier`,
    ///   `<field>.title` or a field of `<field>.textInput` or `<field>.icon`.
    public func validate(field: String) throws(ValidationError) {
        try validateIdentifier(identifier, field: "\(field).identifier", maximumLength: 256)
        if title.isEmpty {
            throw ValidationError(.invalidArgument, field: "\(field).title", "must not be empty")
        }
        try textInput?.validate(field: "\(field).textInput")
        try icon?.validate(field: "\(field).icon")
    }
}

/// A set of actions a reminder selects with `content.category` (`UNNotificationCategory`,
/// `UIUserNotificationCategory`).
///
/// JSON shape: `{"identifier": "meeting", "actions": [action, …], "minimalActions":
/// [action, …], "hiddenPreviewsBodyPlaceholder": "Reminder", "summaryFormat": "%u more
/// reminders"}`. `actions` is the default context (at most 4 buttons); `minimalActions`
/// the minimal context (at most 2) and, when absent, the first two of `actions`.
public struct NotificationCategory: Codable, Hashable, Sendable {
    /// The most actions in the default context.
    public static let maximumDefaultActions = 4
    /// The most actions in the minimal context.
    public static let maximumMinimalActions = 2

    /// The category's id, matched against `content.category`.
    public var identifier: String
    /// The actions of the default context, in display order.
    public var actions: [NotificationAction]
    /// The actions of the minimal context as given; `nil` means the first two of ``actions``.
    public var minimalActions: [NotificationAction]?
    /// The body shown instead of the firing's when the recipient hides previews
    /// (`hiddenPreviewsBodyPlaceholder`, 1 to 256 bytes), for the app that registers the
    /// category on the device from the recipient's registration (a device-side setting: no
    /// push payload carries it); `nil`: the platform's default.
    public var hiddenPreviewsBodyPlaceholder: String?
    /// The line a scheduled summary shows for this category's firings (``SummaryFormat``:
    /// `"%u more reminders"`, `categorySummaryFormat`); `nil`: none.
    public var summaryFormat: String?

    /// Creates a category without checking it; see ``validate(field:)``.
    public init(
        identifier: String, actions: [NotificationAction] = [], minimalActions: [NotificationAction]? = nil,
        hiddenPreviewsBodyPlaceholder: String? = nil, summaryFormat: String? = nil
    ) {
        self.identifier = identifier
        self.actions = actions
        self.minimalActions = minimalActions
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
        self.summaryFormat = summaryFormat
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case identifier, actions, minimalActions, hiddenPreviewsBodyPlaceholder, summaryFormat
    }

    /// Decodes the JSON shape above; `actions` defaults to `[]`.
    /// - Throws: `DecodingError` for a missing identifier, a malformed action, or an unknown key.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        actions = try container.decodeIfPresent([NotificationAction].self, forKey: .actions) ?? []
        minimalActions = try container.decodeIfPresent([NotificationAction].self, forKey: .minimalActions)
        hiddenPreviewsBodyPlaceholder = try container.decodeIfPresent(String.self, forKey: .hiddenPreviewsBodyPlaceholder)
        summaryFormat = try container.decodeIfPresent(String.self, forKey: .summaryFormat)
    }

    /// The actions shown in the minimal context: ``minimalActions``, or the first two of
    /// ``actions`` when it is absent.
    public var effectiveMinimalActions: [NotificationAction] {
        minimalActions ?? Array(actions.prefix(Self.maximumMinimalActions))
    }

    /// The action with `identifier` in either context, or `nil` when the category has none:
    /// what `chime act` checks before anything is done.
    public func action(withIdentifier identifier: String) -> NotificationAction? {
        actions.first { $0.identifier == identifier }
            ?? minimalActions?.first { $0.identifier == identifier }
    }

    /// Checks the identifier, each action, the context sizes, and that no identifier repeats
    /// within a context. An action listed in both contexts must be the same in both, so an
    /// identifier always means one action.
    /// - Parameter field: the category's dotted path, such as `categories[0]`.
    /// - Throws: `ValidationError` `.invalidArgument` naming the first offending field, such
    ///   as `categories[0].actions` for five default actions.
    public func validate(field: String) throws(ValidationError) {
        try validateIdentifier(identifier, field: "\(field).identifier", maximumLength: 256)
        if let hiddenPreviewsBodyPlaceholder {
            try validateLabel(hiddenPreviewsBodyPlaceholder, field: "\(field).hiddenPreviewsBodyPlaceholder")
        }
        if let summaryFormat { try SummaryFormat.validate(summaryFormat, field: "\(field).summaryFormat") }
        try Self.validate(
            actions, field: "\(field).actions", context: "default", maximum: Self.maximumDefaultActions)
        guard let minimalActions else { return }
        try Self.validate(
            minimalActions, field: "\(field).minimalActions", context: "minimal",
            maximum: Self.maximumMinimalActions)
        for (index, minimal) in minimalActions.enumerated() {
            if let other = actions.first(where: { $0.identifier == minimal.identifier }), other != minimal {
                throw ValidationError(
                    .invalidArgument, field: "\(field).minimalActions[\(index)]",
                    "action '\(minimal.identifier)' differs from the default-context action of the same identifier")
            }
        }
    }

    private static func validate(
        _ actions: [NotificationAction], field: String, context: String, maximum: Int
    ) throws(ValidationError) {
        if actions.count > maximum {
            throw ValidationError(
                .invalidArgument, field: field,
                "has \(actions.count) actions; a category holds at most \(maximum) actions in the \(context) context")
        }
        var seen: Set<String> = []
        for (index, action) in actions.enumerated() {
            try action.validate(field: "\(field)[\(index)]")
            if !seen.insert(action.identifier).inserted {
                throw ValidationError(
                    .invalidArgument, field: "\(field)[\(index)].identifier",
                    "action identifier '\(action.identifier)' appears more than once in the \(context) context")
            }
        }
    }
}
