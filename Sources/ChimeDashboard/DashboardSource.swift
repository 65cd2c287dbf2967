import ChimeCore
import ChimeWire
import Foundation

/// A change an operator asks for from a page (always a `POST` with the CSRF token).
public enum DashboardAction: Hashable, Sendable {
    /// Switch a recipient's reminder on or off.
    case setEnabled(ReminderID, recipient: RecipientID, enabled: Bool)
    /// Cancel a recipient's reminder.
    case cancel(ReminderID, recipient: RecipientID)
    /// Send a dead-lettered firing again (same firing id).
    case retry(FiringID)
    /// Send every dead letter again.
    case retryAll
    /// Delete a dead-lettered firing for good.
    case deleteDeadLetter(FiringID)

    /// A sentence for the confirmation page, naming what changes.
    public var question: String {
        switch self {
        case .setEnabled(let id, let recipient, let enabled):
            "\(enabled ? "Enable" : "Disable") reminder \(id.rawValue) of \(recipient.rawValue)?"
        case .cancel(let id, let recipient): "Cancel reminder \(id.rawValue) of \(recipient.rawValue)? It is removed for good."
        case .retry(let firing): "Retry dead letter \(firing)? It goes to a worker again."
        case .retryAll: "Retry every dead letter? Each goes to a worker again."
        case .deleteDeadLetter(let firing): "Delete dead letter \(firing)? It is removed for good and never fires."
        }
    }
}

/// Where the dashboard reads the cluster and sends changes: the real cluster
/// (``ClusterSource``) or, in tests, a fixed one. Calls come from several HTTP threads at once.
public protocol DashboardSource: Sendable {
    /// Every shard's figures; a shard that does not answer is shown down.
    func overview() -> OverviewView
    /// Every shard's workers.
    func workers() -> WorkersView
    /// One page of reminders matching `search` (every state: disabled and delivered ones too).
    /// - Throws: `WireError` (`invalid_argument` for a bad cursor, `unavailable`).
    func reminders(_ search: ReminderSearch) throws(WireError) -> PageView<ReminderListing>
    /// A recipient's registration as `chime recipient` shows it (token and destination
    /// secrets masked), badge and delivered count; `nil` when it is not registered.
    /// - Throws: `WireError` (`invalid_argument` for a bad id, `unavailable`).
    func recipient(_ id: RecipientID) throws(WireError) -> RecipientResult?
    /// One page of dead letters, oldest due first.
    /// - Throws: `WireError` (`invalid_argument` for a bad cursor, `unavailable`).
    func deadLetters(cursor: String?) throws(WireError) -> PageView<Firing>
    /// Carries out `action`.
    /// - Returns: a sentence saying what was done.
    /// - Throws: `WireError`: the coordinator's refusal, or `unavailable`.
    func perform(_ action: DashboardAction) throws(WireError) -> String
}
