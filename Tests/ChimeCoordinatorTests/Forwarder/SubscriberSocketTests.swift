import Foundation
import Testing

@testable import ChimeCoordinator

#if canImport(Glibc)
import Glibc
#endif

/// Cutting off one subscriber connection by its descriptor (issue 37 item 6: a ban that costs
/// other subscribers nothing): only a socket that is still the one first seen is shut down.
@Suite struct SubscriberSocketTests {
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
        let first = try #require(SubscriberSocket.identity(of: a))
        let second = try #require(SubscriberSocket.identity(of: b))
        #expect(first != second)
        #expect(SubscriberSocket.identity(of: a) == first)
        let file = open("/dev/null", O_RDONLY)
        defer { close(file) }
        #expect(SubscriberSocket.identity(of: file) == nil)
        #expect(SubscriberSocket.identity(of: -1) == nil)
        #expect(SubscriberSocket.identity(of: Int32.max) == nil)
    }

    @Test func cutShutsDownOnlyTheSocketFirstSeenAndThePeerReadsEndOfStream() throws {
        let (a, b) = try Self.socketPair()
        defer { close(a); close(b) }
        let (c, d) = try Self.socketPair()
        defer { close(c); close(d) }
        let identity = try #require(SubscriberSocket.identity(of: a))
        // Another socket under the recorded identity's descriptor number is left alone.
        #expect(!SubscriberSocket.cut(c, ifStill: identity))
        #expect(write(d, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(c, &byte, 1) == 1)
        // The socket itself is shut down: its peer reads end of stream, the descriptor stays open.
        #expect(SubscriberSocket.cut(a, ifStill: identity))
        #expect(read(b, &byte, 1) == 0)
        #expect(SubscriberSocket.identity(of: a) == identity)
    }
}
