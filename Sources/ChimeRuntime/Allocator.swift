#if canImport(Glibc)
import Glibc

/// glibc's `mallopt` and `malloc_trim`, which Swift's Glibc module does not export.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif

/// How a Chime process sets up the C allocator (glibc malloc) and gives memory back.
///
/// glibc's defaults cost a Chime process memory it never uses again: every thread that
/// allocates (the coordinator's loop, its ZeroMQ I/O threads, the forwarder, the journal
/// writer, the reply encoder, HTTP) may get an arena of its own whose free pages stay
/// mapped, and after the first large block is freed the mmap threshold climbs (up to 32 MiB),
/// so the large buffers of a burst — hash tables growing, snapshot arrays — are carved out of
/// the heap and leave it fragmented. Measured at the W1 100k burst (coordinator + 2 workers,
/// summed `Pss`): 130–135 MB with the defaults, 123.5 MB with one arena, 118.2 MB with a fixed
/// 256 KiB mmap threshold, 112.2 MB with both; a 4 MiB threshold keeps that (±2 MB) at half
/// the 256 KiB threshold's extra system time (page faults of mapped blocks), per
/// `Benchmarks/HISTORY.md`, "Issue 17, fifth session".
public enum Allocator {
    /// One tunable of glibc malloc, as `mallopt` takes it.
    public struct Setting: Hashable, Sendable, CustomStringConvertible {
        /// The `mallopt` parameter (`M_ARENA_MAX` is −8, `M_MMAP_THRESHOLD` −3).
        public let parameter: Int32
        /// Its value (arenas; bytes for the threshold).
        public let value: Int32
        /// The environment variable glibc reads for the same tunable; when the environment
        /// sets it, the operator's value stands and this setting is not applied.
        public let environmentName: String

        /// At most one malloc arena: every thread allocates from the main heap (each keeps
        /// glibc's per-thread cache of small blocks, so the lock is rarely contended).
        public static let singleArena = Setting(parameter: -8, value: 1, environmentName: "MALLOC_ARENA_MAX")
        /// Blocks of 4 MiB (4,194,304 bytes) and more are mapped on their own and unmapped
        /// when freed; a fixed threshold also stops glibc from raising it after each free.
        public static let mmapThreshold = Setting(
            parameter: -3, value: 4 << 20, environmentName: "MALLOC_MMAP_THRESHOLD_")

        public var description: String { "\(environmentName)=\(value)" }
    }

    /// The settings a service process (coordinator, worker, standby) runs with.
    public static let serviceSettings: [Setting] = [.singleArena, .mmapThreshold]

    /// The settings of `settings` that `environment` does not override (glibc reads those
    /// variables itself at start; an operator who sets one keeps it).
    public static func settings(
        _ settings: [Setting] = serviceSettings, notOverriddenBy environment: [String: String]
    ) -> [Setting] {
        settings.filter { environment[$0.environmentName] == nil }
    }

    /// Applies `settings` with `mallopt`. Call it first thing in `main`: an arena limit only
    /// holds for arenas not yet made, and the Swift runtime starts threads lazily.
    /// - Returns: the settings glibc accepted (all of them on glibc; none elsewhere, where
    ///   nothing is changed).
    @discardableResult
    public static func apply(_ settings: [Setting]) -> [Setting] {
        #if canImport(Glibc)
        return settings.filter { glibcMallopt($0.parameter, $0.value) == 1 }
        #else
        return []
        #endif
    }

    /// Returns free heap pages to the system (glibc `malloc_trim(0)`: the top of the heap and
    /// whole free pages inside it); nothing elsewhere.
    public static func releaseFreePages() {
        #if canImport(Glibc)
        _ = glibcMallocTrim(0)
        #endif
    }
}
