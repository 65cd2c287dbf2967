import ChimeRuntime
import ChimeWire
import ChimeCommandLine
import Foundation
import ZeroMQ

/// A subcommand of `chime`.
protocol Command: Sendable {
    static var spec: CommandSpec { get }
    /// Runs the command; returns the process exit status.
    static func run(_ arguments: Arguments) throws -> Int32
}

let commands: [any Command.Type] = [
    UpCommand.self, CoordinatorCommand.self, WorkerCommand.self, ScheduleCommand.self, ListCommand.self,
    CancelCommand.self, SubscribeCommand.self, ControlCommand.self, RegisterCommand.self, RecipientCommand.self, BadgeCommand.self,
    AckCommand.self, EnableCommand.self, DisableCommand.self, DeliveredCommand.self, ActCommand.self,
    ImportCommand.self, PreviewCommand.self, StoreCommand.self, KeysCommand.self, DashboardCommand.self, ShardsCommand.self,
    TriggerCommandLine.self, BackfillCommand.self, RemainingCommand.self, LocateCommand.self, CalendarCommand.self,
]

func mainHelp() -> String {
    var text = """
        chime \(ChimeVersion.current) — a reminder-scheduling cluster (iOS local notifications, server side).

        Usage: chime <command> [options]     'chime <command> --help' for a command's options

        Commands:

        """
    for spec in commands.map({ $0.spec }) + [BenchLauncher.spec] {
        let name = spec.name.padding(toLength: 13, withPad: " ", startingAt: 0)
        text += "  \(name)\(spec.summary)\n"
    }
    text += "  version      Print the version.\n"
    return text
}

func runMain() -> Int32 {
    ParentWatch.startIfAsked()
    var argv = Array(CommandLine.arguments.dropFirst())
    let json = argv.prefix(while: { $0 != "--" }).contains("--json")
    guard let name = argv.first, !["--help", "-h", "help"].contains(name) else {
        output(mainHelp(), terminator: "")
        return argv.isEmpty ? 2 : 0
    }
    argv.removeFirst()
    return runReportingFailure(json: json) { try dispatch(name, argv) }
}

/// Runs command `name` with its arguments.
/// - Throws: whatever the command throws; `UsageError` for an unknown command or option.
func dispatch(_ name: String, _ argv: [String]) throws -> Int32 {
    if name == "version" || name == "--version" {
        let arguments: Arguments = try Arguments(argv, spec: VersionCommand.spec)
        return try VersionCommand.run(arguments)
    }
    // Its options are the harness's: passed on as they are, unparsed.
    if name == BenchLauncher.spec.name { return try BenchLauncher.exec(argv) }
    guard let command = commands.first(where: { $0.spec.name == name }) else {
        let hint = Suggestions.hint(for: name, among: commands.map { $0.spec.name } + ["version", BenchLauncher.spec.name])
        throw UsageError("unknown command '\(name)'\(hint); see 'chime --help'")
    }
    let arguments = try Arguments(argv, spec: command.spec)
    if arguments.has("help") {
        output(command.spec.helpText, terminator: "")
        return 0
    }
    return try command.run(arguments)
}

enum VersionCommand {
    static let spec = CommandSpec(
        name: "version", summary: "Print the version.", usage: "chime version [--json]",
        options: [OptionSpec(name: "json", value: nil, help: "Print {\"ok\":true,\"result\":{\"version\",\"libzmq\",\"curve\"}}.")])

    static func run(_ arguments: Arguments) throws -> Int32 {
        if arguments.has("help") {
            output(spec.helpText, terminator: "")
            return 0
        }
        guard arguments.positionals.isEmpty else { throw UsageError("version takes no arguments") }
        let libzmq = "\(zeroMQVersion.major).\(zeroMQVersion.minor).\(zeroMQVersion.patch)"
        let curve = zeroMQSupports("curve")
        if arguments.has("json") {
            output(jsonLine(["ok": true, "result": ["version": ChimeVersion.current, "libzmq": libzmq, "curve": curve]]))
        } else {
            let curveText = curve ? "CURVE available" : "no CURVE: install a libzmq built with libsodium"
            output("chime \(ChimeVersion.current) (libzmq \(libzmq), \(curveText))")
        }
        return 0
    }
}

@main
enum Chime {
    static func main() {
        StandardStreams.ignoreBrokenPipe()
        // Before any thread starts: an arena limit holds only for arenas not yet made.
        if let command = CommandLine.arguments.dropFirst().first, serviceCommands.contains(command) {
            Allocator.apply(Allocator.settings(notOverriddenBy: ProcessInfo.processInfo.environment))
        }
        exit(runMain())
    }

    /// The commands that run a long-lived service process, which run with
    /// `Allocator.serviceSettings` (clients and tools keep glibc's defaults).
    static let serviceCommands: Set<String> = ["coordinator", "worker"]
}
