import ChimeDelivery
import Foundation
import HTTPClient
import HTTPServer
import Testing

/// DNS rebinding against the webhook SSRF check: the name is resolved once, checked, and the
/// request pinned to exactly the checked addresses, so a second answer cannot steer it.
@Suite struct AddressPinningTests {
    @Test func aNameIsPinnedToTheAddressesThatWereChecked() {
        let public4 = PrivateAddresses.check("https://hooks.example.com/in") { _ in ["93.184.215.14", "2606:2800:21f:cb07::1"] }
        #expect(public4 == .allowed(pinnedAddresses: ["hooks.example.com:443:93.184.215.14,[2606:2800:21f:cb07::1]"]))
        let withPort = PrivateAddresses.check("http://hooks.example.com:8080/in") { _ in ["93.184.215.14"] }
        #expect(withPort == .allowed(pinnedAddresses: ["hooks.example.com:8080:93.184.215.14"]))
    }

    @Test func oneCheckedPrivateAnswerRefusesAndLiteralsNeedNoPin() {
        // The rebinding shape: one public and one private answer.
        guard case .refused(let reason) = PrivateAddresses.check("https://rebind.example/in", resolve: { _ in ["93.184.215.14", "127.0.0.1"] }) else {
            Issue.record("a name with a private answer was allowed")
            return
        }
        #expect(reason.contains("127.0.0.1"))
        #expect(PrivateAddresses.check("https://93.184.215.14/in") { _ in Issue.record("a literal was resolved"); return [] } == .allowed(pinnedAddresses: []))
        #expect(PrivateAddresses.check("http://[::1]:9/in") { _ in [] } != .allowed(pinnedAddresses: []))
        #expect(PrivateAddresses.check("https://gone.example/in") { _ in [] } == .allowed(pinnedAddresses: []))
        #expect(PrivateAddresses.check("not a url") { _ in [] } != .allowed(pinnedAddresses: []))
    }

    @Test func theClientConnectsToThePinnedAddressNotTheName() throws {
        let server = try HTTPServer(address: HTTPListenAddress(host: "127.0.0.1", port: 0)) { request in
            HTTPResponse(status: 200, text: "host \(request.headers["host"] ?? "-")\n")
        }
        defer { server.stop() }
        // `.invalid` never resolves (RFC 6761): only the pin can reach the server.
        let url = "http://pinned.invalid:\(server.port)/hook"
        let client = HTTPClient(timeout: 5)
        let response = try client.send(HTTPClient.Request(method: "GET", url: url, pinnedAddresses: ["pinned.invalid:\(server.port):127.0.0.1"]))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "host pinned.invalid:\(server.port)\n")
        #expect(throws: HTTPClientError.self) { try client.send(HTTPClient.Request(method: "GET", url: url)) }
    }
}
