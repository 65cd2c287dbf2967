import ChimeRuntime
import Foundation

/// Options for the log output of long-running roles; they override the `log` keys of the
/// configuration file.
enum LogOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "log-level", value: "LEVEL", help: "debug, info (default), warning or error (log.level; SIGHUP re-reads the key unless this flag is given)."),
        OptionSpec(name: "log-json", value: nil, help: "Log one JSON object a line (log.format json)."),
        OptionSpec(name: "syslog-prefix", value: "MODE", help: "Lead each line with its syslog priority (<4>): auto (when JOURNAL_STREAM is set, as under systemd; default), always or never."),
    ]

    /// The `log` settings of `configuration` with the flags applied.
    /// - Throws: `UsageError` for a bad flag value.
    static func settings(_ arguments: Arguments, _ configuration: ChimeConfiguration) throws -> ChimeConfiguration.Log {
        var settings = configuration.log
        if let name = arguments.value("log-level") {
            guard Logger.Level(name: name) != nil else {
                throw UsageError("--log-level must be debug, info, warning or error, not '\(name)'")
            }
            settings.level = name
        }
        if arguments.has("log-json") { settings.format = "json" }
        if let mode = arguments.value("syslog-prefix") {
            guard ["auto", "always", "never"].contains(mode) else {
                throw UsageError("--syslog-prefix must be auto, always or never, not '\(mode)'")
            }
            settings.syslogPrefix = mode
        }
        return settings
    }

    /// A logger for `label` from the configuration's `log` keys and the flags, after logging
    /// `configuration loaded` with where the configuration came from.
    /// - Throws: `UsageError` for a bad flag, `ConfigurationError` for a bad `log` key.
    static func logger(_ label: String, _ arguments: Arguments, _ configuration: ChimeConfiguration) throws -> Logger {
        let logger = try settings(arguments, configuration)
            .makeLogger(label: label, environment: ProcessInfo.processInfo.environment)
        logger.info("configuration loaded", [
            "config": .string(CommonOptions.configurationPath(arguments) ?? "built-in defaults"),
            "logLevel": "\(logger.minimumLevel)", "pid": .integer(getpid()),
        ])
        return logger
    }

    /// Makes SIGHUP reload instead of terminate (its default action): re-reads the configuration
    /// file, sets the log level from `log.level` (unless `--log-level` was given), runs
    /// `reloadMore` (the coordinator's allow-lists), and logs `reloaded` at info with the
    /// outcome, or `reload failed` at error while the previous settings stay in force.
    static func installReload(
        _ arguments: Arguments, logger: Logger,
        reloadMore: @escaping @Sendable () throws -> [String: LogValue] = { [:] }
    ) {
        let path = CommonOptions.configurationPath(arguments)
        let isLevelFixed = arguments.value("log-level") != nil
        installReloadHandler {
            do {
                var details: [String: LogValue] = ["config": .string(path ?? "built-in defaults")]
                if let path, !isLevelFixed {
                    let configuration = try ChimeConfiguration.load(from: URL(fileURLWithPath: path))
                    logger.minimumLevel = try configuration.log.minimumLevel()
                }
                details["logLevel"] = "\(logger.minimumLevel)"
                details.merge(try reloadMore()) { $1 }
                // At info, under the level the reload set: a reload is routine (a SIGHUP storm
                // had filled the log with warnings), a failure is not.
                logger.info("reloaded", details)
            } catch {
                logger.error("reload failed; the previous settings stay in force", ["error": "\(error)"])
            }
        }
    }
}
