internal import CZeroMQ
import Foundation

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

extension CurveKeyPair {
    /// Makes the pair of a stored secret key, deriving its public key.
    ///
    /// - Throws: ``ZeroMQError`` with ``ZeroMQError/Code/invalidArgument`` when
    ///   `secretKey` is not 40 Z85 characters, or ``ZeroMQError/Code/notSupported`` when
    ///   libzmq was built without CURVE.
    ///
    /// The corresponding libzmq call is `zmq_curve_public`.
    public init(secretKey: String) throws {
        guard Z85.isKey(secretKey) else {
            throw ZeroMQError(code: .invalidArgument, operation: "zmq_curve_public")
        }
        self.init(publicKey: try Calls.curvePublic(secretKey: secretKey), secretKey: secretKey)
    }
}

/// ZeroMQ's printable encoding of binary data (RFC 32): 5 characters for every 4 bytes,
/// used for CURVE keys (32 bytes, 40 characters).
public enum Z85 {
    /// The Z85 text of `bytes`, or `nil` when their count is not a multiple of 4.
    ///
    /// The corresponding libzmq call is `zmq_z85_encode`.
    public static func encode(_ bytes: some DataProtocol) -> String? {
        let contiguous = [UInt8](bytes)
        return contiguous.withUnsafeBytes { Calls.z85Encode($0) }
    }

    /// The bytes of `text`, or `nil` when its length is not a multiple of 5 or it holds a
    /// character outside the Z85 alphabet.
    ///
    /// The corresponding libzmq call is `zmq_z85_decode`.
    public static func decode(_ text: String) -> [UInt8]? {
        Calls.z85Decode(text)
    }

    /// Whether `text` is a CURVE key: 40 Z85 characters (32 bytes).
    public static func isKey(_ text: String) -> Bool {
        text.utf8.count == 40 && decode(text) != nil
    }
}
