import Foundation

/// A server's TLS certificate chain and private key, both PEM text, for ``HTTPServer``.
public struct HTTPTLSIdentity: Sendable {
    /// The certificate (and any intermediates after it), PEM (`-----BEGIN CERTIFICATE-----`).
    public var certificatePEM: String
    /// The private key, PEM (PKCS #8, PKCS #1 or SEC 1, as GnuTLS reads them).
    public var keyPEM: String

    /// Creates the value from its fields.
    public init(certificatePEM: String, keyPEM: String) {
        self.certificatePEM = certificatePEM
        self.keyPEM = keyPEM
    }
}
