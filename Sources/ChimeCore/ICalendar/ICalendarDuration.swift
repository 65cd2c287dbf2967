import Foundation

/// DURATION values of RFC 5545 §3.3.6: `P1W`, `-PT15M`, `P1DT2H`, `+PT0S`.
public enum ICalendarDuration {
    /// The longest duration accepted, in seconds: 10,000 years of 365.25 days.
    public static let maximumSeconds: Double = 10_000 * 365.25 * 86_400

    /// Parses a duration into signed seconds. Days and weeks count as 86,400 and 604,800
    /// seconds (exact, not nominal: Chime's remind-before offsets are elapsed time).
    /// - Throws: `ValidationError` `.invalidArgument` for any other shape, or a duration
    ///   longer than ``maximumSeconds``.
    public static func parseSeconds(_ text: String) throws(ValidationError) -> Double {
        let malformed = ValidationError(.invalidArgument, "'\(text)' is not an iCalendar duration such as -PT15M or P1D")
        var characters = Substring(text.trimmingCharacters(in: .whitespaces).uppercased())
        var sign = 1.0
        if characters.first == "-" || characters.first == "+" {
            sign = characters.first == "-" ? -1 : 1
            characters = characters.dropFirst()
        }
        guard characters.first == "P" else { throw malformed }
        characters = characters.dropFirst()
        var total = 0.0
        var number = ""
        var isInTime = false
        var sawPart = false
        for character in characters {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            if character == "T" {
                guard number.isEmpty, !isInTime else { throw malformed }
                isInTime = true
                continue
            }
            guard let value = Double(number) else { throw malformed }
            let unit: Double
            switch (character, isInTime) {
            case ("W", false): unit = 604_800
            case ("D", false): unit = 86_400
            case ("H", true): unit = 3600
            case ("M", true): unit = 60
            case ("S", true): unit = 1
            default: throw malformed
            }
            total += value * unit
            number = ""
            sawPart = true
        }
        guard sawPart, number.isEmpty else { throw malformed }
        // Past 10,000 years no instant Chime shows can be reached, and seconds must fit `Int`.
        guard total <= maximumSeconds else {
            throw ValidationError(.invalidArgument, "'\(text)' is longer than 10,000 years")
        }
        return sign * total
    }
}
