import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One renewal of the store's lease, as the holder writes it into `<store>/LEASE`: who holds
/// the store and for how long a renewal counts (see `StoreLease`).
///
/// The file is one line of ASCII padded with spaces to ``byteCount`` bytes, rewritten in place
/// (`pwrite` at offset 0) at each renewal:
/// `chime-lease 1 renewal=42 durationMs=1500 pid=1234 start=998877 boot=<boot id> pidns=4026531836 host=<name>`.
/// `start` is the holder's start time in clock ticks after boot (`/proc/<pid>/stat` field 22),
/// `boot` the kernel's boot id, `pidns` the inode of its pid namespace: with `pid` they name
/// one process on one host, so a standby can tell whether it may signal it. Readers compare
/// the bytes only to see a renewal; a line that does not parse still counts as one (the
/// holder was caught mid-write).
public struct LeaseRecord: Hashable, Sendable {
    /// The format version this code writes and reads.
    public static let formatVersion = 1
    /// The file's fixed size, in bytes (room for every field at its longest).
    public static let byteCount = 512
    /// The longest boot id and host name a record holds, in bytes (printable ASCII).
    public static let maximumNameBytes = 64

    /// The holder's renewal counter (1 at the first write).
    public var renewal: UInt64
    /// How long a renewal counts, in milliseconds: a reader that sees no change for this long
    /// may take the store over.
    public var durationMilliseconds: Int
    /// The holder process.
    public var holder: ProcessIdentity

    /// Creates the value from its fields (see each property for meaning and units).
    public init(renewal: UInt64, durationMilliseconds: Int, holder: ProcessIdentity) {
        self.renewal = renewal
        self.durationMilliseconds = durationMilliseconds
        self.holder = holder
    }

    /// The padded line (exactly ``byteCount`` bytes, ending in a newline).
    public var bytes: [UInt8] {
        let host = Self.printable(holder.host)
        let boot = Self.printable(holder.bootID)
        var line = Array(
            ("chime-lease \(Self.formatVersion) renewal=\(renewal) durationMs=\(durationMilliseconds) pid=\(holder.pid) "
                + "start=\(holder.startTicks) boot=\(boot.isEmpty ? "-" : boot) pidns=\(holder.pidNamespace) host=\(host.isEmpty ? "-" : host)").utf8)
        line = Array(line.prefix(Self.byteCount - 1))
        line += [UInt8](repeating: 0x20, count: Self.byteCount - 1 - line.count)
        line.append(0x0A)
        return line
    }

    /// `text`'s printable ASCII, at most `maximumNameBytes` of it.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.isASCII && $0.value > 32 && $0.value < 127 }.prefix(maximumNameBytes).map(Character.init))
    }

    /// Parses a lease file's bytes; `nil` for anything that is not a whole record of this
    /// format (a torn read, another version, garbage). Total: never traps on any input.
    public static func parse(_ bytes: [UInt8]) -> LeaseRecord? {
        guard bytes.count <= byteCount * 2 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 9, fields[0] == "chime-lease", fields[1] == "\(formatVersion)" else { return nil }
        var values: [Substring: Substring] = [:]
        for field in fields.dropFirst(2) {
            guard let equals = field.firstIndex(of: "=") else { return nil }
            values[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let renewal = values["renewal"].flatMap({ UInt64($0) }),
            let duration = values["durationMs"].flatMap({ Int($0) }), (1...3_600_000).contains(duration),
            let pid = values["pid"].flatMap({ Int32($0) }), pid > 0,
            let start = values["start"].flatMap({ UInt64($0) }),
            let boot = values["boot"], let namespace = values["pidns"].flatMap({ UInt64($0) }),
            // Never empty: a record written for an empty name says `-`, so an empty value is
            // not one of ours (and would not read back the same).
            let host = values["host"], [boot, host].allSatisfy({ !$0.isEmpty && printable(String($0)) == $0 }),
            values.count == 7
        else { return nil }
        return LeaseRecord(
            renewal: renewal, durationMilliseconds: duration,
            holder: ProcessIdentity(pid: pid, startTicks: start, bootID: String(boot), pidNamespace: namespace, host: String(host)))
    }
}

/// A process as another process on the same host can recognise it: pid, start time, boot id
/// and pid namespace (a pid alone may be reused, or belong to another namespace).
public struct ProcessIdentity: Hashable, Sendable {
    /// The process id, in its own pid namespace.
    public var pid: Int32
    /// Its start time, in clock ticks after boot (`/proc/<pid>/stat` field 22); 0 when unknown.
    public var startTicks: UInt64
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`); empty when unknown.
    public var bootID: String
    /// The inode of its pid namespace (`/proc/<pid>/ns/pid`); 0 when unknown.
    public var pidNamespace: UInt64
    /// The host name, for people.
    public var host: String

    /// Creates the value from its fields (see each property for meaning and units).
    public init(pid: Int32, startTicks: UInt64, bootID: String, pidNamespace: UInt64, host: String) {
        self.pid = pid
        self.startTicks = startTicks
        self.bootID = bootID
        self.pidNamespace = pidNamespace
        self.host = host
    }

    /// This process.
    public static let current = ProcessIdentity(
        pid: getpid(), startTicks: startTicks(of: getpid()) ?? 0, bootID: bootID() ?? "",
        pidNamespace: pidNamespace(of: "self") ?? 0, host: ProcessInfo.processInfo.hostName)

    /// Whether `self` is a process this one can see and signal as itself: the same boot and
    /// pid namespace, and a live process with that pid and start time. `false` whenever any
    /// of it cannot be read (another host, another container, a pid reused, the process gone).
    public var isVisibleLocally: Bool {
        let me = Self.current
        guard !bootID.isEmpty, bootID == me.bootID, pidNamespace != 0, pidNamespace == me.pidNamespace, startTicks != 0
        else { return false }
        return Self.startTicks(of: pid) == startTicks
    }

    /// Field 22 of `/proc/<pid>/stat` (after the command name in parentheses, which may
    /// itself hold spaces and parentheses); `nil` when it cannot be read.
    static func startTicks(of pid: Int32) -> UInt64? {
        guard let bytes = readProcFile("/proc/\(pid)/stat"),
            let close = bytes.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // Fields after the name start with field 3 (state): field 22 is the 20th.
        guard fields.count >= 20 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    static func bootID() -> String? {
        guard let bytes = readProcFile("/proc/sys/kernel/random/boot_id") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The bytes of a `/proc` file (which reports size 0: read until the end), at most 4 KiB;
    /// `nil` when it cannot be opened.
    static func readProcFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while bytes.count < 4096 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    /// The inode in `/proc/<process>/ns/pid`'s link text `pid:[4026531836]`.
    static func pidNamespace(of process: String) -> UInt64? {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/\(process)/ns/pid", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard text.hasPrefix("pid:["), text.hasSuffix("]") else { return nil }
        return UInt64(text.dropFirst(5).dropLast())
    }
}
