import Foundation
import Testing

@testable import ChimeRuntime

extension ConfigurationTests {
    @Test func httpListensOnPortBasePlusFiveUnlessOff() throws {
        var configuration = ChimeConfiguration()
        #expect(configuration.http.listen == "127.0.0.1:7705")
        configuration.useLoopbackPorts(from: 41000)
        #expect(configuration.http.listen == "127.0.0.1:41005")
        var off = try ChimeConfiguration.decode(Data(#"{"http":{"listen":"off"}}"#.utf8), source: "test")
        off.useLoopbackPorts(from: 41000)
        #expect(off.http.listen == "off")
    }
}
