import Foundation

/// The standard `process_*` metrics of this process (the names every Prometheus client
/// library uses), read from `/proc/self` on Linux; a figure that cannot be read is left out.
public struct ProcessMetrics: Hashable, Sendable {
    /// User plus system CPU time, in seconds.
    public var cpuSeconds: Double?
    /// Resident set size, in bytes.
    public var residentMemoryBytes: Double?
    /// Virtual memory size, in bytes.
    public var virtualMemoryBytes: Double?
    /// When the process started, in seconds since the Unix epoch.
    public var startTimeSeconds: Double?
    /// Open file descriptors.
    public var openFileDescriptors: Double?
    /// The soft limit on open file descriptors (`RLIMIT_NOFILE`).
    public var maximumFileDescriptors: Double?

    /// Creates the value from its fields (see each property for meaning and units).
    public init() {}

    /// Reads the figures now: `/proc/self/stat`, `/proc/stat` (boot time), `/proc/self/fd`
    /// and `getrlimit(RLIMIT_NOFILE)`.
    public static func current() -> ProcessMetrics {
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageBytes = Double(sysconf(Int32(_SC_PAGESIZE)))
        var metrics = ProcessMetrics()
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8)
        {
            metrics = parse(stat: stat, systemStat: system, ticksPerSecond: ticksPerSecond, pageBytes: pageBytes)
        }
        metrics.openFileDescriptors = countOpenFileDescriptors()
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { metrics.maximumFileDescriptors = Double(limit.rlim_cur) }
        return metrics
    }

    /// The figures in `/proc/self/stat` (`proc(5)`: after the parenthesised command name,
    /// field 14 utime and 15 stime in clock ticks, 22 starttime in ticks after boot, 23
    /// vsize in bytes, 24 rss in pages) and the boot time (`btime`) of `/proc/stat`. Total:
    /// a figure that does not parse is `nil`.
    public static func parse(stat: String, systemStat: String, ticksPerSecond: Double, pageBytes: Double) -> ProcessMetrics {
        var metrics = ProcessMetrics()
        guard ticksPerSecond > 0, let close = stat.lastIndex(of: ")") else { return metrics }
        // Field 3 (the state) is the first after the command name.
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Double? {
            let index = number - 3
            guard index >= 0, index < fields.count, let value = UInt64(fields[index]) else { return nil }
            return Double(value)
        }
        if let user = field(14), let system = field(15) { metrics.cpuSeconds = (user + system) / ticksPerSecond }
        metrics.virtualMemoryBytes = field(23)
        metrics.residentMemoryBytes = field(24).map { $0 * pageBytes }
        let bootTime = systemStat.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { UInt64($0.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces)) }
        if let bootTime, let started = field(22) { metrics.startTimeSeconds = Double(bootTime) + started / ticksPerSecond }
        return metrics
    }

    /// Entries of `/proc/self/fd` (the one listing it included); `nil` without `/proc`.
    static func countOpenFileDescriptors() -> Double? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return Double(count)
    }

    /// Adds `chime_build_info` (1, labelled with the release) and the `process_*` families
    /// that have a figure.
    public func write(into exposition: inout MetricsExposition) {
        exposition.gauge(
            "chime_build_info", help: "Always 1; the label says which Chime release this process runs.",
            [([("version", ChimeVersion.current)], 1)])
        if let cpuSeconds {
            exposition.counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.", value: cpuSeconds)
        }
        if let residentMemoryBytes {
            exposition.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.", value: residentMemoryBytes)
        }
        if let virtualMemoryBytes {
            exposition.gauge("process_virtual_memory_bytes", help: "Virtual memory size in bytes.", value: virtualMemoryBytes)
        }
        if let startTimeSeconds {
            exposition.gauge(
                "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.", value: startTimeSeconds)
        }
        if let openFileDescriptors {
            exposition.gauge("process_open_fds", help: "Number of open file descriptors.", value: openFileDescriptors)
        }
        if let maximumFileDescriptors {
            exposition.gauge("process_max_fds", help: "Maximum number of open file descriptors.", value: maximumFileDescriptors)
        }
    }
}
