internal import CZeroMQ

/// A CURVE long-term key pair, each key 40 Z85 characters (32 bytes of Curve25519).
///
/// A server sets ``SocketOption/curveServer(_:)`` and its secret key; a client sets its
/// own pair and the server's public key. Without a ZAP handler any client that knows the
/// server's public key is accepted: CURVE then encrypts but does not authenticate.
public struct CurveKeyPair: Sendable, Hashable, CustomStringConvertible {
    /// The key to share with peers, 40 Z85 characters.
    public var publicKey: String
    /// The key to keep private, 40 Z85 characters.
    public var secretKey: String

    /// Creates a pair from stored Z85 keys.
    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a fresh pair from the operating system's random source.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/notSupported`` when libzmq was
    ///   built without CURVE.
    ///
    /// The corresponding libzmq call is `zmq_curve_keypair`.
    public static func generate() throws -> CurveKeyPair {
        let keys = try Calls.curveKeypair()
        return CurveKeyPair(publicKey: keys.publicKey, secretKey: keys.secretKey)
    }

    /// The public key with the secret key redacted, so logging a pair leaks nothing.
    public var description: String {
        "CurveKeyPair(publicKey: \(publicKey), secretKey: <redacted>)"
    }
}
