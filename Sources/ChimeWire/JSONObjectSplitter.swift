import Foundation

/// Splits a stream of bytes holding JSON objects, either one JSON array of objects
/// (`[{…}, {…}]`) or newline-delimited JSON (`{…}\n{…}`), into the bytes of each object,
/// without holding more than one object (plus one read buffer) at a time.
///
/// Only the structure is checked here (brackets, strings, escapes, commas; each object's end
/// is found by ``JSONValueSkipper``), so a malformed object still ends where its brackets
/// balance: each object's bytes are then decoded by the caller, which reports item errors
/// by index. Total over any
/// bytes: a value, or a `WireError` `.malformed` naming where the input went wrong — the
/// line and column of the unexpected byte, or of the start of the object the input ended in
/// (an NDJSON line cut short swallows the lines after it up to the end) — and the byte
/// offset; `.tooLarge` when one object exceeds `maximumObjectBytes`. Lines and columns count
/// from 1, columns in bytes.
public struct JSONObjectSplitter {
    enum Mode { case start, array, lines, finished }

    /// The largest object accepted, in bytes.
    public let maximumObjectBytes: Int
    var mode = Mode.start
    /// Whether the array expects `,` or `]` next (an object just ended).
    var expectsSeparator = false
    var current: [UInt8] = []
    /// Where the object being read ends.
    var skipper = JSONValueSkipper()
    /// Bytes consumed so far, for error offsets.
    var offset = 0
    /// The line (from 1) and column (in bytes, from 1) of the last byte consumed.
    var line = 1
    var column = 0
    /// Where the object being read started: line and column.
    var objectStart = (line: 1, column: 1)
    /// Objects completed so far.
    var emitted = 0

    /// - Parameter maximumObjectBytes: the largest object accepted (16 MiB by default).
    public init(maximumObjectBytes: Int = 16 << 20) {
        self.maximumObjectBytes = maximumObjectBytes
    }

    /// Consumes `bytes` and returns every object they complete, in order.
    /// - Throws: `WireError` `.malformed` for bytes that are not an array of objects or
    ///   NDJSON objects, `.tooLarge` for an object beyond `maximumObjectBytes`.
    public mutating func feed(_ bytes: Data) throws(WireError) -> [Data] {
        var objects: [Data] = []
        for byte in bytes {
            offset += 1
            if byte == 0x0A {
                line += 1
                column = 0
            } else {
                column += 1
            }
            if skipper.hasStarted {
                try append(byte, to: &objects)
                continue
            }
            if JSONValueSkipper.isWhitespace(byte) { continue }
            switch (mode, byte) {
            case (.start, UInt8(ascii: "[")):
                mode = .array
            case (.start, UInt8(ascii: "{")), (.lines, UInt8(ascii: "{")):
                mode = .lines
                try append(byte, to: &objects)
            case (.array, UInt8(ascii: "{")) where !expectsSeparator:
                try append(byte, to: &objects)
            case (.array, UInt8(ascii: ",")) where expectsSeparator:
                expectsSeparator = false
            case (.array, UInt8(ascii: "]")) where expectsSeparator || emitted == 0:
                mode = .finished
            default:
                throw unexpected(byte)
            }
        }
        return objects
    }

    /// Checks that the input ended at a boundary: the array closed, no object cut short.
    /// - Throws: `WireError` `.malformed`.
    public func finish() throws(WireError) {
        if skipper.hasStarted {
            throw WireError(
                .malformed,
                "the object at line \(objectStart.line), column \(objectStart.column) is not closed at the end of the input (byte \(offset))")
        }
        switch mode {
        case .start: throw WireError(.malformed, "the input holds no JSON array or object")
        case .array: throw WireError(.malformed, "the JSON array is not closed with ] (line \(line), byte \(offset))")
        case .lines, .finished: return
        }
    }

    mutating func append(_ byte: UInt8, to objects: inout [Data]) throws(WireError) {
        if !skipper.hasStarted { objectStart = (line, column) }
        guard current.count < maximumObjectBytes else {
            throw WireError(
                .tooLarge,
                "the object at line \(objectStart.line), column \(objectStart.column) is larger than \(maximumObjectBytes) bytes")
        }
        current.append(byte)
        switch skipper.step(byte) {
        case .inside:
            return
        case .closed:
            // Only a `{` starts an object here, so only depth counts: `{]` closes it too.
            guard byte == UInt8(ascii: "}") else { throw unexpected(byte) }
            objects.append(Data(current))
            emitted += 1
            current.removeAll(keepingCapacity: true)
            skipper.reset()
            expectsSeparator = mode == .array
        case .endedBefore, .unexpected:
            // An object's skip never ends before a byte, and `{` is a valid start.
            throw unexpected(byte)
        }
    }

    func unexpected(_ byte: UInt8) -> WireError {
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        let expected: String
        switch mode {
        case .start: expected = "[ or {"
        case .array: expected = expectsSeparator ? ", or ]" : "{"
        case .lines: expected = "{"
        case .finished: expected = "nothing after ]"
        }
        return WireError(.malformed, "unexpected \(shown) at line \(line), column \(column) (byte \(offset)); expected \(expected)")
    }
}
