extension ChimeConfiguration {
    /// How long-running roles log (Docs/Chime.docc/Operations/Logs.md); `--log-level`, `--log-json` and
    /// `--syslog-prefix` override these keys.
    public struct Log: Codable, Hashable, Sendable {
        /// `debug`, `info`, `warning` or `error`: lines below it are dropped. SIGHUP re-reads it.
        public var level = "info"
        /// `text` (`time LEVEL label: message key=value`) or `json` (one object a line).
        public var format = "text"
        /// `auto` (lead each line with its syslog priority, `<4>`, when standard error goes to
        /// journald: `JOURNAL_STREAM` is set), `always` or `never`.
        public var syslogPrefix = "auto"

        /// The defaults shown on each property.
        public init() {}

        /// The parsed level.
        /// - Throws: `ConfigurationError` for an unknown name.
        public func minimumLevel() throws(ConfigurationError) -> Logger.Level {
            guard let parsed = Logger.Level(name: level) else {
                throw ConfigurationError("log.level must be debug, info, warning or error, not '\(level)'")
            }
            return parsed
        }

        /// The line format these settings give.
        /// - Parameter environment: where `JOURNAL_STREAM` is looked up for `syslogPrefix: auto`
        ///   (`ProcessInfo.processInfo.environment` in a process).
        /// - Throws: `ConfigurationError` for an unknown format or prefix mode.
        public func lineFormat(environment: [String: String]) throws(ConfigurationError) -> LogLineFormat {
            guard ["text", "json"].contains(format) else {
                throw ConfigurationError("log.format must be text or json, not '\(format)'")
            }
            let prefix: Bool
            switch syslogPrefix {
            case "auto": prefix = !(environment["JOURNAL_STREAM"] ?? "").isEmpty
            case "always": prefix = true
            case "never": prefix = false
            default: throw ConfigurationError("log.syslogPrefix must be auto, always or never, not '\(syslogPrefix)'")
            }
            return LogLineFormat(json: format == "json", syslogPrefix: prefix)
        }

        /// A logger for `label` with these settings, writing to standard error.
        /// - Parameter environment: as for ``lineFormat(environment:)``.
        /// - Throws: `ConfigurationError` for an unknown level, format or prefix mode.
        public func makeLogger(label: String, environment: [String: String]) throws(ConfigurationError) -> Logger {
            let level = try minimumLevel()
            let format = try lineFormat(environment: environment)
            return Logger(label: label, minimumLevel: level, handler: StandardErrorLogHandler(format: format))
        }
    }
}
