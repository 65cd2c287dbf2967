import ChimeRuntime
import Foundation
import Testing

@testable import ChimeCoordinator

/// `CoordinatorConfiguration(from:)` is the one place a configuration key becomes a
/// coordinator tunable, and the only source of the defaults both share.
@Suite struct CoordinatorConfigurationTests {
    @Test func theDefaultsAreTheConfigurationFilesDefaults() {
        let tunables = CoordinatorConfiguration()
        #expect(tunables.leaseDuration == 10)
        #expect(tunables.maxAttempts == 5)
        #expect(tunables.heartbeatInterval == 1)
        #expect(tunables.heartbeatLiveness == 3)
        #expect(tunables.maxBatchSize == 256)
        #expect(tunables.maxRemindersPerRequest == 1_000)
        #expect(tunables.maximumUserInfoBytes == 4096)
        #expect(tunables.fireAllCap == 100)
        #expect(tunables.misfireThreshold == nil)
        #expect(tunables.truncateToMinute == false)
        #expect(tunables.maxPendingPerRecipient == nil)
        #expect(tunables.requireRegistration == false)
        #expect(tunables.snoozeSeconds == 600)
        #expect(tunables.actionTimeLimit == 10)
        #expect(tunables.eventRetention == 10_000)
        #expect(tunables.maxWorkers == 1024)
        #expect(tunables.deadWorkerRetention == 60)
        // The tunables no file sets keep their own.
        #expect(tunables.rememberedRequests == 1000)
        #expect(tunables.maxUndurableEntries == 65_536)
    }

    @Test func everyFileKeyReachesItsTunable() throws {
        let json = #"""
            {"coordinator": {"leaseSeconds": 2.5, "maxAttempts": 7, "maxBatchSize": 32, "maxUserInfoBytes": 512,
                             "maxRemindersPerRequest": 40, "misfireThresholdSeconds": 90, "fireAllCap": 3,
                             "eventRetention": 11, "maxWorkers": 9, "deadWorkerRetentionSeconds": 5},
             "heartbeat": {"intervalMilliseconds": 250, "liveness": 4},
             "notifications": {"requireRegistration": true, "snoozeSeconds": 120, "actionTimeLimitSeconds": 3,
                               "truncateToMinute": true, "maxPendingPerRecipient": 64, "soundsDirectory": "/nonexistent"},
             "limits": {"tenantMaxReminders": 0, "tenantMaxReminderBytes": 4096}}
            """#
        let configuration = try ChimeConfiguration.decode(Data(json.utf8), source: "test")
        let tunables = CoordinatorConfiguration(from: configuration)
        #expect(tunables.leaseDuration == 2.5)
        #expect(tunables.maxAttempts == 7)
        #expect(tunables.maxBatchSize == 32)
        #expect(tunables.maximumUserInfoBytes == 512)
        #expect(tunables.maxRemindersPerRequest == 40)
        #expect(tunables.misfireThreshold == 90)
        #expect(tunables.fireAllCap == 3)
        #expect(tunables.eventRetention == 11)
        #expect(tunables.maxWorkers == 9)
        #expect(tunables.deadWorkerRetention == 5)
        #expect(tunables.heartbeatInterval == 0.25)
        #expect(tunables.heartbeatLiveness == 4)
        #expect(tunables.requireRegistration)
        #expect(tunables.snoozeSeconds == 120)
        #expect(tunables.actionTimeLimit == 3)
        #expect(tunables.truncateToMinute)
        #expect(tunables.maxPendingPerRecipient == 64)
        #expect(tunables.tenantMaxReminders == nil, "0: unlimited")
        #expect(tunables.tenantMaxReminderBytes == 4096)
        // The sounds directory is the shell's: it checks named sounds (the state reads no files).
        let sounds = try #require(SoundLibrary(directory: configuration.notifications.soundsDirectory))
        #expect(sounds.problem(withSoundNamed: "chime") != nil, "no such file in the sounds directory")
        #expect(SoundLibrary(directory: ChimeConfiguration().notifications.soundsDirectory) == nil, "none by default")
    }
}
