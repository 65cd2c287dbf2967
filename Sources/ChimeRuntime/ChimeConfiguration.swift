import Foundation

/// The contents of `config/chime.json`: every endpoint, timeout and limit.
///
/// Every key is optional in the file; missing keys take the defaults shown here. Command-line
/// flags override the file. Units are in the key names (`…Milliseconds`, `…Seconds`, `…Bytes`).
public struct ChimeConfiguration: Codable, Hashable, Sendable {
    /// A socket's two addresses: where the coordinator binds it and where others connect.
    public struct Endpoint: Codable, Hashable, Sendable {
        /// Where the coordinator binds (`tcp://0.0.0.0:7700` to listen on every interface).
        public var bind: String
        /// Where workers, clients and subscribers connect.
        public var connect: String

        /// Creates the value from its fields (see each property for meaning and units).
        public init(bind: String, connect: String) {
            self.bind = bind
            self.connect = connect
        }

        /// Both addresses on loopback at `port`.
        public static func loopback(_ port: Int) -> Endpoint {
            Endpoint(bind: "tcp://127.0.0.1:\(port)", connect: "tcp://127.0.0.1:\(port)")
        }
    }

    /// The five sockets of DESIGN.md.
    public struct Endpoints: Codable, Hashable, Sendable {
        /// Control ROUTER: JSON requests and replies.
        public var control = Endpoint.loopback(7700)
        /// Dispatch PUSH: firings to workers.
        public var dispatch = Endpoint.loopback(7701)
        /// Results PULL: acknowledgements and heartbeats from workers.
        public var results = Endpoint.loopback(7702)
        /// Events XPUB: where subscribers connect.
        public var events = Endpoint.loopback(7703)
        /// Events XSUB: where workers (publishers) connect.
        public var eventsIngest = Endpoint.loopback(7704)

        /// The defaults shown on each property.
        public init() {}
    }

    /// Coordinator tunables.
    public struct Coordinator: Codable, Hashable, Sendable {
        /// How long a dispatched firing may stay unacknowledged, in seconds.
        public var leaseSeconds: Double = 10
        /// Dispatch attempts before a firing is dead-lettered.
        public var maxAttempts = 5
        /// Firings per dispatch message at most.
        public var maxBatchSize = 256
        /// Dispatch messages queued per worker on the coordinator's side (ZMQ_SNDHWM).
        public var dispatchHighWaterMark: Int32 = 64
        /// How long before its due instant a firing is handed to a worker, in milliseconds: the
        /// worker holds it and delivers it from its own timer at the due instant; its lease runs
        /// from the due instant. A cancel, switch-off or replace inside this window revokes it.
        /// 0: a firing leaves when it is due. The default, 200, measured W2 (30,000 firings
        /// over 30 s) at a pyzmq subscriber at p99 1.77 ms against 2.09 ms without a lead
        /// (with a 10 ms acknowledgement delay; thread wake-ups per firing 5.5 against 12.2).
        /// Workers must be of a version that holds firings (Upgrading).
        public var dispatchLeadMilliseconds = 200
        /// The largest control request accepted, in bytes; larger ones get `too_large` (without
        /// the `requestId`, which is not parsed). Beyond 4× this, ZeroMQ drops the connection
        /// (ZMQ_MAXMSGSIZE) and the client gets no reply.
        public var maxRequestBytes = 16 * 1024 * 1024
        /// The largest `userInfo`, as JSON, in bytes.
        public var maxUserInfoBytes = 4096
        /// Reminders per `schedule` request at most (1 … 1,000,000). A request is validated and
        /// applied in one loop turn, atomically: 1,000 kept that turn at 9–37 ms (release build,
        /// 2 shared cores under load; 2,000 took 39–85 ms, 100,000 took 3.2–3.9 s while every
        /// other client and due firing waited), and is the chunk `chime schedule --file` and
        /// `chime import` send.
        public var maxRemindersPerRequest = 1_000
        /// Default for reminders without `misfireThreshold`: how late (seconds) an occurrence
        /// missed while no coordinator ran may still fire; 0 means no limit.
        public var misfireThresholdSeconds: Double = 0
        /// How many missed occurrences one `fireAll` reminder fires late at most.
        public var fireAllCap = 100
        /// Acknowledged fire events kept for `subscribe --since` catch-up.
        public var eventRetention = 10_000
        /// Workers the coordinator keeps a record of at most, alive or recently lost; a
        /// message from a new worker id beyond this is dropped.
        public var maxWorkers = 1024
        /// How long a lost worker stays listed (`ctl workers`, `alive: false`) after its
        /// liveness expired, in seconds; then its record is dropped.
        public var deadWorkerRetentionSeconds: Double = 60

        /// The defaults shown on each property.
        public init() {}
    }

    /// The file store: journal, snapshots, lock and epoch in one directory.
    public struct Store: Codable, Hashable, Sendable {
        /// The store directory (relative paths are relative to the working directory);
        /// `"none"` keeps everything in memory (nothing survives a restart).
        public var directory = ".chime/store"
        /// `always` (one fdatasync per loop turn before replies: group commit), `interval`, or `never`.
        public var fsync = "always"
        /// With `fsync: interval`, the longest time between syncs, in milliseconds.
        public var fsyncIntervalMilliseconds = 100
        /// A snapshot is written after this many journal records (and by `chime ctl snapshot`).
        public var snapshotEveryRecords = 200_000
        /// A journal segment is closed and a new one started past this size, in bytes.
        public var segmentBytes = 64 * 1024 * 1024
        /// The store's lease, in milliseconds: the active coordinator renews it every sixth of
        /// this, and a standby takes the store from a holder that has not renewed it for this
        /// long (stopped, hung, cut off from the store); the holder itself stops writing and
        /// sending five sixths of it after its last renewal (Docs/Chime.docc/Operations/Failover.md).
        public var leaseMilliseconds = 1500

        /// The defaults shown on each property.
        public init() {}
    }

    /// Worker tunables.
    public struct Worker: Codable, Hashable, Sendable {
        /// Dispatch messages a worker may hold unread (ZMQ_RCVHWM).
        public var receiveHighWaterMark: Int32 = 64
        /// Unacknowledged firings a worker accepts at once: the credit it announces.
        public var capacity = 4096
        /// How long a worker may hold its acknowledgements to send them together, in
        /// milliseconds (from the first one waiting; 256 waiting go at once): at a steady rate
        /// one results message, and one coordinator wake-up and journal write, per this many
        /// milliseconds instead of per firing. 0: each loop turn sends what it delivered.
        /// The default, 10, delays the delivered list and the badge by at most 10 ms.
        public var acknowledgementDelayMilliseconds = 10

        /// The defaults shown on each property.
        public init() {}
    }

    /// Heartbeats between workers and the coordinator.
    public struct Heartbeat: Codable, Hashable, Sendable {
        /// How often a worker reports, in milliseconds.
        public var intervalMilliseconds = 1000
        /// Missed heartbeats after which a worker counts as dead.
        public var liveness = 3

        /// The defaults shown on each property.
        public init() {}
    }

    /// Control-client behaviour (CLI and libraries): Lazy Pirate retries, ZeroMQ Guide ch. 4.
    public struct Client: Codable, Hashable, Sendable {
        /// How long to wait for a reply before retrying, in milliseconds.
        public var requestTimeoutMilliseconds = 3000
        /// How many times to retry a request (same requestId) before giving up.
        public var retries = 2

        /// The defaults shown on each property.
        public init() {}
    }

    /// The local-notification model's options.
    public struct Notifications: Codable, Hashable, Sendable {
        /// Whether unregistered recipients get nothing, as on iOS.
        public var requireRegistration = false
        /// The snooze delay when `chime act … snooze` gives none, in seconds.
        public var snoozeSeconds: Double = 600
        /// How long a worker may run an action handler (command hooks included), in seconds;
        /// a hook's whole process group is killed then.
        public var actionTimeLimitSeconds: Double = 10
        /// Command hooks one worker runs at once at most; a job beyond fails at once.
        public var maxConcurrentHooks = 8
        /// Command hooks for custom action identifiers: `{"reply": "/usr/local/bin/reply-hook"}`,
        /// run with `/bin/sh -c`, the action job as JSON on standard input, and `CHIME_ACTION`,
        /// `CHIME_FIRING_ID`, `CHIME_RECIPIENT`, `CHIME_TEXT` in the environment.
        public var hooks: [String: String] = [:]
        /// Where named sounds live; when set, a named sound must be a WAV, CAF or AIFF file
        /// there with linear PCM, IMA4, µ-law or a-law data of at most 30 s, else the reminder
        /// gets the default sound and the reply a warning. Empty: names are not checked.
        public var soundsDirectory = ""
        /// Where the string tables of content's localizable keys live: one `<locale>.json`
        /// file per locale (`fr.json`, `fr-CA.json`), each a flat `{"KEY": "format with %@"}`
        /// object; read once at start (a bad file stops the coordinator with its name). Empty:
        /// none, and a key resolves to the content's own text, else the key.
        public var stringsDirectory = ""
        /// The locale whose table is tried after the recipient's (`localizedUserNotificationString`'s
        /// development region).
        public var developmentLocale = "en"
        /// Whether scheduled start times lose their seconds.
        public var truncateToMinute = false
        /// Default cap on a recipient's armed reminders (iOS keeps the soonest 64); 0: unlimited.
        public var maxPendingPerRecipient = 0

        /// The defaults shown on each property.
        public init() {}
    }

    /// CURVE keys and the loopback rule (Docs/Chime.docc/Operations/Security.md).
    public struct Security: Codable, Hashable, Sendable {
        /// The coordinator's key directory (`chime keys init DIR`): `server.key_secret` and
        /// the allow-lists `operator/`, `client/`, `worker/`, `subscriber/`. Empty: no CURVE,
        /// and then only loopback TCP addresses may be bound.
        public var keys = ""
        /// Every other process: its own secret certificate. Empty with `keys` set: the
        /// certificate of its role in that directory (`worker.key_secret`, `operator.key_secret`…).
        public var key = ""
        /// Every other process: the server's public certificate. Empty with `keys` set:
        /// `server.key` in that directory.
        public var serverKey = ""
        /// Lets the coordinator bind non-loopback TCP addresses without keys: anyone who can
        /// reach a port then has every power. Off by default.
        public var insecure = false

        /// The defaults shown on each property.
        public init() {}
    }

    /// The HTTP endpoint for machines (`/metrics`, `/healthz`, `/readyz`).
    public struct HTTP: Codable, Hashable, Sendable {
        /// Where the coordinator serves HTTP: `HOST:PORT` (an IP address literal, IPv6 in
        /// brackets), or `off`. Default: loopback, port base + 5. Workers serve HTTP only
        /// with `--http`.
        public var listen = "127.0.0.1:7705"

        /// The defaults shown on each property.
        public init() {}
    }

    /// The five sockets' addresses.
    public var endpoints = Endpoints()
    /// The HTTP endpoint for metrics and probes.
    public var http = HTTP()
    /// CURVE keys and the loopback rule.
    public var security = Security()
    /// The local-notification model's options.
    public var notifications = Notifications()
    /// Coordinator tunables.
    public var coordinator = Coordinator()
    /// The file store.
    public var store = Store()
    /// Worker tunables.
    public var worker = Worker()
    /// Heartbeats between workers and the coordinator.
    public var heartbeat = Heartbeat()
    /// Delivery to destinations (webhooks, APNs, FCM) from the workers.
    public var delivery = Delivery()
    /// Control-client retries and timeouts.
    public var client = Client()
    /// The control socket's protection: per-peer rate limiting.
    public var control = Control()
    /// The event stream's limits: bytes queued per subscriber.
    public var events = Events()
    /// Byte and count bounds on what peers send and hold (Docs/Chime.docc/Operations/Limits.md).
    public var limits = Bounds()
    /// How long a socket may keep unsent messages at close, in milliseconds (ZMQ_LINGER).
    public var lingerMilliseconds: Int32 = 1000
    /// Messages each hop of the event stream (worker PUB, forwarder XSUB/XPUB, subscriber SUB)
    /// queues before PUB drops: large enough for a burst of 100,000 firings at once.
    public var eventHighWaterMark: Int32 = 250_000
    /// Reminder files `chime up` loads at start (paths relative to the configuration file).
    public var sampleReminders: [String] = []
    /// How long-running roles log.
    public var log = Log()
    /// The shard map of a cluster of several coordinators; no shards: one coordinator
    /// (``Cluster``).
    public var cluster = Cluster()

    /// The defaults shown on each property.
    public init() {}

    /// Reads a configuration file; keys missing from the file keep their defaults.
    /// - Throws: `ConfigurationError` naming the file and the problem.
    public static func load(from url: URL) throws(ConfigurationError) -> ChimeConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigurationError("cannot read \(url.path): \(error.localizedDescription)")
        }
        return try decode(data, source: url.path)
    }

    /// Decodes configuration JSON over the defaults: the file's keys replace the default
    /// values, objects merge key by key, and a key Chime does not know is an error (a typo
    /// would otherwise be silently ignored); every numeric key is range-checked
    /// (``checkRanges(source:)``).
    /// - Throws: `ConfigurationError` naming `source` and the problem.
    public static func decode(_ data: Data, source: String) throws(ConfigurationError) -> ChimeConfiguration {
        let defaults: Any
        let overrides: Any
        do {
            defaults = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ChimeConfiguration()))
            overrides = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigurationError("\(source): not valid JSON")
        }
        let merged = try merge(overrides, over: defaults, path: "", source: source)
        let configuration: ChimeConfiguration
        do {
            let mergedData = try JSONSerialization.data(withJSONObject: merged)
            configuration = try JSONDecoder().decode(ChimeConfiguration.self, from: mergedData)
        } catch let error as DecodingError {
            throw ConfigurationError("\(source): \(describe(error))")
        } catch {
            throw ConfigurationError("\(source): \(error)")
        }
        try configuration.checkRanges(source: source)
        return configuration
    }

    /// Moves every endpoint to loopback ports `base` … `base + 4` (control, dispatch,
    /// results, events, eventsIngest) and the coordinator's HTTP to `base + 5` (unless it is
    /// `off`): one flag to run a second cluster beside the first.
    public mutating func useLoopbackPorts(from base: Int) {
        if http.listen != "off" { http.listen = "127.0.0.1:\(base + 5)" }
        endpoints.control = .loopback(base)
        endpoints.dispatch = .loopback(base + 1)
        endpoints.results = .loopback(base + 2)
        endpoints.events = .loopback(base + 3)
        endpoints.eventsIngest = .loopback(base + 4)
    }
}

/// A configuration file that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the file.
    public var message: String
    /// Creates the value from its fields (see each property for meaning and units).
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

private func merge(_ value: Any, over defaults: Any, path: String, source: String) throws(ConfigurationError) -> Any {
    guard let defaultObject = defaults as? [String: Any] else { return value }
    guard let object = value as? [String: Any] else {
        throw ConfigurationError("\(source): \(path.isEmpty ? "the top level" : path) must be a JSON object")
    }
    // An empty default object is a free-form map (notifications.hooks): any keys go.
    if defaultObject.isEmpty { return object }
    var merged = defaultObject
    for (key, child) in object {
        let childPath = path.isEmpty ? key : "\(path).\(key)"
        guard let defaultChild = defaultObject[key] else {
            throw ConfigurationError("\(source): unknown key \(childPath)")
        }
        merged[key] = try merge(child, over: defaultChild, path: childPath, source: source)
    }
    return merged
}

func describe(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: ".") }
    switch error {
    case .keyNotFound(let key, let context): return "missing key \(path(context.codingPath + [key]))"
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        return "wrong type at \(path(context.codingPath)): \(context.debugDescription)"
    case .dataCorrupted(let context):
        if context.codingPath.isEmpty { return "not valid JSON" }
        // Keyed decoders that refuse a key say which in the description.
        let detail = context.debugDescription.hasPrefix("unknown key") ? ": \(context.debugDescription)" : ""
        return "bad value at \(path(context.codingPath))\(detail)"
    @unknown default: return "\(error)"
    }
}
