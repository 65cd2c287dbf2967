import ChimeRuntime
import Foundation
import ChimeSecurity

/// ``BenchSubscriber/Mode/pyzmq``: the subscriber users write. A `python3` child process
/// with a pyzmq SUB socket on `fire.` takes `time.time()` first, `json.loads` each event and
/// appends `"<id> <due> <actual>"` to the records file with one `os.write` (O_APPEND), so the
/// figures include the third process hop and the subscriber's own CPU (issue 17's harness).
///
/// The bench process reads the child's progress from the records file it writes (tailing
/// it every 2 ms; `actual` comes from the line, so the tail's delay never enters a figure)
/// and the warm-up probes from the child's standard output (one `probe` line each).
enum PyzmqSubscription {
    /// The subscriber's source, written next to the records file as `pyzmq_subscriber.py`.
    /// Arguments: endpoint (several, one per shard, joined by commas), records path. CURVE
    /// keys, when the cluster runs it, come in
    /// `CHIME_BENCH_CURVE_SERVER` / `_PUBLIC` / `_SECRET` (Z85).
    static let script = #"""
        import json, os, sys, time
        from datetime import datetime

        import zmq


        def main():
            endpoint, path = sys.argv[1], sys.argv[2]
            context = zmq.Context()
            socket = context.socket(zmq.SUB)
            socket.setsockopt(zmq.LINGER, 0)
            socket.setsockopt(zmq.RCVHWM, 0)
            server = os.environ.get("CHIME_BENCH_CURVE_SERVER")
            if server:
                socket.curve_serverkey = server.encode()
                socket.curve_publickey = os.environ["CHIME_BENCH_CURVE_PUBLIC"].encode()
                socket.curve_secretkey = os.environ["CHIME_BENCH_CURVE_SECRET"].encode()
            socket.setsockopt(zmq.SUBSCRIBE, b"fire.")
            for one in endpoint.split(","):
                socket.connect(one)
            records = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            print("ready", flush=True)
            while True:
                frames = socket.recv_multipart()
                actual = time.time()
                if len(frames) != 2:
                    continue
                event = json.loads(frames[1])
                reminder = event.get("reminderId", "")
                if not reminder.isdigit():
                    print("probe", flush=True)
                    continue
                due = datetime.fromisoformat(event["dueAt"].replace("Z", "+00:00")).timestamp()
                os.write(records, b"%s %.6f %.6f\n" % (reminder.encode(), due, actual))


        if __name__ == "__main__":
            try:
                main()
            except KeyboardInterrupt:
                pass
        """#

    /// Starts the child, waits (at most 15 s) for its `ready` line, then follows it until
    /// `stop`: probes from its output, records from `recordsPath`. Stops the child by its pid
    /// (SIGTERM, then SIGKILL after 2 s) before returning.
    /// - Throws: `BenchError` when `python3` cannot start or pyzmq is missing (with the
    ///   child's standard error).
    static func run(
        endpoint: String, recordsPath: String, curve: CurveClientKeys?, stop: StopSignal, tracker: RecordsTracker,
        onReady: () -> Void
    ) throws {
        let directory = URL(fileURLWithPath: recordsPath).deletingLastPathComponent()
        let scriptURL = directory.appendingPathComponent("pyzmq_subscriber.py")
        try Data(script.utf8).write(to: scriptURL)
        guard FileManager.default.createFile(atPath: recordsPath, contents: nil) else {
            throw BenchError("cannot create \(recordsPath)")
        }
        var environment: [String: String] = [:]
        if let curve {
            environment["CHIME_BENCH_CURVE_SERVER"] = curve.serverKey
            environment["CHIME_BENCH_CURVE_PUBLIC"] = curve.keys.publicKey
            environment["CHIME_BENCH_CURVE_SECRET"] = curve.keys.secretKey
        }
        let child = ChildSupervisor(
            name: "pyzmq-subscriber",
            launch: .init(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: ["python3", "-u", scriptURL.path, endpoint, recordsPath], environment: environment))
        let output = Pipe()
        let errors = Pipe()
        child.pipes = (output, errors)
        do { try child.start() } catch { throw BenchError("cannot start python3 for --subscriber pyzmq: \(error)") }
        defer { child.stop(grace: 2) }

        let lines = ChildLines(output.fileHandleForReading)
        let readyBy = Date().addingTimeInterval(15)
        while !lines.contains("ready") {
            if !child.isRunning || Date() > readyBy {
                child.stop(grace: 2)
                let message = String(decoding: errors.fileHandleForReading.availableDataOrEmpty(), as: UTF8.self)
                throw BenchError(
                    "the pyzmq subscriber did not start (needs python3 with pyzmq: pip install pyzmq)\n\(message)")
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        onReady()

        let records = open(recordsPath, O_RDONLY | O_CLOEXEC)
        guard records >= 0 else { throw BenchError("cannot read \(recordsPath) (errno \(errno))") }
        defer { close(records) }
        var tail = RecordsTail()
        var probesSeen = 0
        while !stop.isStopRequested {
            let probes = lines.count(of: "probe")
            while probesSeen < probes {
                tracker.progress.noteProbe()
                probesSeen += 1
            }
            guard tail.read(records, into: tracker) else {
                if let exit = child.exit { throw BenchError("the pyzmq subscriber exited (\(exit))") }
                Thread.sleep(forTimeInterval: 0.002)
                continue
            }
        }
    }
}

/// The lines a child writes to a pipe, collected by the pipe's readability handler.
private final class ChildLines: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var partial = Data()

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            lock.lock()
            defer { lock.unlock() }
            partial.append(data)
            while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                counts[line, default: 0] += 1
                partial.removeSubrange(partial.startIndex...newline)
            }
        }
    }

    func contains(_ line: String) -> Bool { count(of: line) > 0 }

    func count(of line: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return counts[line] ?? 0
    }
}

extension FileHandle {
    /// What can be read now without blocking for long: the bytes of an exited child's pipe.
    fileprivate func availableDataOrEmpty() -> Data {
        (try? readToEnd()) ?? Data()
    }
}
