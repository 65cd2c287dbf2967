import ChimeCommandLine
import Foundation

/// The `chime-bench` executable: what `chime bench` runs (Docs/Chime.docc/Reference/Benchmarks.md).
@main
enum ChimeBenchTool {
    static func main() {
        let argv = Array(CommandLine.arguments.dropFirst())
        let json = argv.prefix(while: { $0 != "--" }).contains("--json")
        exit(runReportingFailure(json: json) {
            let arguments = try Arguments(argv, spec: BenchCommand.spec)
            if arguments.has("help") {
                output(BenchCommand.spec.helpText, terminator: "")
                return 0
            }
            return try BenchCommand.run(arguments)
        })
    }
}
