import Foundation

extension ChimeConfiguration {
    /// Byte and count bounds on what peers may send and hold (`"limits"` in the configuration
    /// file): each is checked before the work it bounds, so no key holder can exhaust memory or
    /// stall the coordinator's loop (Docs/Chime.docc/Operations/Limits.md).
    public struct Bounds: Codable, Hashable, Sendable {
        /// The largest frame a worker may send on the dispatch socket (heartbeats), in bytes;
        /// beyond it libzmq drops the connection before reading the frame (ZMQ_MAXMSGSIZE).
        public var maxWorkerMessageBytes = 64 * 1024
        /// The largest frame on the results socket (acknowledgements, outcomes), in bytes
        /// (ZMQ_MAXMSGSIZE): a worker's full credit of 4,096 acks takes about 2.5 MiB.
        public var maxResultBytes = 16 * 1024 * 1024
        /// Frames one control or results message may have; the rest of a longer one is read
        /// and dropped a slice at a time, and the message gets `too_large` (control) or is
        /// dropped (results).
        public var maxFramesPerMessage = 16
        /// Categories one `register` may give a recipient; more: `too_large`, field `categories`.
        public var maxCategoriesPerRecipient = 1000
        /// The most bytes one recipient's registration (zone, settings, categories,
        /// destinations) may be stored in, as JSON (about 35 bytes a category without
        /// actions); a `register` or `destinations add` that would grow one past it:
        /// `too_large`. It bounds the `register` and `recipient` replies, which carry the
        /// registration, like a page (`maxReplyBytes`), so unread replies stay within
        /// `controlQueueBytesPerConnection`.
        public var maxRegistrationBytes = 64 * 1024
        /// Reminders (in any state) the recipients of one restricted client key may hold,
        /// unless its certificate says otherwise (`max-reminders`); 0: unlimited. Keys without
        /// a recipient restriction have no quota. Past it: `quota_exceeded`.
        public var tenantMaxReminders = 100_000
        /// Bytes those reminders, the recipients' registrations and their delivered lists may
        /// take together as the coordinator stores them (a reminder's binary form: about 150
        /// bytes for a one-shot with a 100-byte body; a registration's JSON: about 35 bytes a
        /// category without actions; a delivered firing's JSON: about 160 bytes and its title),
        /// unless the certificate says otherwise (`max-reminder-bytes`); 0: unlimited.
        /// Past it: `quota_exceeded`.
        public var tenantMaxReminderBytes = 64 * 1024 * 1024
        /// Delivery destinations (webhooks, APNs and FCM tokens) the recipients of one
        /// restricted client key may hold together; 0: unlimited. Past it: `quota_exceeded`.
        public var tenantMaxDestinations = 10_000
        /// The most bytes one page's reply (`list`, `deadLetters`, `events`, `delivered`) takes, encoded:
        /// a page that would pass it ends early with its continuation cursor (one item larger
        /// than it is sent alone).
        public var maxReplyBytes = 64 * 1024
        /// The bytes of replies the control socket queues for one connection that does not
        /// read them, as a send high-water mark of `controlQueueBytesPerConnection /
        /// maxReplyBytes` messages (512); past it the connection is not served
        /// (`chime_control_requests_dropped_total`) until it reads again.
        public var controlQueueBytesPerConnection = 32 * 1024 * 1024
        /// The bytes of replies all TCP control connections together may leave unread, as the
        /// coordinator estimates it (the replies handed to each connection since it last had
        /// nothing unsent in the kernel, `TCP_INFO`'s `tcpi_notsent_bytes`); past it the
        /// connections behind longest are cut off until the rest fit
        /// (`chime_control_connections_dropped_total`). `ipc://` connections are bounded per
        /// connection only.
        public var controlQueueBytesTotal = 256 * 1024 * 1024
        /// The bytes of dispatch batches one worker connection may hold unread: a batch goes to
        /// a worker only while the bytes handed to it since the kernel last had nothing unsent
        /// for it are below this, so it holds at most this plus one batch; past it the batch's
        /// firings wait for a worker that reads (`chime_dispatch_batches_held_total`). A worker
        /// that reads catches up at once, so only one that stopped reading is held.
        public var dispatchQueueBytesPerConnection = 64 * 1024 * 1024
        /// The bytes of dispatch batches all TCP worker connections together may leave unread,
        /// estimated as for `controlQueueBytesTotal`; past it the connections behind longest
        /// are cut off until the rest fit (`chime_dispatch_connections_dropped_total`); their
        /// firings go to other workers when their leases run out. `ipc://` connections are
        /// bounded per connection only, by `coordinator.dispatchHighWaterMark` batches.
        public var dispatchQueueBytesTotal = 256 * 1024 * 1024
        /// The bytes of control requests one connection may have read and waiting for their
        /// turn inside the coordinator (served round-robin across connections); past it its
        /// requests are refused `rate_limited`. One request of any size is always taken.
        public var controlPendingBytesPerConnection = 32 * 1024 * 1024
        /// The bytes of control requests all connections may have waiting together; past it
        /// requests are refused `rate_limited`.
        public var controlPendingBytesTotal = 256 * 1024 * 1024

        /// The defaults shown on each property.
        public init() {}
    }
}
