import Foundation

/// What a recipient granted beyond alert, sound and badge: Apple's authorization options
/// `.provisional`, `.timeSensitive` (the Time Sensitive switch) and `.criticalAlert`.
///
/// JSON shape: an array of names in any order, such as `["timeSensitive", "critical"]`;
/// `[]` (or absent) grants none. Encodes in the order provisional, timeSensitive, critical.
/// The command line also accepts `time-sensitive`.
public struct AuthorizationGrants: OptionSet, Hashable, Sendable {
    /// The bit mask: provisional 1, timeSensitive 2, critical 4.
    public var rawValue: UInt8

    /// Creates grants from their bit mask (provisional 1, timeSensitive 2, critical 4).
    public init(rawValue: UInt8) {
        self.rawValue = rawValue & 0b111
    }

    /// The recipient is authorized provisionally: firings arrive quietly (as `passive`, without
    /// sound), on the delivered list only; a granted `critical` firing still interrupts.
    public static let provisional = AuthorizationGrants(rawValue: 1 << 0)
    /// `timeSensitive` firings keep their level (else they are delivered as `active`).
    public static let timeSensitive = AuthorizationGrants(rawValue: 1 << 1)
    /// `critical` firings keep their level (else they are delivered as `active`).
    public static let critical = AuthorizationGrants(rawValue: 1 << 2)

    /// The JSON names, in encoding order.
    private static let names: [(name: String, grant: AuthorizationGrants)] = [
        ("provisional", .provisional), ("timeSensitive", .timeSensitive), ("critical", .critical),
    ]

    /// The granted options by name, in the order provisional, timeSensitive, critical.
    public var grantedNames: [String] {
        Self.names.filter { contains($0.grant) }.map(\.name)
    }

    /// Parses the `--grant` form: names separated by commas (`time-sensitive` or
    /// `timeSensitive`, `critical`, `provisional`; spaces around names ignored), or `none`
    /// (or the empty string) for none.
    /// - Throws: `ValidationError` `.invalidArgument` (field `grants`) for an unknown name.
    public init(parsing text: String) throws(ValidationError) {
        self = []
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed != "none" else { return }
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: .whitespaces)
            guard let grant = Self.grant(named: name == "time-sensitive" ? "timeSensitive" : name) else {
                throw Self.unknownName(name)
            }
            insert(grant)
        }
    }

    /// The level a firing of `level` is delivered at under these grants, and whether it
    /// arrives quietly (its sound removed).
    ///
    /// `timeSensitive` and `critical` keep their level only when granted, else become
    /// `active`; then under `provisional` everything but a granted `critical` becomes
    /// `passive` and quiet. Without grants nothing changes below `timeSensitive`.
    public func delivered(_ level: InterruptionLevel) -> (level: InterruptionLevel, isQuiet: Bool) {
        var granted = level
        switch level {
        case .timeSensitive where !contains(.timeSensitive): granted = .active
        case .critical where !contains(.critical): granted = .active
        default: break
        }
        if contains(.provisional) && granted != .critical { return (.passive, true) }
        return (granted, false)
    }

    private static func grant(named name: String) -> AuthorizationGrants? {
        names.first { $0.name == name }?.grant
    }

    private static func unknownName(_ name: String) -> ValidationError {
        ValidationError(
            .invalidArgument, field: "grants",
            "'\(name)' is not a grant; use provisional, timeSensitive (or time-sensitive) and critical (or none)")
    }
}

extension AuthorizationGrants: Codable {
    /// Decodes an array of names (`timeSensitive`, not the command line's `time-sensitive`).
    /// - Throws: `DecodingError.dataCorrupted` for an unknown name.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self = []
        while !container.isAtEnd {
            let name = try container.decode(String.self)
            guard let grant = Self.grant(named: name) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: Self.unknownName(name).message)
            }
            insert(grant)
        }
    }

    /// Encodes the granted names in the order provisional, timeSensitive, critical.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(contentsOf: grantedNames)
    }
}
