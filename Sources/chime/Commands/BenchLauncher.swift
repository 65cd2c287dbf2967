import ChimeCommandLine
import Foundation

/// `chime bench …`: runs the benchmark harness, which is the `chime-bench` executable beside
/// this one (the product binary does not link it), with the same arguments. `execv(2)`
/// replaces this process, so output, signals and the exit status are the harness's own.
enum BenchLauncher {
    static let spec = CommandSpec(
        name: "bench",
        summary: "Benchmark a local cluster on a workload of WORKLOADS.md; one JSON object per run.",
        usage: "chime bench --workload W1|W2|W3|W4 [options]   (runs chime-bench; see 'chime bench --help')",
        options: [])

    /// The harness's path: `chime-bench` in the directory of this executable.
    static var harnessPath: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("chime-bench").path
    }

    /// Replaces this process with `chime-bench argv…`; returns only by throwing.
    /// - Throws: `RuntimeFailure` when the harness is missing or cannot be executed.
    static func exec(_ argv: [String]) throws -> Int32 {
        let path = harnessPath
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw RuntimeFailure(
                "chime bench runs \(path), which is missing: build it beside chime with 'swift build -c release --product chime-bench'")
        }
        var arguments = ([path] + argv).map { strdup($0) }
        arguments.append(nil)
        execv(path, arguments)
        let code = errno
        for argument in arguments { free(argument) }
        throw RuntimeFailure("cannot run \(path): \(String(cString: strerror(code)))")
    }
}
