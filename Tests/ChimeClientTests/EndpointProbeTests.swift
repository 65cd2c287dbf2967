import Foundation
import Testing
import ZeroMQ

@testable import ChimeClient

/// The probe a client makes before its first reply: a plain non-blocking connect, one at a
/// time or many at once (a scatter over shards).
@Suite struct EndpointProbeTests {
    /// A listening loopback port, a refused one (bound to nothing: the port the listener had
    /// before it closed), a missing `ipc://` path and `inproc://`, probed together and one by
    /// one, give the same verdicts in the order asked.
    @Test func probesManyEndpointsAtOnceInTheOrderAsked() throws {
        let context = try Context()
        defer { context.shutdown() }
        let listener = try Socket(.router, context: context)
        try listener.set(.linger(milliseconds: 0))
        try listener.bind(to: "tcp://127.0.0.1:*")
        let listening = try listener.lastEndpoint
        let closed = try Socket(.router, context: context)
        try closed.set(.linger(milliseconds: 0))
        try closed.bind(to: "tcp://127.0.0.1:*")
        let refused = try closed.lastEndpoint
        closed.close()
        defer { listener.close() }
        let missing = "ipc://\(NSTemporaryDirectory())chime-probe-missing-\(UUID().uuidString)"
        let endpoints = [listening, refused, missing, "inproc://probe", listening, "tcp://127.0.0.1:notaport"]
        let expected: [EndpointProbe.Outcome] = [.listening, .refused, .refused, .unknown, .listening, .unknown]
        #expect(EndpointProbe.probe(endpoints) == expected)
        #expect(endpoints.map { EndpointProbe.probe($0) } == expected)
        #expect(EndpointProbe.probe([]) == [])
    }
}
