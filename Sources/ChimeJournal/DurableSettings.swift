import Foundation

/// The tunables the coordinator's fold reads, recorded in its durable state: each start
/// journals them in its `started` entry, so a replay folds every entry with the settings the
/// live coordinator had when it decided it, never with today's configuration file.
///
/// A store written before settings were recorded folds its older entries with the settings
/// of the configuration that opens it (what that version did) until its first `started`
/// entry that carries them.
public struct DurableSettings: Codable, Hashable, Sendable {
    /// The default cap on a recipient's armed reminders (`nil`: unlimited); a recipient's own
    /// `maxPending` wins.
    public var maxPendingPerRecipient: Int?
    /// Whether unregistered recipients get nothing, as on iOS.
    public var requireRegistration: Bool
    /// Acknowledged fire events kept for catch-up.
    public var eventRetention: Int
    /// Remembered small replies at most (idempotent retries).
    public var rememberedRequests: Int
    /// The remembered small replies' total size at most, in bytes.
    public var rememberedReplyBytes: Int
    /// The size above which a remembered reply is large, in bytes.
    public var largeReplyThreshold: Int
    /// The remembered large replies' total size at most, in bytes.
    public var rememberedLargeReplyBytes: Int
    /// Finished action jobs kept for `job` requests (the oldest finished go first).
    public var finishedJobRetention: Int

    /// Creates the value from its fields (see each property for meaning and units).
    public init(
        maxPendingPerRecipient: Int?, requireRegistration: Bool, eventRetention: Int, rememberedRequests: Int,
        rememberedReplyBytes: Int, largeReplyThreshold: Int, rememberedLargeReplyBytes: Int, finishedJobRetention: Int
    ) {
        self.maxPendingPerRecipient = maxPendingPerRecipient
        self.requireRegistration = requireRegistration
        self.eventRetention = eventRetention
        self.rememberedRequests = rememberedRequests
        self.rememberedReplyBytes = rememberedReplyBytes
        self.largeReplyThreshold = largeReplyThreshold
        self.rememberedLargeReplyBytes = rememberedLargeReplyBytes
        self.finishedJobRetention = finishedJobRetention
    }
}
