extension ChimeConfiguration {
    /// How workers deliver firings to their recipients' destinations (webhooks, APNs, FCM).
    public struct Delivery: Codable, Hashable, Sendable {
        /// Attempts per destination at most (the first included).
        public var maxAttempts = 5
        /// The back-off after the first failed attempt, in milliseconds (doubling, with jitter).
        public var backoffMilliseconds = 500
        /// The longest back-off, in milliseconds.
        public var maxBackoffMilliseconds = 30_000
        /// One request's timeout (connect included), in milliseconds.
        public var timeoutMilliseconds = 10_000
        /// Requests in flight to one host at most, per worker process (every shard it serves).
        public var maxPerHost = 4
        /// Requests in flight per worker process at most (every shard it serves).
        public var maxInFlight = 32
        /// Consecutive failures that open an endpoint's circuit.
        public var circuitFailures = 5
        /// How long an open circuit stays open, in seconds.
        public var circuitOpenSeconds = 30.0
        /// Whether webhook URLs on loopback, private and link-local addresses are delivered to
        /// (refused by default: a recipient's URL is outside input).
        public var allowPrivateAddresses = false
        /// A JSON file of the APNs channel's configuration (ChimeDelivery's `APNsConfiguration`:
        /// `{"keyFile", "keyId", "teamId", "productionUrl", "sandboxUrl", …}`); empty: no APNs
        /// channel (APNs destinations are then refused, saying so).
        public var apnsConfigFile = ""
        /// A JSON file of the FCM channel's configuration (ChimeDelivery's `FCMConfiguration`:
        /// `{"serviceAccountFile", "projectId", "baseUrl", …}`); empty: no FCM channel.
        public var fcmConfigFile = ""

        /// The defaults shown on each property.
        public init() {}
    }
}
