import ChimeCore
import ChimeRuntime
import Foundation

extension CoordinatorConfiguration {
    /// The coordinator's tunables as `configuration` sets them: the one place a key of
    /// `config/chime.json` becomes a tunable, so `CoordinatorConfiguration()` has the file's
    /// defaults by construction. Units change here (heartbeat milliseconds to seconds); a 0
    /// that means "none" in the file (`misfireThresholdSeconds`, `maxPendingPerRecipient`)
    /// becomes `nil`. The sounds directory is the shell's (`SoundLibrary`).
    public init(from configuration: ChimeConfiguration) {
        let coordinator = configuration.coordinator
        let notifications = configuration.notifications
        leaseDuration = coordinator.leaseSeconds
        dispatchLead = Double(coordinator.dispatchLeadMilliseconds) / 1000
        maxAttempts = coordinator.maxAttempts
        maxBatchSize = coordinator.maxBatchSize
        maximumUserInfoBytes = coordinator.maxUserInfoBytes
        maxRemindersPerRequest = coordinator.maxRemindersPerRequest
        maxCategoriesPerRecipient = configuration.limits.maxCategoriesPerRecipient
        maxRegistrationBytes = configuration.limits.maxRegistrationBytes
        snapshotEveryRecords = configuration.store.snapshotEveryRecords
        tenantMaxReminders = configuration.limits.tenantMaxReminders > 0 ? configuration.limits.tenantMaxReminders : nil
        tenantMaxReminderBytes = configuration.limits.tenantMaxReminderBytes > 0 ? configuration.limits.tenantMaxReminderBytes : nil
        tenantMaxDestinations = configuration.limits.tenantMaxDestinations > 0 ? configuration.limits.tenantMaxDestinations : nil
        misfireThreshold = coordinator.misfireThresholdSeconds > 0 ? coordinator.misfireThresholdSeconds : nil
        fireAllCap = coordinator.fireAllCap
        eventRetention = coordinator.eventRetention
        maxWorkers = coordinator.maxWorkers
        deadWorkerRetention = coordinator.deadWorkerRetentionSeconds
        heartbeatInterval = Double(configuration.heartbeat.intervalMilliseconds) / 1000
        heartbeatLiveness = configuration.heartbeat.liveness
        requireRegistration = notifications.requireRegistration
        snoozeSeconds = notifications.snoozeSeconds
        actionTimeLimit = notifications.actionTimeLimitSeconds
        truncateToMinute = notifications.truncateToMinute
        maxPendingPerRecipient = notifications.maxPendingPerRecipient > 0 ? notifications.maxPendingPerRecipient : nil
        followsMapRegister = !configuration.cluster.register.isEmpty
    }
}
