/// Writes metric families in the Prometheus text exposition format 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): for each family a
/// `# HELP` and a `# TYPE` line, then its samples, one a line, `name{label="value"} value`.
///
/// Names and label names are the caller's constants (checked: an invalid one is our bug);
/// label values may hold anything and are escaped (`\\`, `\"`, `\n`), as HELP text is
/// (`\\`, `\n`).
public struct MetricsExposition: Sendable {
    /// The kind of a metric family, as its `# TYPE` line says.
    public enum Kind: String, Sendable {
        /// Only grows (resets when the process restarts); its name ends in `_total`.
        case counter
        /// Goes up and down.
        case gauge
        /// Buckets, sum and count of observations (`_bucket`, `_sum`, `_count`).
        case histogram
    }

    /// Label names and values of one sample, in the order written.
    public typealias Labels = [(name: String, value: String)]

    /// Labels written first on every sample (a shard coordinator's `shard`), as Prometheus
    /// client libraries' constant labels.
    public var constantLabels: Labels = []
    /// The exposition so far.
    public private(set) var text = ""
    private var familyNames: Set<String> = []

    /// The `Content-Type` of this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Makes an empty exposition.
    public init() {}

    /// Adds a counter family with one sample per label set.
    public mutating func counter(_ name: String, help: String, _ samples: [(labels: Labels, value: Double)]) {
        precondition(name.hasSuffix("_total"), "counter \(name) must end in _total")
        family(name, .counter, help: help)
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    /// Adds a counter family with a single unlabelled sample.
    public mutating func counter(_ name: String, help: String, value: Double) {
        counter(name, help: help, [([], value)])
    }

    /// Adds a gauge family with one sample per label set.
    public mutating func gauge(_ name: String, help: String, _ samples: [(labels: Labels, value: Double)]) {
        family(name, .gauge, help: help)
        for sample in samples { line(name, sample.labels, sample.value) }
    }

    /// Adds a gauge family with a single unlabelled sample.
    public mutating func gauge(_ name: String, help: String, value: Double) {
        gauge(name, help: help, [([], value)])
    }

    /// Adds a histogram family: cumulative `_bucket` samples (`le` the upper bound, the last
    /// `+Inf`), `_sum` and `_count`.
    public mutating func histogram(_ name: String, help: String, _ histogram: Histogram) {
        self.histogram(name, help: help, [([], histogram)])
    }

    /// Adds a histogram family with one histogram per label set (`op="list"`, …), each written
    /// as the unlabelled form is, its labels before `le`.
    public mutating func histogram(_ name: String, help: String, _ histograms: [(labels: Labels, histogram: Histogram)]) {
        family(name, .histogram, help: help)
        for (labels, histogram) in histograms {
            var cumulative: UInt64 = 0
            for (index, bucketCount) in histogram.bucketCounts.enumerated() {
                cumulative &+= bucketCount
                let bound = index < histogram.upperBounds.count ? histogram.upperBounds[index] : .infinity
                line(name + "_bucket", labels + [("le", Self.format(bound))], Double(cumulative))
            }
            line(name + "_sum", labels, histogram.sum)
            line(name + "_count", labels, Double(histogram.count))
        }
    }

    private mutating func family(_ name: String, _ kind: Kind, help: String) {
        precondition(Self.isValidName(name), "invalid metric name \(name)")
        precondition(familyNames.insert(name).inserted, "metric family \(name) written twice")
        text += "# HELP \(name) \(Self.escape(help, quotes: false))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    private mutating func line(_ name: String, _ sampleLabels: Labels, _ value: Double) {
        let labels = constantLabels.isEmpty ? sampleLabels : constantLabels + sampleLabels
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, label) in labels.enumerated() {
                precondition(Self.isValidName(label.name) && !label.name.contains(":"), "invalid label name \(label.name)")
                text += (index == 0 ? "" : ",") + label.name + "=\"" + Self.escape(label.value, quotes: true) + "\""
            }
            text += "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// A sample value as the format writes it: integers without a fraction, `+Inf`, `-Inf`,
    /// `NaN`, otherwise Swift's shortest round-tripping form (`0.005`, `1e-05`).
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Whether `name` matches `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x3A }
        return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) }
    }

    static func escape(_ text: String, quotes: Bool) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\"" where quotes: escaped += "\\\""
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
