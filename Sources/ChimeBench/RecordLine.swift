/// The firing record of WORKLOADS.md: one line `"<id> <due> <actual>"`, instants in epoch
/// seconds with 6 decimals. Formatting and parsing work on bytes so the subscriber's
/// handler spends microseconds, not a `String(format:)`, per event.
public enum RecordLine {
    /// One parsed record line.
    public struct Fields: Hashable, Sendable {
        public var id: Int
        /// Due instant, epoch seconds.
        public var due: Double
        /// When the handler saw the firing, epoch seconds.
        public var actual: Double

        /// Creates the value from its fields (see each property for meaning and units).
        public init(id: Int, due: Double, actual: Double) {
            self.id = id
            self.due = due
            self.actual = actual
        }
    }

    /// Appends `"<id> <due> <actual>\n"` to `bytes`.
    public static func append(id: Int, due: Double, actual: Double, to bytes: inout [UInt8]) {
        appendDecimal(id, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendSeconds(due, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendSeconds(actual, to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends a non-negative integer in decimal.
    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        precondition(value >= 0, "record ids are non-negative")
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Appends non-negative seconds with exactly 6 decimals, rounded to the microsecond.
    public static func appendSeconds(_ seconds: Double, to bytes: inout [UInt8]) {
        precondition(seconds >= 0 && seconds.isFinite, "record instants are non-negative and finite")
        let micros = Int((seconds * 1_000_000).rounded())
        appendDecimal(micros / 1_000_000, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        var fraction = micros % 1_000_000
        var divisor = 100_000
        for _ in 0..<6 {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }

    /// Parses one line (without its newline); `nil` when it is not three numbers.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes) -> Fields? {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard parts.count == 3, let id = Int(String(decoding: parts[0], as: UTF8.self)),
            let due = seconds(parts[1]), let actual = seconds(parts[2])
        else { return nil }
        return Fields(id: id, due: due, actual: actual)
    }

    /// Parses every complete line of a records file; malformed lines are counted, not kept.
    public static func parseAll(_ bytes: [UInt8]) -> (records: [Fields], malformed: Int) {
        var records: [Fields] = []
        var malformed = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let fields = parse(line) { records.append(fields) } else { malformed += 1 }
        }
        return (records, malformed)
    }

    /// Parses `"<seconds>.<fraction>"` exactly to the microsecond (no `Double` parse of the
    /// whole text, which can be off by an ulp).
    static func seconds<Bytes: Collection<UInt8>>(_ text: Bytes) -> Double? {
        var whole = 0
        var fraction = 0
        var fractionDigits = 0
        var seenPoint = false
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            if seenPoint {
                guard fractionDigits < 9 else { continue }
                fraction = fraction * 10 + digit
                fractionDigits += 1
            } else {
                whole = whole * 10 + digit
            }
        }
        guard !text.isEmpty else { return nil }
        var scale = 1.0
        for _ in 0..<fractionDigits { scale *= 10 }
        return Double(whole) + Double(fraction) / scale
    }
}
