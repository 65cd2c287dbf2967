import Foundation

extension ChimeConfiguration {
    /// One numeric key's allowed closed range, for the range check and its error.
    struct KeyRange {
        var key: String
        var value: Double
        var lower: Double
        var upper: Double
        /// What the bounds mean, when the unit is not in the key's name.
        var note: String = ""

        init<Value: BinaryInteger>(_ key: String, _ value: Value, _ range: ClosedRange<Value>, _ note: String = "") {
            self.key = key
            self.value = Double(value)
            self.lower = Double(range.lowerBound)
            self.upper = Double(range.upperBound)
            self.note = note
        }

        init(_ key: String, _ value: Double, _ range: ClosedRange<Double>, _ note: String = "") {
            self.key = key
            self.value = value
            self.lower = range.lowerBound
            self.upper = range.upperBound
            self.note = note
        }

        var holds: Bool { value.isFinite && value >= lower && value <= upper }
    }

    /// Every numeric key with its allowed range: values outside would stall, spin, or
    /// overflow (a lease of 0 s redispatches every firing at once).
    var keyRanges: [KeyRange] {
        let day = 86_400.0
        return [
            KeyRange("coordinator.leaseSeconds", coordinator.leaseSeconds, 0.1...day),
            KeyRange("coordinator.maxAttempts", coordinator.maxAttempts, 1...1000),
            KeyRange("coordinator.maxBatchSize", coordinator.maxBatchSize, 1...65_536),
            KeyRange("coordinator.dispatchHighWaterMark", coordinator.dispatchHighWaterMark, 1...1_000_000),
            KeyRange("coordinator.dispatchLeadMilliseconds", coordinator.dispatchLeadMilliseconds, 0...10_000, "0: at the due instant"),
            KeyRange("coordinator.maxRequestBytes", coordinator.maxRequestBytes, 64...(1 << 30)),
            KeyRange("coordinator.maxUserInfoBytes", coordinator.maxUserInfoBytes, 2...(1 << 20)),
            KeyRange("coordinator.maxRemindersPerRequest", coordinator.maxRemindersPerRequest, 1...1_000_000),
            KeyRange("coordinator.misfireThresholdSeconds", coordinator.misfireThresholdSeconds, 0...(3660 * day), "0: no limit"),
            KeyRange("coordinator.fireAllCap", coordinator.fireAllCap, 1...100_000),
            KeyRange("coordinator.eventRetention", coordinator.eventRetention, 0...10_000_000),
            KeyRange("coordinator.maxWorkers", coordinator.maxWorkers, 1...100_000),
            KeyRange("coordinator.deadWorkerRetentionSeconds", coordinator.deadWorkerRetentionSeconds, 0...(7 * day)),
            KeyRange("store.fsyncIntervalMilliseconds", store.fsyncIntervalMilliseconds, 1...60_000),
            KeyRange("store.snapshotEveryRecords", store.snapshotEveryRecords, 1...1_000_000_000),
            KeyRange("store.segmentBytes", store.segmentBytes, 64...(1 << 40)),
            KeyRange("store.leaseMilliseconds", store.leaseMilliseconds, 300...600_000),
            KeyRange("worker.receiveHighWaterMark", worker.receiveHighWaterMark, 1...1_000_000),
            KeyRange("worker.capacity", worker.capacity, 1...1_000_000),
            KeyRange("worker.acknowledgementDelayMilliseconds", worker.acknowledgementDelayMilliseconds, 0...1000, "0: at once"),
            KeyRange("delivery.maxAttempts", delivery.maxAttempts, 1...100),
            KeyRange("delivery.backoffMilliseconds", delivery.backoffMilliseconds, 1...3_600_000),
            KeyRange("delivery.maxBackoffMilliseconds", delivery.maxBackoffMilliseconds, 1...86_400_000),
            KeyRange("delivery.timeoutMilliseconds", delivery.timeoutMilliseconds, 10...600_000),
            KeyRange("delivery.maxPerHost", delivery.maxPerHost, 1...10_000),
            KeyRange("delivery.maxInFlight", delivery.maxInFlight, 1...10_000),
            KeyRange("delivery.circuitFailures", delivery.circuitFailures, 1...10_000),
            KeyRange("delivery.circuitOpenSeconds", delivery.circuitOpenSeconds, 0...86_400),
            KeyRange("heartbeat.intervalMilliseconds", heartbeat.intervalMilliseconds, 10...60_000),
            KeyRange("heartbeat.liveness", heartbeat.liveness, 1...1000),
            KeyRange("client.requestTimeoutMilliseconds", client.requestTimeoutMilliseconds, 1...600_000),
            KeyRange("client.retries", client.retries, 0...100),
            KeyRange("notifications.snoozeSeconds", notifications.snoozeSeconds, 1...(366 * day)),
            KeyRange("notifications.actionTimeLimitSeconds", notifications.actionTimeLimitSeconds, 0.001...3600),
            KeyRange("notifications.maxPendingPerRecipient", notifications.maxPendingPerRecipient, 0...1_000_000, "0: unlimited"),
            KeyRange("lingerMilliseconds", lingerMilliseconds, 0...60_000),
            KeyRange("eventHighWaterMark", eventHighWaterMark, 1...10_000_000),
            KeyRange("events.subscriberQueueBytes", events.subscriberQueueBytes, 65_536...(1 << 32)),
            KeyRange("events.subscriberQueueBytesTotal", events.subscriberQueueBytesTotal, 65_536...(1 << 42)),
            KeyRange("control.rateLimit.requestsPerSecond", control.rateLimit.requestsPerSecond, 0...1_000_000, "0: off"),
            KeyRange("control.rateLimit.burst", control.rateLimit.burst, 1...1_000_000),
            KeyRange("control.rateLimit.maxPeers", control.rateLimit.maxPeers, 1...1_000_000),
            KeyRange("notifications.maxConcurrentHooks", notifications.maxConcurrentHooks, 1...1000),
            KeyRange("events.maxSubscriptionBytes", events.maxSubscriptionBytes, 512...65_536),
            KeyRange("events.maxEventBytes", events.maxEventBytes, 1024...(1 << 30)),
            KeyRange("events.maxSubscriptionsPerPeer", events.maxSubscriptionsPerPeer, 1...1_000_000),
            KeyRange("events.maxSubscriptionBytesTotal", events.maxSubscriptionBytesTotal, 4096...(1 << 32)),
            KeyRange("limits.maxWorkerMessageBytes", limits.maxWorkerMessageBytes, 1024...(1 << 30)),
            KeyRange("limits.maxResultBytes", limits.maxResultBytes, 65_536...(1 << 30)),
            KeyRange("limits.maxFramesPerMessage", limits.maxFramesPerMessage, 2...1_000_000),
            KeyRange("limits.maxCategoriesPerRecipient", limits.maxCategoriesPerRecipient, 1...10_000),
            KeyRange("limits.maxRegistrationBytes", limits.maxRegistrationBytes, 1024...(1 << 30)),
            KeyRange("limits.tenantMaxReminders", limits.tenantMaxReminders, 0...1_000_000_000, "0: unlimited"),
            KeyRange("limits.tenantMaxDestinations", limits.tenantMaxDestinations, 0...1_000_000_000, "0: unlimited"),
            KeyRange("limits.tenantMaxReminderBytes", limits.tenantMaxReminderBytes, 0...(1 << 50), "0: unlimited"),
            KeyRange("limits.maxReplyBytes", limits.maxReplyBytes, 4096...(1 << 30)),
            KeyRange("limits.controlQueueBytesPerConnection", limits.controlQueueBytesPerConnection, 65_536...(1 << 40)),
            KeyRange("limits.controlPendingBytesPerConnection", limits.controlPendingBytesPerConnection, 65_536...(1 << 40)),
            KeyRange("limits.controlQueueBytesTotal", limits.controlQueueBytesTotal, 65_536...(1 << 42)),
            KeyRange("limits.dispatchQueueBytesPerConnection", limits.dispatchQueueBytesPerConnection, 65_536...(1 << 40)),
            KeyRange("limits.dispatchQueueBytesTotal", limits.dispatchQueueBytesTotal, 65_536...(1 << 42)),
            KeyRange("limits.controlPendingBytesTotal", limits.controlPendingBytesTotal, 65_536...(1 << 42)),
            KeyRange("cluster.mapEpoch", cluster.mapEpoch, 1...(UInt64(1) << 53)),
            KeyRange("cluster.slotCount", cluster.slotCount, 1...65_536),
            KeyRange("cluster.mapRefreshSeconds", cluster.mapRefreshSeconds, 0.1...3600),
        ]
    }

    /// Checks every numeric key against its range and `store.fsync` against its three values.
    /// - Throws: `ConfigurationError` naming `source`, the key, the range and the value:
    ///   `chime.json: coordinator.leaseSeconds must be between 0.1 and 86400, not 0`.
    public func checkRanges(source: String) throws(ConfigurationError) {
        func text(_ number: Double) -> String {
            number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        }
        for range in keyRanges where !range.holds {
            let note = range.note.isEmpty ? "" : " (\(range.note))"
            throw ConfigurationError(
                "\(source): \(range.key) must be between \(text(range.lower)) and \(text(range.upper))\(note), not \(text(range.value))")
        }
        let fsyncPolicies = ["always", "interval", "never"]
        guard fsyncPolicies.contains(store.fsync) else {
            throw ConfigurationError("\(source): store.fsync must be always, interval or never, not '\(store.fsync)'")
        }
    }
}
