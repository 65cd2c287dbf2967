import ChimeRuntime
import Testing

@Suite struct MetricsExpositionTests {
    @Test func writesCountersGaugesAndHistogramsExactly() {
        var histogram = Histogram(upperBounds: [0.1, 1])
        histogram.observe(0.05)
        histogram.observe(0.1)
        histogram.observe(0.5)
        histogram.observe(7)
        var exposition = MetricsExposition()
        exposition.counter("chime_things_total", help: "Things done.", value: 3)
        exposition.gauge(
            "chime_reminders", help: "Reminders, by state.",
            [([("state", "pending")], 2), ([("state", "delivered")], 0)])
        exposition.histogram("chime_wait_seconds", help: "Waits.", histogram)
        #expect(exposition.text == """
            # HELP chime_things_total Things done.
            # TYPE chime_things_total counter
            chime_things_total 3
            # HELP chime_reminders Reminders, by state.
            # TYPE chime_reminders gauge
            chime_reminders{state="pending"} 2
            chime_reminders{state="delivered"} 0
            # HELP chime_wait_seconds Waits.
            # TYPE chime_wait_seconds histogram
            chime_wait_seconds_bucket{le="0.1"} 2
            chime_wait_seconds_bucket{le="1"} 3
            chime_wait_seconds_bucket{le="+Inf"} 4
            chime_wait_seconds_sum 7.65
            chime_wait_seconds_count 4

            """)
    }

    @Test func writesLabelledHistogramsWithTheirLabelsBeforeLe() {
        var list = Histogram(upperBounds: [0.1])
        list.observe(0.05)
        var schedule = Histogram(upperBounds: [0.1])
        schedule.observe(0.2)
        schedule.observe(0.3)
        var exposition = MetricsExposition()
        exposition.constantLabels = [("shard", "2")]
        exposition.histogram("chime_request_duration_seconds", help: "By op.", [([("op", "list")], list), ([("op", "schedule")], schedule)])
        #expect(exposition.text == """
            # HELP chime_request_duration_seconds By op.
            # TYPE chime_request_duration_seconds histogram
            chime_request_duration_seconds_bucket{shard="2",op="list",le="0.1"} 1
            chime_request_duration_seconds_bucket{shard="2",op="list",le="+Inf"} 1
            chime_request_duration_seconds_sum{shard="2",op="list"} 0.05
            chime_request_duration_seconds_count{shard="2",op="list"} 1
            chime_request_duration_seconds_bucket{shard="2",op="schedule",le="0.1"} 0
            chime_request_duration_seconds_bucket{shard="2",op="schedule",le="+Inf"} 2
            chime_request_duration_seconds_sum{shard="2",op="schedule"} 0.5
            chime_request_duration_seconds_count{shard="2",op="schedule"} 2

            """)
    }

    @Test func escapesLabelValuesAndHelp() {
        var exposition = MetricsExposition()
        exposition.counter(
            "chime_requests_total", help: "A \\ backslash\nand a newline; \"quotes\" stay.",
            [([("op", "sch\"edule"), ("code", "a\\b\nc")], 1)])
        #expect(exposition.text == """
            # HELP chime_requests_total A \\\\ backslash\\nand a newline; "quotes" stay.
            # TYPE chime_requests_total counter
            chime_requests_total{op="sch\\"edule",code="a\\\\b\\nc"} 1

            """)
    }

    @Test func writesAFamilyWithoutSamplesAsHelpAndTypeOnly() {
        var exposition = MetricsExposition()
        exposition.counter("chime_requests_total", help: "None yet.", [])
        #expect(exposition.text == "# HELP chime_requests_total None yet.\n# TYPE chime_requests_total counter\n")
    }

    @Test(arguments: [
        (0.0, "0"), (3.0, "3"), (-2.0, "-2"), (0.005, "0.005"), (1e-05, "1e-05"), (2.5, "2.5"),
        (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"), (1e20, "1e+20"),
    ])
    func formatsValues(value: Double, text: String) {
        #expect(MetricsExposition.format(value) == text)
    }

    @Test func histogramPutsBoundsInclusiveAndDropsNaN() {
        var histogram = Histogram(upperBounds: [1, 2])
        for value in [-5, 1, 1.0000001, 2, .infinity, .nan] { histogram.observe(value) }
        #expect(histogram.bucketCounts == [2, 2, 1])
        #expect(histogram.count == 5)
        #expect(histogram.sum == -5 + 1 + 1.0000001 + 2)
    }

    @Test func parsesProcStat() {
        // proc(5): a command name with spaces and parentheses, then fields 3 onwards.
        let stat = "4242 (chime (x) y) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 3 0 1000 123456789 2048 18446744073709551615"
        let metrics = ProcessMetrics.parse(
            stat: stat, systemStat: "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n", ticksPerSecond: 100, pageBytes: 4096)
        #expect(metrics.cpuSeconds == 3)
        #expect(metrics.startTimeSeconds == 1_700_000_010)
        #expect(metrics.virtualMemoryBytes == 123_456_789)
        #expect(metrics.residentMemoryBytes == 8_388_608.0)
    }

    @Test(arguments: ["", "garbage", "1 (x", "1 (x) S", "1 (x) S a b c d e f g h i j k l m n o p q r s t u v", "\u{0}\u{FFFF})"])
    func leavesOutWhatProcStatDoesNotSay(stat: String) {
        let metrics = ProcessMetrics.parse(stat: stat, systemStat: "btime x", ticksPerSecond: 100, pageBytes: 4096)
        #expect(metrics.cpuSeconds == nil)
        #expect(metrics.startTimeSeconds == nil)
        #expect(metrics.residentMemoryBytes == nil)
    }

    @Test func readsThisProcess() {
        let metrics = ProcessMetrics.current()
        #expect((metrics.residentMemoryBytes ?? 0) > 0)
        #expect((metrics.openFileDescriptors ?? 0) >= 3)
        #expect((metrics.maximumFileDescriptors ?? 0) >= (metrics.openFileDescriptors ?? 0))
        #expect((metrics.startTimeSeconds ?? 0) > 1_600_000_000)
        var exposition = MetricsExposition()
        metrics.write(into: &exposition)
        for family in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
                       "process_open_fds", "process_max_fds"] {
            #expect(exposition.text.contains("# TYPE \(family) "))
        }
    }
}
