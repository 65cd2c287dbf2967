import Foundation
import Testing

@testable import ChimeClient

/// A loopback TCP socket bound to a free port, listening or not (a bound port that does not
/// listen refuses connections, and stays reserved while the test runs); its endpoint.
final class LoopbackPort {
    let descriptor: Int32
    let endpoint: String

    init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard descriptor >= 0, bound, !listening || listen(descriptor, 8) == 0 else {
            throw POSIXError(.EADDRNOTAVAIL)
        }
        endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
    }

    deinit { close(descriptor) }
}

/// The probe a client makes before its first reply: a plain non-blocking connect, one at a
/// time or many at once (a scatter over shards).
@Suite struct EndpointProbeTests {
    /// A listening loopback port, a refused one, a missing `ipc://` path, `inproc://` and a
    /// malformed port, probed together and one by one, give the same verdicts in the order
    /// asked.
    @Test func probesManyEndpointsAtOnceInTheOrderAsked() throws {
        let listening = try LoopbackPort(listening: true)
        let refusing = try LoopbackPort(listening: false)
        let missing = "ipc://\(NSTemporaryDirectory())chime-probe-missing-\(UUID().uuidString)"
        let endpoints = [listening.endpoint, refusing.endpoint, missing, "inproc://probe", listening.endpoint, "tcp://127.0.0.1:notaport"]
        let expected: [EndpointProbe.Outcome] = [.listening, .refused, .refused, .unknown, .listening, .unknown]
        #expect(EndpointProbe.probe(endpoints) == expected)
        #expect(endpoints.map { EndpointProbe.probe($0) } == expected)
        #expect(EndpointProbe.probe([]) == [])
    }
}
