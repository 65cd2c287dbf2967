import Foundation
import Testing

@testable import HTTPServer

@Suite struct HTTPServerTests {
    static let routes = HTTPRoutes([
        "/hello": { HTTPResponse(status: 200, text: "hi\n") },
        "/busy": { HTTPResponse(status: 503, text: "not ready: busy\n") },
    ])

    func withServer(_ body: (UInt16) throws -> Void) throws {
        let server = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0)) { Self.routes.respond(to: $0) }
        defer { server.stop() }
        #expect(server.port != 0)
        try body(server.port)
    }

    @Test func answersRoutesNotFoundAndMethodNotAllowed() throws {
        try withServer { port in
            let hello = try RawHTTP.exchange(port: port, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(hello.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(hello.contains("Content-Type: text/plain; charset=utf-8\r\n"))
            #expect(hello.hasSuffix("\r\n\r\nhi\n"))
            let query = try RawHTTP.exchange(port: port, "GET /hello?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(query.hasSuffix("\r\n\r\nhi\n"))
            let busy = try RawHTTP.exchange(port: port, "GET /busy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(busy.hasPrefix("HTTP/1.1 503 "))
            #expect(busy.hasSuffix("\r\n\r\nnot ready: busy\n"))
            let missing = try RawHTTP.exchange(port: port, "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(missing.hasPrefix("HTTP/1.1 404 "))
            #expect(missing.hasSuffix("\r\n\r\nnot found: try /busy /hello\n"))
            let post = try RawHTTP.exchange(
                port: port, "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nabcde")
            #expect(post.hasPrefix("HTTP/1.1 405 "))
            #expect(post.contains("Allow: GET, HEAD\r\n"))
            let head = try RawHTTP.exchange(port: port, "HEAD /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(head.hasSuffix("\r\n\r\n"))
        }
    }

    @Test func survivesGarbageAndAnswersAfterwards() throws {
        try withServer { port in
            var generator = SystemRandomNumberGenerator()
            let garbage: [[UInt8]] = [
                (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) },
                Array("GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /hello HTTP/1.1\r\nHost: x\r\nX: \(String(repeating: "b", count: 40_000))\r\n\r\n".utf8),
                [0, 0, 0, 0, 13, 10, 13, 10],
                Array("\r\n\r\n".utf8),
                Array("GET\r\n\r\n".utf8),
                Array("BREW /hello HTCPCP/1.0\r\n\r\n".utf8),
                Array("GET /hello HTTP/9.9\r\nHost: x\r\n\r\n".utf8),
                Array("GET /hel\u{0}lo HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                Array("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n".utf8),
                Array("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8),
            ]
            for bytes in garbage {
                // Whatever comes back (an error status or a closed connection) is fine; the
                // server must neither crash nor stop answering.
                _ = try? RawHTTP.exchange(port: port, bytes: bytes)
            }
            let missing = try RawHTTP.exchange(port: port, "GET /%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(missing.hasPrefix("HTTP/1.1 404 "))
            let longURL = try RawHTTP.exchange(
                port: port, "GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(longURL.hasPrefix("HTTP/1.1 414 ") || longURL.isEmpty)
            let hello = try RawHTTP.exchange(port: port, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(hello.hasSuffix("\r\n\r\nhi\n"))
        }
    }

    @Test func aPathThatDoesNotMatchExactlyIsNotFoundEvenWithAnEscapedNUL() throws {
        try withServer { port in
            func status(_ target: String) throws -> String {
                let reply = try RawHTTP.exchange(port: port, "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return String(reply.prefix(12))
            }
            let expected: [(target: String, status: String)] = [
                ("/hello%00junk", "HTTP/1.1 404"), ("/hello%00", "HTTP/1.1 404"), ("/hello%2500", "HTTP/1.1 404"),
                ("/hello/", "HTTP/1.1 404"), ("/hello%00?x=1", "HTTP/1.1 404"),
                ("/hell%6F", "HTTP/1.1 200"),  // other escapes are still decoded
                ("/hello?x=%00", "HTTP/1.1 200"),  // the query is not part of the path
                ("/hello", "HTTP/1.1 200"),
            ]
            for (target, expectedStatus) in expected {
                let answered = try status(target)
                #expect(answered == expectedStatus, "\(target)")
            }
        }
    }

    @Test(arguments: [
        ("/metrics%00junk", "/metrics%00junk"), ("/a%41%62", "/aAb"), ("%", "%"), ("%4", "%4"), ("%zz%4g", "%zz%4g"),
        ("%2500", "%00"), ("%e2%82%ac", "\u{20AC}"), ("", ""), ("%%41", "%A"),
    ])
    func unescapesEveryEscapeButNUL(raw: String, decoded: String) {
        var bytes = Array(raw.utf8)
        let length = bytes.withUnsafeMutableBytes { PathUnescaping.decodeInPlace($0) }
        #expect(Array(bytes[..<length]) == Array(decoded.utf8))
    }

    @Test func unescapingGarbageNeverMakesANULNorGrows() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("%0aF9gz\u{0}\u{ff}".utf8)
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            let nulsBefore = bytes.filter { $0 == 0 }.count
            let length = bytes.withUnsafeMutableBytes { PathUnescaping.decodeInPlace($0) }
            #expect(length <= bytes.count)
            #expect(bytes[..<length].filter { $0 == 0 }.count == nulsBefore, "\(bytes)")
        }
    }

    @Test func refusesAnAddressInUse() throws {
        let first = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0)) { Self.routes.respond(to: $0) }
        defer { first.stop() }
        #expect(throws: HTTPServerError(.cannotListen, "")) {
            _ = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: first.port)) { Self.routes.respond(to: $0) }
        }
    }

    @Test(arguments: [
        ("127.0.0.1:7705", "127.0.0.1", UInt16(7705)),
        ("0.0.0.0:80", "0.0.0.0", 80),
        ("localhost:0", "127.0.0.1", 0),
        ("[::1]:7705", "::1", 7705),
        ("[::]:65535", "::", 65535),
    ])
    func parsesListenAddresses(text: String, host: String, port: UInt16) throws {
        #expect(try HTTPListenAddress.parse(text) == HTTPListenAddress(host: host, port: port))
    }

    @Test(arguments: [
        "", "7705", ":7705", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
        "127.0.0.1:0x10", "example.com:80", "::1:7705", "[::1]7705", "[::1:7705", "256.0.0.1:1", "1.2.3.4:123456",
        "127.0.0.1:٣", "off",
    ])
    func refusesOtherListenAddresses(text: String) {
        #expect(throws: HTTPServerError(.invalidAddress, "")) { try HTTPListenAddress.parse(text) }
    }
}

/// One request over a plain TCP socket to 127.0.0.1, the whole answer read until the server
/// closes (2 s deadline on each read).
enum RawHTTP {
    struct Failure: Error { var reason: String }

    static func exchange(port: UInt16, _ request: String) throws -> String {
        String(decoding: try exchange(port: port, bytes: Array(request.utf8)), as: UTF8.self)
    }

    static func exchange(port: UInt16, bytes: [UInt8]) throws -> [UInt8] {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(reason: "socket") }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(reason: "connect") }
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may answer and close before reading everything (a refused request).
            guard count > 0 else { break }
            sent += count
        }
        shutdown(descriptor, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += buffer[0..<count] } else if count == 0 || errno != EINTR { break }
        }
        return received
    }
}
