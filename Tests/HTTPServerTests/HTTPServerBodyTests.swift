import Foundation
import Testing

@testable import HTTPServer

/// Query arguments, headers and bodies reach a handler; a body past the limit is refused.
@Suite struct HTTPServerBodyTests {
    static func echo(_ request: HTTPRequest) -> HTTPResponse {
        let body = String(decoding: request.body, as: UTF8.self)
        return HTTPResponse(
            status: 200,
            text: "\(request.method) \(request.path) q=\(request.query["q"] ?? "-") h=\(request.headers["x-probe"] ?? "-") body=\(body)\n")
    }

    @Test func handlerSeesQueryHeadersAndBody() throws {
        let server = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0), maximumBodyBytes: 64) { Self.echo($0) }
        defer { server.stop() }
        let get = try RawHTTP.exchange(port: server.port, "GET /echo?q=a+b%2Bc HTTP/1.1\r\nHost: x\r\nX-Probe: yes\r\nConnection: close\r\n\r\n")
        #expect(get.hasSuffix("\r\n\r\nGET /echo q=a b+c h=yes body=\n"))
        let post = try RawHTTP.exchange(
            port: server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello=world")
        #expect(post.hasSuffix("\r\n\r\nPOST /echo q=- h=- body=hello=world\n"))
        let empty = try RawHTTP.exchange(port: server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(empty.hasSuffix("\r\n\r\nPOST /echo q=- h=- body=\n"))
    }

    @Test func bodyPastTheLimitIsRefusedWith413() throws {
        let server = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0), maximumBodyBytes: 16) { Self.echo($0) }
        defer { server.stop() }
        let body = String(repeating: "x", count: 17)
        let reply = try RawHTTP.exchange(
            port: server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\nConnection: close\r\n\r\n\(body)")
        #expect(reply.hasPrefix("HTTP/1.1 413 "))
        #expect(reply.hasSuffix("request body too large: at most 16 bytes\n"))
    }

    @Test func serverWithoutBodyLimitReadsNoBody() throws {
        let server = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0)) { Self.echo($0) }
        defer { server.stop() }
        let post = try RawHTTP.exchange(
            port: server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nabcde")
        #expect(post.hasSuffix("\r\n\r\nPOST /echo q=- h=- body=\n"))
    }

    @Test func formDecodingIsTotal() {
        #expect(FormDecoding.fields(Array("a=1&b=x+y%21&a=2&c".utf8)) == ["a": "1", "b": "x y!", "c": ""])
        #expect(FormDecoding.fields(Array("%zz=%4&=%".utf8)) == ["%zz": "%4", "": "%"])
        #expect(FormDecoding.fields([0xff, 0x3d, 0xfe]) == ["\u{FFFD}": "\u{FFFD}"])
        let many = (0..<100).map { "k\($0)=v" }.joined(separator: "&")
        #expect(FormDecoding.fields(Array(many.utf8)).count == FormDecoding.maximumFields)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(FormDecoding.fields(bytes).count <= FormDecoding.maximumFields)
        }
    }
}
