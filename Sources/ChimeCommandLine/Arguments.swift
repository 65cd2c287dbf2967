import Foundation
import ChimeCore

/// A command-line mistake: exit status 2 with a one-line reason.
public struct UsageError: Error, CustomStringConvertible {
    /// The reason, one line.
    public var message: String
    /// Creates the value from its fields.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// One option a command accepts.
public struct OptionSpec: Sendable {
    /// The long name without dashes (`recipient`).
    public var name: String
    /// The placeholder of its value (`ID`), or `nil` for a flag without value.
    public var value: String?
    /// One line of help.
    public var help: String
    /// Whether it may be given more than once.
    public var repeats = false

    /// Creates the value from its fields (see each property for meaning).
    public init(name: String, value: String?, help: String, repeats: Bool = false) {
        self.name = name
        self.value = value
        self.help = help
        self.repeats = repeats
    }
}

/// A subcommand's name, help and options.
public struct CommandSpec: Sendable {
    /// The subcommand (`schedule`), as typed after `chime`.
    public var name: String
    /// One line for `chime --help`.
    public var summary: String
    /// The usage line (`chime schedule --recipient ID …`).
    public var usage: String
    /// The options it accepts (`--help` is added to every command).
    public var options: [OptionSpec]
    /// Paragraphs shown by `--help` after the usage line.
    public var details: String = ""

    /// Creates the value from its fields (see each property for meaning).
    public init(name: String, summary: String, usage: String, options: [OptionSpec], details: String = "") {
        self.name = name
        self.summary = summary
        self.usage = usage
        self.options = options
        self.details = details
    }

    /// What `--help` prints: summary, usage, details and one line per option.
    public var helpText: String {
        var text = "\(summary)\n\nUsage: \(usage)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        let all = options + [OptionSpec(name: "help", value: nil, help: "Show this help.")]
        text += "\nOptions:\n"
        let labels = all.map { option in "  --\(option.name)" + (option.value.map { " \($0)" } ?? "") }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (label, option) in zip(labels, all) {
            text += label.padding(toLength: width, withPad: " ", startingAt: 0) + option.help
            if option.repeats { text += " (repeatable)" }
            text += "\n"
        }
        return text
    }
}

/// Parsed command-line arguments of one subcommand.
public struct Arguments: Sendable {
    /// Each option's values, in the order given.
    public var values: [String: [String]] = [:]
    /// The flags given (options without a value, and `help`).
    public var flags: Set<String> = []
    /// The arguments that are not options, in order.
    public var positionals: [String] = []

    /// Parses `--name value`, `--name=value`, flags and positionals (`--` ends options). A
    /// value given as the next argument never starts with `--`: `--cursor --json` is a
    /// missing value, and `--title=--draft` gives such a value.
    /// - Throws: `UsageError` for an unknown option or a missing value.
    public init(_ arguments: [String], spec: CommandSpec) throws {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "help" {
                flags.insert("help")
                continue
            }
            guard let option = spec.options.first(where: { $0.name == name }) else {
                let hint = Suggestions.hint(for: name, among: spec.options.map(\.name) + ["help"], prefix: "--")
                throw UsageError("unknown option --\(name) for '\(spec.name)'\(hint); see 'chime \(spec.name) --help'")
            }
            if option.value == nil {
                if inlineValue != nil { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                // `list --cursor --json` had taken `--json` as the cursor: a separate value never
                // starts with `--` (one that does is written `--name=--value`).
                let placeholder = option.value ?? "VALUE"
                let hint = index < arguments.count ? "; a value starting with -- is written --\(name)=\(placeholder)" : ""
                throw UsageError("--\(name) needs a value (\(placeholder))\(hint)")
            }
            if !option.repeats && values[name] != nil {
                throw UsageError("--\(name) is given twice")
            }
            values[name, default: []].append(value)
        }
    }

    /// The last value of `--name`, if given.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value of a repeatable `--name`.
    public func all(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether the flag `--name` was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer.
    /// - Throws: `UsageError` (exit 2) when it is not one.
    public func integer(_ name: String) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw UsageError("--\(name) must be an integer, not '\(text)'") }
        return number
    }

    /// The value of `--name` as seconds (`90s`, `5m`, `1h30m`).
    /// - Throws: `UsageError` (exit 2) naming the flag when the text is not a duration.
    public func seconds(_ name: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        return try Self.seconds(text, flag: name)
    }

    /// `text` as seconds, a mistake reported against `--flag`.
    /// - Throws: `UsageError` (exit 2).
    public static func seconds(_ text: String, flag: String) throws(UsageError) -> Double {
        do {
            return try DurationParser.parseSeconds(text)
        } catch {
            throw UsageError("--\(flag): \(error.message)")
        }
    }

    /// The value of `--name` parsed by `parse`, a `ValidationError` turned into a usage error
    /// naming the flag.
    /// - Throws: `UsageError` (exit 2).
    public func parsed<Value>(_ name: String, _ parse: (String) throws(ValidationError) -> Value) throws(UsageError) -> Value? {
        guard let text = value(name) else { return nil }
        return try Self.parse(text, flag: name, parse)
    }

    /// `text` parsed by `parse`, a `ValidationError` turned into a usage error naming `--flag`.
    /// - Throws: `UsageError` (exit 2).
    public static func parse<Value>(_ text: String, flag: String, _ parse: (String) throws(ValidationError) -> Value)
        throws(UsageError) -> Value
    {
        do {
            return try parse(text)
        } catch {
            throw UsageError("--\(flag): \(error.message)")
        }
    }
}
