import ChimeRuntime
import ChimeWire
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
    CancelCommand.self, SubscribeCommand.self, ControlCommand.self, RegisterCommand.self, BadgeCommand.self,
    AckCommand.self, EnableCommand.self, DisableCommand.self, DeliveredCommand.self, ActCommand.self,
    ImportCommand.self, PreviewCommand.self, StoreCommand.self, KeysCommand.self, BenchCommand.self,
]

func mainHelp() -> String {
    var text = """
        chime \(ChimeVersion.current) — a reminder-scheduling cluster (iOS local notifications, server side).

        Usage: chime <command> [options]     'chime <command> --help' for a command's options

        Commands:

        """
    for command in commands {
        let name = command.spec.name.padding(toLength: 13, withPad: " ", startingAt: 0)
        text += "  \(name)\(command.spec.summary)\n"
    }
    text += "  version      Print the version.\n"
    return text
}

func runMain() -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    let json = argv.prefix(while: { $0 != "--" }).contains("--json")
    guard let name = argv.first, !["--help", "-h", "help"].contains(name) else {
        output(mainHelp(), terminator: "")
        return argv.isEmpty ? 2 : 0
    }
    argv.removeFirst()
    do {
        return try dispatch(name, argv)
    } catch {
        let failure = CommandFailure(error)
        if json {
            output(failure.jsonDocument)
        } else {
            printError(failure.humanMessage)
        }
        return failure.exitStatus
    }
}

/// Runs command `name` with its arguments.
/// - Throws: whatever the command throws; `UsageError` for an unknown command or option.
func dispatch(_ name: String, _ argv: [String]) throws -> Int32 {
    if name == "version" || name == "--version" {
        let arguments: Arguments = try Arguments(argv, spec: VersionCommand.spec)
        return try VersionCommand.run(arguments)
    }
    guard let command = commands.first(where: { $0.spec.name == name }) else {
        let hint = Suggestions.hint(for: name, among: commands.map { $0.spec.name } + ["version"])
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

func printError(_ message: String) {
    StandardStreams.writeError("chime: \(message)\n")
}

/// Writes one line straight to standard output (no stdio buffering, so a pipe sees each
/// event at once). Shadows `Swift.print` inside this executable.
func output(_ text: String = "", terminator: String = "\n") {
    // SIGPIPE is ignored: a reader that went away (`chime list | head`) ends the command
    // as that signal would have, with the shell's status for it.
    if StandardStreams.write(Data((text + terminator).utf8), to: STDOUT_FILENO) == EPIPE { exit(128 + SIGPIPE) }
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
