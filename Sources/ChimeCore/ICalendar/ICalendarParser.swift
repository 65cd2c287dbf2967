import Foundation

/// A tolerant reader of iCalendar text (RFC 5545 §3.1, §3.4): real exports from Google,
/// Thunderbird, Outlook and Apple.
///
/// Accepts CRLF or bare LF line ends and a leading UTF-8 byte order mark, unfolds continuation lines (a line starting with a
/// space or tab continues the previous one, §3.1), reads parameters with quoted values and
/// comma-separated multiple values, and nests components. Lines it cannot read (no colon),
/// unknown properties and unknown components are kept or skipped but never fatal; an `END`
/// without its `BEGIN` is ignored and components left open at the end are closed.
///
/// Iterative, linear in the text (an `END` looks its name up in a count of open components),
/// and bounded: components nest at most ``maximumNesting`` deep (RFC 5545 needs three:
/// VCALENDAR, VEVENT, VALARM), a file holds at most ``maximumComponents`` of them and one
/// calendar item at most ``maximumAlarmsPerItem`` alarms; beyond, a clear error.
public enum ICalendarParser {
    /// How deep components may nest (a component value is recursive, so its depth is bounded
    /// before it is built).
    public static let maximumNesting = 16
    /// Components one file may hold, alarms and time-zone rules included.
    public static let maximumComponents = 100_000
    /// VALARMs one calendar item may hold.
    public static let maximumAlarmsPerItem = 100

    /// Parses iCalendar text into its top-level components (usually one VCALENDAR).
    /// - Throws: `ValidationError` `.invalidArgument` when the text holds no component at all;
    ///   `.tooLarge` when components nest deeper than ``maximumNesting``, or there are more than
    ///   ``maximumComponents``, or an item has more than ``maximumAlarmsPerItem`` alarms.
    public static func parse(_ text: String) throws(ValidationError) -> [ICalendarComponent] {
        var stack: [ICalendarComponent] = []
        var roots: [ICalendarComponent] = []
        var openCounts: [String: Int] = [:]
        var componentCount = 0
        for (lineIndex, line) in unfoldedLines(removingByteOrderMark(text)).enumerated() {
            guard let property = parseContentLine(line) else { continue }
            switch property.name {
            case "BEGIN":
                let name = property.value.uppercased()
                // Calendar items never nest: a new one closes one left open by a misspelt END.
                if itemNames.contains(name), let open = stack.last, itemNames.contains(open.name) {
                    openCounts[open.name, default: 1] -= 1
                    attach(stack.removeLast(), to: &stack, roots: &roots)
                }
                guard stack.count < maximumNesting else {
                    throw ValidationError(
                        .tooLarge,
                        "BEGIN:\(name.prefix(40)) on logical line \(lineIndex + 1) nests \(stack.count + 1) components deep; at most \(maximumNesting) are allowed")
                }
                componentCount += 1
                guard componentCount <= maximumComponents else {
                    throw ValidationError(
                        .tooLarge, "the file holds more than \(maximumComponents) components (BEGIN lines); split it")
                }
                if name == "VALARM", let item = stack.last, itemNames.contains(item.name),
                    item.components.lazy.filter({ $0.name == "VALARM" }).count >= maximumAlarmsPerItem
                {
                    throw ValidationError(
                        .tooLarge,
                        "a \(item.name) (logical line \(lineIndex + 1)) has more than \(maximumAlarmsPerItem) VALARMs")
                }
                stack.append(ICalendarComponent(name: name))
                openCounts[name, default: 0] += 1
            case "END":
                let name = property.value.uppercased()
                guard openCounts[name, default: 0] > 0 else { continue }
                while let closed = stack.popLast() {
                    openCounts[closed.name, default: 1] -= 1
                    attach(closed, to: &stack, roots: &roots)
                    if closed.name == name { break }
                }
            default:
                guard !stack.isEmpty else { continue }
                stack[stack.count - 1].properties.append(property)
            }
        }
        while let closed = stack.popLast() { attach(closed, to: &stack, roots: &roots) }
        guard !roots.isEmpty else {
            throw ValidationError(.invalidArgument, "no BEGIN:VCALENDAR (or any other component) found")
        }
        return roots
    }

    private static let itemNames: Set<String> = ["VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY"]

    /// `text` without a leading byte order mark (U+FEFF), which Outlook and Windows editors
    /// write before `BEGIN:VCALENDAR`: left in, that line is no `BEGIN`, the calendar's own
    /// properties (`X-WR-TIMEZONE`) are dropped and its items read as loose components.
    static func removingByteOrderMark(_ text: String) -> String {
        guard text.unicodeScalars.first == "\u{FEFF}" else { return text }
        return String(text.unicodeScalars.dropFirst())
    }

    /// The logical lines of `text`: split on CRLF, LF or CR, continuation lines joined.
    static func unfoldedLines(_ text: String) -> [String] {
        var lines: [String] = []
        let physical = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        for line in physical.split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1] += line.dropFirst()
            } else if !line.isEmpty {
                lines.append(String(line))
            }
        }
        return lines
    }

    /// Splits `NAME;P1=v1,"v,2";P2=x:value` (RFC 5545 §3.1); `nil` when the line has no
    /// colon outside quotes or no name.
    static func parseContentLine(_ line: String) -> ICalendarProperty? {
        let characters = Array(line)
        var index = 0
        var name = ""
        while index < characters.count, characters[index] != ";", characters[index] != ":" {
            name.append(characters[index])
            index += 1
        }
        name = name.trimmingCharacters(in: .whitespaces).uppercased()
        guard !name.isEmpty, index < characters.count else { return nil }
        var parameters: [String: [String]] = [:]
        while index < characters.count, characters[index] == ";" {
            index += 1
            var parameterName = ""
            while index < characters.count, !"=;:".contains(characters[index]) {
                parameterName.append(characters[index])
                index += 1
            }
            var values: [String] = []
            if index < characters.count, characters[index] == "=" {
                repeat {
                    index += 1
                    var value = ""
                    if index < characters.count, characters[index] == "\"" {
                        index += 1
                        while index < characters.count, characters[index] != "\"" {
                            value.append(characters[index])
                            index += 1
                        }
                        index += 1
                    }
                    while index < characters.count, !",;:".contains(characters[index]) {
                        value.append(characters[index])
                        index += 1
                    }
                    values.append(value)
                } while index < characters.count && characters[index] == ","
            }
            let key = parameterName.trimmingCharacters(in: .whitespaces).uppercased()
            if !key.isEmpty { parameters[key, default: []] += values }
        }
        guard index < characters.count, characters[index] == ":" else { return nil }
        return ICalendarProperty(name: name, parameters: parameters, value: String(characters[(index + 1)...]))
    }

    private static func attach(
        _ component: ICalendarComponent, to stack: inout [ICalendarComponent], roots: inout [ICalendarComponent]
    ) {
        if stack.isEmpty {
            roots.append(component)
        } else {
            stack[stack.count - 1].components.append(component)
        }
    }
}
