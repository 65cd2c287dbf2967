import ChimeCore
import ChimeTestSupport
import ChimeWire
import Foundation
import Testing
import ChimeClient

/// Issue 13 over real processes: the coordinator's wall clock is stepped by an `LD_PRELOAD`
/// shim (built here with gcc) that adds the offset written in a file to every
/// `clock_gettime(CLOCK_REALTIME)` and `gettimeofday` of that one process.
@Suite(.serialized) struct ClockStepTests {
    /// The shim: CLOCK_REALTIME (and its coarse variant) plus the whole seconds in
    /// `$CHIME_TEST_CLOCK_OFFSET_FILE`, read on every call; other clocks untouched.
    static let shimSource = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>

        static long offset_seconds(void) {
            const char *path = getenv("CHIME_TEST_CLOCK_OFFSET_FILE");
            if (!path) return 0;
            FILE *file = fopen(path, "r");
            if (!file) return 0;
            long value = 0;
            if (fscanf(file, "%ld", &value) != 1) value = 0;
            fclose(file);
            return value;
        }

        int clock_gettime(clockid_t clock, struct timespec *spec) {
            static int (*real)(clockid_t, struct timespec *);
            if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int result = real(clock, spec);
            if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) spec->tv_sec += offset_seconds();
            return result;
        }

        int gettimeofday(struct timeval *restrict value, void *restrict zone) {
            struct timespec spec;
            int result = clock_gettime(CLOCK_REALTIME, &spec);
            if (result == 0 && value) {
                value->tv_sec = spec.tv_sec;
                value->tv_usec = spec.tv_nsec / 1000;
            }
            (void)zone;
            return result;
        }
        """#

    /// Builds the shim into `directory`; `nil` (with the reason printed) where gcc cannot.
    static func buildShim(in directory: TemporaryDirectory) -> String? {
        let source = directory.path("clockshift.c")
        let library = directory.path("clockshift.so")
        do {
            try Data(shimSource.utf8).write(to: URL(fileURLWithPath: source))
            let gcc = Process()
            gcc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            gcc.arguments = ["gcc", "-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"]
            try gcc.run()
            gcc.waitUntilExit()
            guard gcc.terminationStatus == 0 else {
                print("ClockStepTests: skipped, gcc exited \(gcc.terminationStatus)")
                return nil
            }
            return library
        } catch {
            print("ClockStepTests: skipped, gcc did not run: \(error)")
            return nil
        }
    }

    @Test func aStoppedWorkersFiringsAreRedeliveredAfterTheCoordinatorsClockStepsAnHourBack() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        guard let shim = Self.buildShim(in: cluster.directory) else { return }
        let offsetFile = cluster.directory.path("clock-offset")
        try Data("0".utf8).write(to: URL(fileURLWithPath: offsetFile))
        cluster.environmentByName["coordinator"] = ["LD_PRELOAD": shim, "CHIME_TEST_CLOCK_OFFSET_FILE": offsetFile]
        // Leases longer than the test: only liveness can hand the stopped worker's firings on;
        // small batches alternate between the workers, so the stopped one gets some.
        try cluster.start(workers: 2, configuration: """
            {"coordinator": {"leaseSeconds": 120, "maxBatchSize": 5}, "heartbeat": {"intervalMilliseconds": 500, "liveness": 6}}
            """)
        let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(2), retries: 3)
        let collector = EventCollector(endpoint: cluster.eventsEndpoint)
        defer { collector.close() }
        try ClusterDeliveryTests.waitUntilSubscribed(collector, client: client, recipient: "probe")

        // Worker 1 stops answering but stays alive for its liveness (3 s) and takes firings.
        cluster.send(SIGSTOP, to: "worker-1")
        defer { cluster.send(SIGCONT, to: "worker-1") }
        let due = Date().addingTimeInterval(0.3)
        let reminders = try (0..<50).map { try Durability.plainReminder(id: "step-\($0)", due: due) }
        _ = try client.send(ControlRequest(command: .schedule(reminders)), expecting: ScheduleResult.self)
        var held = 0
        try expectEventually(timeout: 10, "every reminder made into a firing") {
            let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self).result
            held = status?.inFlight ?? 0
            return (status?.reminders["pending"] ?? 0) == 0
        }
        try #require(held > 0, "the stopped worker holds firings when the clock steps")

        // An hour back on the coordinator's wall clock. With wall-clock liveness the stopped
        // worker stayed "alive" for that hour and its firings were not redelivered.
        try Data("-3600".utf8).write(to: URL(fileURLWithPath: offsetFile))
        try expectEventually(timeout: 20, "all 50 firings delivered") {
            Set(collector.received.map(\.firing.firingId).filter { $0.reminder.rawValue.hasPrefix("step-") }).count == 50
        }
        let delivered = collector.received.filter { $0.firing.reminderId.rawValue.hasPrefix("step-") }
        #expect(Set(delivered.map(\.firing.reminderId)) == Set(reminders.map(\.id)))
        #expect(delivered.allSatisfy { $0.firing.attempt <= 2 })
        try expectEventually(timeout: 5, "the step in the coordinator's log") {
            cluster.log(of: "coordinator").contains("wall clock stepped")
        }
    }
}

/// Issue 25: the store's lease runs on the monotonic clock; a wall-clock step (NTP, an
/// operator) neither lapses it nor lets a standby take over a coordinator that is fine.
@Suite(.serialized) struct LeaseClockStepTests {
    @Test func wallClockStepsDoNotLapseTheLeaseOrStartATakeover() throws {
        let cluster = try LocalCluster()
        defer { cluster.stop() }
        guard let shim = ClockStepTests.buildShim(in: cluster.directory) else { return }
        let offsetFile = cluster.directory.path("clock-offset")
        try Data("0".utf8).write(to: URL(fileURLWithPath: offsetFile))
        for name in ["coordinator", "standby"] {
            cluster.environmentByName[name] = ["LD_PRELOAD": shim, "CHIME_TEST_CLOCK_OFFSET_FILE": offsetFile]
        }
        try cluster.start(workers: 0, coordinatorArguments: ["--store", "store"])
        try cluster.startStandby(store: cluster.directory.path("store"))
        try expectEventually(timeout: 20, "the standby to wait") { cluster.log(of: "standby").contains("standby: warm state loaded") }
        let pid = try #require(cluster.pid(of: "coordinator"))
        // Back 3 s for 3 s (a semaphore's timed wait would then sleep 3 s past its deadline),
        // then forward 3 s for 3 s.
        for offset in ["-3", "3"] {
            try Data(offset.utf8).write(to: URL(fileURLWithPath: offsetFile))
            Thread.sleep(forTimeInterval: 3)
        }
        try Data("0".utf8).write(to: URL(fileURLWithPath: offsetFile))
        let client = try ControlClient(endpoint: cluster.controlEndpoint, timeout: .seconds(1), retries: 2)
        let status = try client.send(ControlRequest(command: .status), expecting: StatusReport.self)
        #expect(status.result?.pid == pid, "the same coordinator serves")
        #expect(!cluster.log(of: "coordinator").contains("lease lapsed"))
        #expect(!cluster.log(of: "standby").contains("lease expired"))
        #expect(cluster.log(of: "coordinator").contains("wall clock stepped"))
    }
}
