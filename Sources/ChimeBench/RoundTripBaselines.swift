import Foundation
import Synchronization
import ZeroMQ

/// The floors of a one-call-at-a-time round trip, measured in the same run as Chime's
/// (issue 17): a bare libzmq DEALER → ROUTER echo over the same transport with a body of the
/// same size, and one `write` + `fdatasync` of a journal-sized record on the store's disk.
/// Chime's round trip with fsync `interval` is compared with the echo, with fsync `always`
/// with the echo plus one `fdatasync`.
public enum RoundTripBaselines {
    /// Mean, median and 99th percentile, milliseconds.
    public struct Figures: Hashable, Sendable, Codable {
        public var mean: Double
        public var p50: Double
        public var p99: Double
    }

    /// `count` sequential round trips between a DEALER in this thread and a ROUTER echo
    /// thread (its own ZeroMQ context, so its own I/O thread, as a second process would
    /// have) over `tcp://127.0.0.1:<port>`, each carrying `body`.
    /// - Throws: `ZeroMQError` when no loopback port can be bound.
    public static func echo(body: Data, count: Int) throws -> Figures {
        let serverContext = try Context()
        let bound = Mutex<Result<String, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            let server: Socket
            do {
                server = try Socket(.router, context: serverContext)
                try server.set(.linger(milliseconds: 0))
                try server.bind(to: "tcp://127.0.0.1:*")
                let endpoint = try server.lastEndpoint
                bound.withLock { $0 = .success(endpoint) }
            } catch {
                bound.withLock { $0 = .failure(error) }
                ready.signal()
                return
            }
            ready.signal()
            defer { server.close() }
            while let frames = try? server.receiveMessage() {
                if frames.count == 3, frames[2] == stopBody { return }
                _ = try? server.send(frames, dontWait: false)
            }
        }
        thread.name = "chime-bench-echo"
        thread.start()
        ready.wait()
        defer {
            _ = done.wait(timeout: .now() + 5)
            serverContext.shutdown()
        }
        guard let endpoint = try bound.withLock({ $0 })?.get() else { throw BenchError("the echo server did not start") }

        let clientContext = try Context()
        defer { clientContext.shutdown() }
        let client = try Socket(.dealer, context: clientContext)
        defer { client.close() }
        try client.set(.linger(milliseconds: 0))
        try client.connect(to: endpoint)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let started = ContinuousClock.now
            _ = try client.send([Data(), body], dontWait: false)
            _ = try client.receiveMessage()
            samples.append(milliseconds(ContinuousClock.now - started))
        }
        _ = try client.send([Data(), stopBody], dontWait: false)
        return figures(samples)
    }

    /// `count` times: append `recordBytes` bytes to a scratch file in `directory`, then
    /// `fdatasync` it (the journal's fsync `always`); the file is removed afterwards.
    /// - Throws: `POSIXError` when the file cannot be created or written.
    public static func fdatasyncCost(in directory: URL, recordBytes: Int = 256, count: Int = 500) throws -> Figures {
        let path = directory.appendingPathComponent("fdatasync-probe.tmp").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let record = [UInt8](repeating: 0x2A, count: recordBytes)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let started = ContinuousClock.now
            let written = record.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written == recordBytes, fdatasync(descriptor) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            samples.append(milliseconds(ContinuousClock.now - started))
        }
        return figures(samples)
    }

    static let stopBody = Data("chime-bench-echo-stop".utf8)

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func figures(_ samples: [Double]) -> Figures {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return Figures(mean: 0, p50: 0, p99: 0) }
        func at(_ quantile: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))] }
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        return Figures(
            mean: rounded(sorted.reduce(0, +) / Double(sorted.count)), p50: rounded(at(0.5)), p99: rounded(at(0.99)))
    }
}
