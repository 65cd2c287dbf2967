import ChimeCore

/// What every form needs: the CSRF token to carry and whether changes are allowed at all.
public struct FormContext: Sendable {
    /// The token every `POST` must carry (field `csrf`).
    public var csrfToken: String
    /// Whether the dashboard refuses changes (then no buttons are drawn).
    public var readOnly: Bool

    /// Creates the value from its fields.
    public init(csrfToken: String, readOnly: Bool) {
        self.csrfToken = csrfToken
        self.readOnly = readOnly
    }
}

/// The `POST /actions` form of a ``DashboardAction`` and its fields both ways.
enum ActionForm {
    /// The form fields naming `action` (without the CSRF token and confirmation).
    static func fields(_ action: DashboardAction) -> [(String, String)] {
        switch action {
        case .setEnabled(let id, let recipient, let enabled):
            [("action", enabled ? "enable" : "disable"), ("recipient", recipient.rawValue), ("id", id.rawValue)]
        case .cancel(let id, let recipient): [("action", "cancel"), ("recipient", recipient.rawValue), ("id", id.rawValue)]
        case .retry(let firing): [("action", "retry"), ("firing", firing.description)]
        case .retryAll: [("action", "retry-all")]
        case .deleteDeadLetter(let firing): [("action", "delete"), ("firing", firing.description)]
        }
    }

    /// The action a form names, or a sentence saying what is missing or wrong.
    static func action(from fields: [String: String]) -> Result<DashboardAction, ActionFormError> {
        let recipient = fields["recipient"].flatMap { $0.isEmpty ? nil : RecipientID($0) }
        let id = fields["id"].flatMap { $0.isEmpty ? nil : ReminderID($0) }
        switch fields["action"] ?? "" {
        case "enable", "disable", "cancel":
            guard let recipient, let id else { return .failure(ActionFormError("the form needs a recipient and a reminder id")) }
            if fields["action"] == "cancel" { return .success(.cancel(id, recipient: recipient)) }
            return .success(.setEnabled(id, recipient: recipient, enabled: fields["action"] == "enable"))
        case "retry", "delete":
            guard let text = fields["firing"], let firing = FiringID(text) else {
                return .failure(ActionFormError("the form needs a firing id such as standup@2026-12-24T08:00:00.000Z"))
            }
            return .success(fields["action"] == "delete" ? .deleteDeadLetter(firing) : .retry(firing))
        case "retry-all":
            return .success(.retryAll)
        case let other:
            return .failure(ActionFormError("unknown action '\(other)'; expected enable, disable, cancel, retry, retry-all or delete"))
        }
    }

    /// A button that posts `action` (to the confirmation page first); nothing when read-only.
    static func button(_ action: DashboardAction, label: String, context: FormContext, danger: Bool = false) -> HTML {
        guard !context.readOnly else { return .empty }
        let hidden = fields(action).map { name, value -> HTML in "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">" }
        // Markup, not text: a String here would be escaped to class=&quot;danger&quot;.
        let style: HTML = danger ? " class=\"danger\"" : .empty
        return """
            <form class="inline" method="post" action="/actions"><input type="hidden" name="csrf" value="\(context.csrfToken)">\
            \(hidden)<button type="submit"\(style)>\(label)</button></form>
            """
    }
}

/// A form that names no action the dashboard knows.
struct ActionFormError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension DashboardPages {
    /// "Are you sure?": the same fields again with `confirm=yes`, and a way back.
    public static func confirmation(_ action: DashboardAction, context: FormContext, back: String) -> DashboardPage {
        let hidden = ActionForm.fields(action).map { name, value -> HTML in
            "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">"
        }
        let content: HTML = """
            <p id="question">\(action.question)</p>
            <form method="post" action="/actions"><input type="hidden" name="csrf" value="\(context.csrfToken)">\(hidden)\
            <input type="hidden" name="confirm" value="yes"><button type="submit" class="danger">Yes, do it</button> \
            <a href="\(back)">No, go back</a></form>
            """
        return DashboardPage(title: "Confirm", section: "", content: content)
    }

    /// What an action did (or why it failed), with a link back.
    public static func actionResult(_ sentence: String, failed: Bool, back: String) -> DashboardPage {
        let content: HTML = "<p><a href=\"\(back)\">Back</a></p>"
        return DashboardPage(
            title: failed ? "Action failed" : "Done", section: "", problems: failed ? [sentence] : [],
            notice: failed ? nil : sentence, content: content)
    }
}
