import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Speaks systemd's service notification protocol (`sd_notify(3)`): one datagram of
/// newline-separated `KEY=VALUE` assignments to the `AF_UNIX` socket named by
/// `NOTIFY_SOCKET` (a path, or an abstract name when it starts with `@`).
///
/// A service sends `READY=1` once it serves, `STATUS=…` for `systemctl status`,
/// `WATCHDOG=1` at least every `WATCHDOG_USEC` microseconds (from its loop, so a hung loop
/// gets it killed by `WatchdogSec=`), and `STOPPING=1` when it begins to stop. The protocol
/// is documented in `sd_notify(3)` and systemd's "Notification Protocol"; it needs no
/// library, so this type implements it with one `sendto` per message.
///
/// Sends never block (`MSG_DONTWAIT`) and never fail the caller: a missing or full
/// supervisor socket drops the message, as `sd_notify` does.
public final class SystemdNotifier: Sendable {
    /// The `NOTIFY_SOCKET` value messages go to.
    public let socketName: String
    /// How often the supervisor wants `WATCHDOG=1` at the latest (`WATCHDOG_USEC`), or `nil`
    /// when it set no watchdog, or set it for another process (`WATCHDOG_PID`).
    public let watchdogTimeout: Duration?
    private let descriptor: Int32
    /// The bytes of the `sockaddr_un` to send to, and its length.
    private let address: [UInt8]

    /// Makes a notifier from a process environment.
    /// - Parameters:
    ///   - environment: the variables `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`
    ///     are read from (`ProcessInfo.processInfo.environment` in a process).
    ///   - pid: this process's id, compared with `WATCHDOG_PID` when that is set.
    /// - Returns: `nil` when `NOTIFY_SOCKET` is unset or empty, names a path too long for a
    ///   `sockaddr_un`, or no datagram socket can be opened (nobody supervises this process
    ///   through the protocol then).
    public init?(environment: [String: String], pid: Int32 = getpid()) {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        var path = Array(name.utf8)
        // An abstract socket's name starts with a NUL byte; `@` stands for it in the variable.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        var socketAddress = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard path.count < capacity else { return nil }
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: path) }
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (path.first == 0 ? 0 : 1)
        #if os(Linux)
            let kind = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let kind = SOCK_DGRAM
        #endif
        let descriptor = socket(AF_UNIX, kind, 0)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.socketName = name
        self.address = withUnsafeBytes(of: &socketAddress) { Array($0.prefix(length)) }
        self.watchdogTimeout = Self.watchdogTimeout(environment: environment, pid: pid)
    }

    deinit { close(descriptor) }

    /// Reads `WATCHDOG_USEC` (microseconds, > 0) and `WATCHDOG_PID` (when set, the watchdog
    /// is meant for that process only).
    static func watchdogTimeout(environment: [String: String], pid: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else {
            return nil
        }
        if let owner = environment["WATCHDOG_PID"], !owner.isEmpty, Int32(owner) != pid { return nil }
        return .microseconds(microseconds)
    }

    /// Sends one message of `KEY=VALUE` lines, such as `"READY=1\nSTATUS=serving"`.
    /// - Returns: whether the datagram was sent (best effort: never throws, never blocks).
    @discardableResult
    public func notify(_ message: String) -> Bool {
        let bytes = Array(message.utf8)
        return address.withUnsafeBytes { addressBytes in
            bytes.withUnsafeBytes { payload in
                while true {
                    let sent = sendto(
                        descriptor, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL),
                        addressBytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addressBytes.count))
                    if sent >= 0 { return true }
                    if errno != EINTR { return false }
                }
            }
        }
    }

    /// `READY=1` with a status line.
    @discardableResult
    public func notifyReady(status: String) -> Bool { notify("READY=1\nSTATUS=\(Self.oneLine(status))") }

    /// `STATUS=…`: one line for `systemctl status` (newlines become spaces).
    @discardableResult
    public func notifyStatus(_ status: String) -> Bool { notify("STATUS=\(Self.oneLine(status))") }

    /// `STOPPING=1` with a status line.
    @discardableResult
    public func notifyStopping(status: String) -> Bool { notify("STOPPING=1\nSTATUS=\(Self.oneLine(status))") }

    /// `WATCHDOG=1`: this process's loop is alive.
    @discardableResult
    public func notifyWatchdog() -> Bool { notify("WATCHDOG=1") }

    static func oneLine(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: " ") }
}

/// Paces `WATCHDOG=1` from a service loop: at most once per half of the supervisor's
/// watchdog timeout (`sd_watchdog_enabled(3)` recommends pinging at half the interval), so
/// a loop turn costs one comparison of monotonic instants.
public struct WatchdogPacer: Sendable {
    /// The notifier pinged; `nil` pings nobody.
    public let notifier: SystemdNotifier?
    /// Half the watchdog timeout: the most time between two pings; `nil` without a watchdog.
    public let interval: Duration?
    private var nextPing: ContinuousClock.Instant

    /// Makes a pacer for `notifier`'s watchdog (none when it has no `watchdogTimeout`).
    public init(notifier: SystemdNotifier?) {
        self.notifier = notifier
        self.interval = notifier?.watchdogTimeout.map { $0 / 2 }
        self.nextPing = .now
    }

    /// Sends `WATCHDOG=1` when half the timeout has passed since the last ping.
    /// - Parameter now: the loop turn's monotonic instant.
    public mutating func pingIfDue(at now: ContinuousClock.Instant) {
        guard let interval, now >= nextPing else { return }
        nextPing = now + interval
        notifier?.notifyWatchdog()
    }
}
