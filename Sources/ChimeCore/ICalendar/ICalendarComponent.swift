import Foundation

/// One content line of an iCalendar object (RFC 5545 §3.1): `NAME;PARAM=a,b:value`.
public struct ICalendarProperty: Hashable, Sendable {
    /// The property name, upper-cased (`DTSTART`, `X-WR-TIMEZONE`).
    public var name: String
    /// Parameter values by upper-cased parameter name; quotes removed, multiple values split.
    public var parameters: [String: [String]]
    /// The value as written (still escaped for TEXT values); see ``text``.
    public var value: String

    /// Creates a property.
    public init(name: String, parameters: [String: [String]] = [:], value: String) {
        self.name = name
        self.parameters = parameters
        self.value = value
    }

    /// The first value of parameter `name` (`TZID`, `VALUE`, `RELATED`), if present.
    public func parameter(_ name: String) -> String? {
        parameters[name.uppercased()]?.first
    }

    /// The value read as TEXT (RFC 5545 §3.3.11): `\n`/`\N` a line feed, `\,` `\;` `\\` the
    /// character itself.
    public var text: String {
        var result = ""
        var isEscaped = false
        for character in value {
            if isEscaped {
                result.append(character == "n" || character == "N" ? "\n" : character)
                isEscaped = false
            } else if character == "\\" {
                isEscaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// A component of an iCalendar object (RFC 5545 §3.4–3.6): `BEGIN:NAME` … `END:NAME`, with its
/// properties and nested components (VCALENDAR › VEVENT › VALARM, VTIMEZONE › STANDARD).
public struct ICalendarComponent: Hashable, Sendable {
    /// The component name, upper-cased (`VEVENT`).
    public var name: String
    /// Properties in file order.
    public var properties: [ICalendarProperty]
    /// Nested components in file order.
    public var components: [ICalendarComponent]

    /// Creates a component.
    public init(name: String, properties: [ICalendarProperty] = [], components: [ICalendarComponent] = []) {
        self.name = name
        self.properties = properties
        self.components = components
    }

    /// The first property called `name`, if any.
    public func property(_ name: String) -> ICalendarProperty? {
        let wanted = name.uppercased()
        return properties.first { $0.name == wanted }
    }

    /// Every property called `name`, in file order.
    public func properties(named name: String) -> [ICalendarProperty] {
        let wanted = name.uppercased()
        return properties.filter { $0.name == wanted }
    }

    /// Nested components called `name`, in file order.
    public func components(named name: String) -> [ICalendarComponent] {
        let wanted = name.uppercased()
        return components.filter { $0.name == wanted }
    }
}
