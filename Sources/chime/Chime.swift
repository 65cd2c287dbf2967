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
    guard let name = argv.first, !["--help", "-h", "help"].contains(name) else {
        output(mainHelp(), terminator: "")
        return argv.isEmpty ? 2 : 0
    }
    argv.removeFirst()
    if name == "version" || name == "--version" {
        let curve = zeroMQSupports("curve") ? "CURVE available" : "no CURVE: install a libzmq built with libsodium"
        output("chime \(ChimeVersion.current) (libzmq \(zeroMQVersion.major).\(zeroMQVersion.minor).\(zeroMQVersion.patch), \(curve))")
        return 0
    }
    guard let command = commands.first(where: { $0.spec.name == name }) else {
        printError("unknown command '\(name)'; see 'chime --help'")
        return 2
    }
    do {
        let arguments = try Arguments(argv, spec: command.spec)
        if arguments.has("help") {
            output(command.spec.helpText, terminator: "")
            return 0
        }
        return try command.run(arguments)
    } catch let error as UsageError {
        printError(error.message)
        return 2
    } catch let error as WireError {
        printError("\(error.code): \(error.field.map { "\($0): " } ?? "")\(error.message)")
        return 1
    } catch {
        printError("\(error)")
        return 1
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("chime: \(message)\n".utf8))
}

/// Writes one line straight to standard output (no stdio buffering, so a pipe sees each
/// event at once). Shadows `Swift.print` inside this executable.
func output(_ text: String = "", terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}

@main
enum Chime {
    static func main() {
        exit(runMain())
    }
}
