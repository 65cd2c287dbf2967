import Foundation
import Testing
import ZeroMQ

@Suite(.enabled(if: zeroMQSupports("curve"), "libzmq built without CURVE"))
struct CurveTests {
    static let z85Alphabet = Set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
    )

    @Test func keyPairGenerationGivesTwoZ85Keys() throws {
        let pair = try CurveKeyPair.generate()

        #expect(pair.publicKey.count == 40)
        #expect(pair.secretKey.count == 40)
        #expect(pair.publicKey.allSatisfy(Self.z85Alphabet.contains))
        #expect(pair.secretKey.allSatisfy(Self.z85Alphabet.contains))
        #expect(pair.publicKey != pair.secretKey)
        #expect(try CurveKeyPair.generate() != pair)
        #expect(!pair.description.contains(pair.secretKey))
    }

    @Test func curveClientWithTheServerKeyExchangesMessages() throws {
        let context = try Context()
        let server = try CurveKeyPair.generate()
        let pull = try makeServer(server, context: context)
        let push = try makeClient(serverKey: server.publicKey, context: context)
        try push.connect(to: try pull.lastEndpoint)

        try push.send(frames("secret", "firing"))

        #expect(try pull.receiveMessage() == frames("secret", "firing"))
    }

    @Test func curveClientWithAWrongServerKeyGetsNothingThrough() throws {
        let context = try Context()
        let pull = try makeServer(try CurveKeyPair.generate(), context: context)
        try pull.set(.receiveTimeout(milliseconds: 300))
        let push = try makeClient(serverKey: try CurveKeyPair.generate().publicKey, context: context)
        try push.set(.linger(milliseconds: 0))
        try push.connect(to: try pull.lastEndpoint)

        try push.send(frames("secret"))

        #expect(try pull.receiveMessage() == nil)
    }

    private func makeServer(_ keys: CurveKeyPair, context: Context) throws -> Socket {
        let pull = try Socket(.pull, context: context)
        try pull.set(.curveServer(true))
        try pull.set(.curveSecretKey(keys.secretKey))
        try pull.set(.receiveTimeout(milliseconds: 5000))
        try pull.bind(to: "tcp://127.0.0.1:*")
        return pull
    }

    private func makeClient(serverKey: String, context: Context) throws -> Socket {
        let client = try CurveKeyPair.generate()
        let push = try Socket(.push, context: context)
        try push.set(.curveServerKey(serverKey))
        try push.set(.curvePublicKey(client.publicKey))
        try push.set(.curveSecretKey(client.secretKey))
        return push
    }
}
