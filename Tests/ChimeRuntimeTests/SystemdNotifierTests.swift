import ChimeRuntime
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A datagram socket bound at a path, standing in for systemd's notification socket.
final class NotificationSocket {
    let path: String
    let descriptor: Int32

    init() throws {
        path = NSTemporaryDirectory() + "notify-\(UUID().uuidString.prefix(8))"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
    }

    /// Every datagram waiting, in order.
    func received() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return messages }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}

@Suite struct SystemdNotifierTests {
    @Test func sendsTheDocumentedAssignmentsToNotifySocket() throws {
        let socket = try NotificationSocket()
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "2000000"]))
        #expect(notifier.watchdogTimeout == .seconds(2))
        #expect(notifier.notifyReady(status: "serving\n42 reminders"))
        #expect(notifier.notifyWatchdog())
        #expect(notifier.notifyStatus("store full"))
        #expect(notifier.notifyStopping(status: "bye"))
        #expect(socket.received() == [
            "READY=1\nSTATUS=serving 42 reminders", "WATCHDOG=1", "STATUS=store full", "STOPPING=1\nSTATUS=bye",
        ])
    }

    @Test func readsTheWatchdogOnlyWhenItIsMeantForThisProcess() {
        let base = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "500000"]
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]) == nil)
        #expect(SystemdNotifier(environment: base, pid: 10)?.watchdogTimeout == .milliseconds(500))
        #expect(SystemdNotifier(environment: base.merging(["WATCHDOG_PID": "10"]) { $1 }, pid: 10)?.watchdogTimeout == .milliseconds(500))
        #expect(SystemdNotifier(environment: base.merging(["WATCHDOG_PID": "11"]) { $1 }, pid: 10)?.watchdogTimeout == nil)
        #expect(SystemdNotifier(environment: base.merging(["WATCHDOG_USEC": "0"]) { $1 }, pid: 10)?.watchdogTimeout == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@chime-test-abstract"])?.socketName == "@chime-test-abstract")
    }

    @Test func pingsTheWatchdogAtMostEveryHalfOfItsTimeout() throws {
        let socket = try NotificationSocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "1000000"])
        var pacer = WatchdogPacer(notifier: notifier)
        #expect(pacer.interval == .milliseconds(500))
        let start = ContinuousClock.now
        for milliseconds in [0, 1, 250, 499, 500, 501, 900, 1000, 1001] {
            pacer.pingIfDue(at: start + .milliseconds(milliseconds))
        }
        #expect(socket.received() == ["WATCHDOG=1", "WATCHDOG=1", "WATCHDOG=1"])
        var silent = WatchdogPacer(notifier: SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.path]))
        silent.pingIfDue(at: start)
        #expect(socket.received().isEmpty, "no WATCHDOG_USEC: no pings")
    }
}
