import Foundation
import Testing

@testable import ChimeCoordinator

#if canImport(Glibc)
import Glibc
#endif

/// Cutting off one subscriber connection by its descriptor (issue 37 item 6: a ban that costs
/// other subscribers nothing): only a socket that is still the one first seen is shut down.
@Suite struct ConnectionSocketTests {
    /// A connected pair of Unix stream sockets, closed by the caller.
    static func socketPair() throws -> (Int32, Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return (descriptors[0], descriptors[1])
    }

    @Test func aSocketHasAnIdentityAndAFileOrAClosedDescriptorHasNone() throws {
        let (a, b) = try Self.socketPair()
        defer { close(a); close(b) }
        let first = try #require(ConnectionSocket.identity(of: a))
        let second = try #require(ConnectionSocket.identity(of: b))
        #expect(first != second)
        #expect(ConnectionSocket.identity(of: a) == first)
        let file = open("/dev/null", O_RDONLY)
        defer { close(file) }
        #expect(ConnectionSocket.identity(of: file) == nil)
        #expect(ConnectionSocket.identity(of: -1) == nil)
        #expect(ConnectionSocket.identity(of: Int32.max) == nil)
    }

    @Test func cutShutsDownOnlyTheSocketFirstSeenAndThePeerReadsEndOfStream() throws {
        let (a, b) = try Self.socketPair()
        defer { close(a); close(b) }
        let (c, d) = try Self.socketPair()
        defer { close(c); close(d) }
        let identity = try #require(ConnectionSocket.identity(of: a))
        // Another socket under the recorded identity's descriptor number is left alone.
        #expect(!ConnectionSocket.cut(c, ifStill: identity))
        #expect(write(d, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(c, &byte, 1) == 1)
        // The socket itself is shut down: its peer reads end of stream, the descriptor stays open.
        #expect(ConnectionSocket.cut(a, ifStill: identity))
        #expect(read(b, &byte, 1) == 0)
        #expect(ConnectionSocket.identity(of: a) == identity)
    }

    /// A connected pair of TCP sockets on 127.0.0.1 (an ephemeral port), closed by the caller.
    static func tcpPair() throws -> (client: Int32, server: Int32) {
        func fail() -> POSIXError { POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw fail() }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { throw fail() }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
        }
        guard connected else { throw fail() }
        let server = accept(listener, nil, nil)
        guard server >= 0 else { throw fail() }
        return (client, server)
    }

    @Test func aTCPConnectionWhosePeerDoesNotReadHasBytesUnsentAndAUnixSocketHasNoCount() throws {
        let (client, server) = try Self.tcpPair()
        defer { close(client); close(server) }
        #expect(ConnectionSocket.bytesNotSent(client) == 0)
        // The server never reads: its receive window closes and the client's kernel keeps
        // the rest unsent. Non-blocking writes until the kernel refuses more.
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        let chunk = [UInt8](repeating: 7, count: 65_536)
        var written = 0
        while written < 64 << 20 {
            let n = write(client, chunk, chunk.count)
            if n <= 0 { break }
            written += n
        }
        #expect(written > 0)
        #expect((ConnectionSocket.bytesNotSent(client) ?? 0) > 0)
        let (a, b) = try Self.socketPair()
        defer { close(a); close(b) }
        #expect(ConnectionSocket.bytesNotSent(a) == nil)
        #expect(ConnectionSocket.bytesNotSent(-1) == nil)
    }
}
