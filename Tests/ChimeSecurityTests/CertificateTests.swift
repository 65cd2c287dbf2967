import ChimeRuntime
import ChimeTestSupport
import Foundation
import Testing
import ZeroMQ
@testable import ChimeSecurity


/// The ZeroMQ certificate format, file permissions and the loopback rule.
@Suite(.enabled(if: zeroMQSupports("curve"), "libzmq built without CURVE"))
struct CertificateTests {
    @Test func readsACertificateAsPyzmqWritesIt() throws {
        let pair = try CurveKeyPair.generate()
        let text = """
            #   ****  Generated on 2026-12-01 12:00:00 by pyzmq  ****
            #   ZeroMQ CURVE **Secret** Certificate

            metadata
                name = operator-1
            curve
                public-key = "\(pair.publicKey)"
                secret-key = "\(pair.secretKey)"

            """
        let certificate = try Certificate(parsing: text, source: "pyzmq")
        #expect(certificate == Certificate(publicKey: pair.publicKey, secretKey: pair.secretKey, metadata: ["name": "operator-1"]))
        #expect(try Certificate(parsing: certificate.text, source: "round trip") == certificate)
    }

    @Test func refusesASecretKeyOfAnotherPairAndAMissingPublicKey() throws {
        let one = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        #expect(throws: SecurityError(.badCertificate, "")) {
            _ = try Certificate(parsing: "curve\n    public-key = \"\(one.publicKey)\"\n    secret-key = \"\(other.secretKey)\"\n", source: "x")
        }
        #expect(throws: SecurityError(.badCertificate, "")) {
            _ = try Certificate(parsing: "curve\n    public-key = \"short\"\n", source: "x")
        }
    }

    @Test func refusesASecretCertificateOthersCanRead() throws {
        let directory = try TemporaryDirectory(prefix: "cert")
        let file = directory.url.appendingPathComponent("loose.key_secret")
        try Certificate.generate().write(to: file)
        #expect(try Certificate(contentsOf: file).secretKey != nil)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)

        #expect(throws: SecurityError(.loosePermissions, "")) { _ = try Certificate(contentsOf: file) }
    }

    @Test func refusesAnAllowListOthersCanWrite() throws {
        let directory = try TemporaryDirectory(prefix: "keys")
        try KeyDirectory.initialize(at: directory.url.appendingPathComponent("k"))
        let worker = directory.url.appendingPathComponent("k/worker")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: worker.path)

        #expect(throws: SecurityError(.loosePermissions, "")) {
            _ = try AccessPolicy.load(directory: directory.url.appendingPathComponent("k"))
        }
    }

    @Test func refusesANonLoopbackBindWithoutKeysUnlessInsecure() throws {
        var configuration = ChimeConfiguration()
        try SecuritySettings.checkBinds(configuration, isSecured: false)
        configuration.endpoints.events.bind = "tcp://0.0.0.0:7703"

        #expect(throws: SecurityError(.insecureBind, "")) { try SecuritySettings.checkBinds(configuration, isSecured: false) }
        try SecuritySettings.checkBinds(configuration, isSecured: true)
        configuration.security.insecure = true
        try SecuritySettings.checkBinds(configuration, isSecured: false)
    }
}
