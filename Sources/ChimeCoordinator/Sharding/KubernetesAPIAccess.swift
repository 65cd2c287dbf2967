import ChimeWire
import Foundation

/// Where the Kubernetes API server is and how a pod proves who it is: the in-cluster
/// configuration every client library uses (client-go's `rest.InClusterConfig`).
///
/// In a pod: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the service
/// account's token, CA bundle and namespace under `/var/run/secrets/kubernetes.io/serviceaccount/`.
/// The token file is read again for every request (the kubelet rotates it, about hourly).
public struct KubernetesAPIAccess: Sendable, Equatable {
    /// The service account's mount point in a pod.
    public static let serviceAccountDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

    /// The API server's base URL, like `https://10.96.0.1:443` (no trailing slash).
    public var baseURL: String
    /// The bearer token file; `nil` (or an empty path): no `Authorization` header.
    public var tokenFile: String?
    /// The CA bundle (PEM) the server's certificate must chain to; `nil`: the system's.
    public var certificateAuthorityFile: String?
    /// The namespace of the objects, like `default`.
    public var namespace: String
    /// Each request's deadline, in seconds.
    public var timeout: Double

    /// Access from its parts.
    public init(baseURL: String, tokenFile: String?, certificateAuthorityFile: String?, namespace: String, timeout: Double = 5) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.tokenFile = tokenFile
        self.certificateAuthorityFile = certificateAuthorityFile
        self.namespace = namespace
        self.timeout = timeout
    }

    /// The in-cluster access, with overrides for tests and for running outside a pod.
    ///
    /// Read from `environment`:
    /// - `CHIME_KUBERNETES_API`: the base URL (default `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`,
    ///   an IPv6 host in brackets);
    /// - `CHIME_KUBERNETES_TOKEN_FILE`, `CHIME_KUBERNETES_CA_FILE`: the token and CA bundle
    ///   (default: the service account's `token` and `ca.crt`; an empty value: none);
    /// - `CHIME_KUBERNETES_NAMESPACE`: the namespace (default: the service account's
    ///   `namespace` file).
    /// - Parameter namespace: the namespace the register setting named, which wins over both.
    /// - Throws: `WireError(.invalidArgument)` when no API server or namespace is known.
    public static func inCluster(environment: [String: String], namespace: String? = nil) throws(WireError) -> KubernetesAPIAccess {
        let directory = serviceAccountDirectory
        let baseURL: String
        if let configured = environment["CHIME_KUBERNETES_API"], !configured.isEmpty {
            baseURL = configured
        } else if let host = environment["KUBERNETES_SERVICE_HOST"], !host.isEmpty {
            let port = environment["KUBERNETES_SERVICE_PORT"].flatMap { $0.isEmpty ? nil : $0 } ?? "443"
            baseURL = "https://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        } else {
            throw WireError(.invalidArgument, "no Kubernetes API server: KUBERNETES_SERVICE_HOST is not set (not in a pod) and neither is CHIME_KUBERNETES_API")
        }
        func path(_ key: String, default file: String) -> String? {
            guard let value = environment[key] else { return "\(directory)/\(file)" }
            return value.isEmpty ? nil : value
        }
        let resolvedNamespace: String
        if let namespace, !namespace.isEmpty {
            resolvedNamespace = namespace
        } else if let configured = environment["CHIME_KUBERNETES_NAMESPACE"], !configured.isEmpty {
            resolvedNamespace = configured
        } else if let data = FileManager.default.contents(atPath: "\(directory)/namespace"), data.count < 256,
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty
        {
            resolvedNamespace = text
        } else {
            throw WireError(.invalidArgument, "no Kubernetes namespace: \(directory)/namespace does not read and CHIME_KUBERNETES_NAMESPACE is not set")
        }
        return KubernetesAPIAccess(
            baseURL: baseURL, tokenFile: path("CHIME_KUBERNETES_TOKEN_FILE", default: "token"),
            certificateAuthorityFile: path("CHIME_KUBERNETES_CA_FILE", default: "ca.crt"), namespace: resolvedNamespace)
    }

    /// The `Authorization` header's value, read from the token file now.
    /// - Throws: `WireError(.unavailable)` when the file does not read.
    func authorization() throws(WireError) -> String? {
        guard let tokenFile, !tokenFile.isEmpty else { return nil }
        // A token is a JWT of a few KiB; anything much larger is not one.
        guard let data = FileManager.default.contents(atPath: tokenFile), data.count <= 64 << 10,
            let token = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty
        else {
            throw WireError(.unavailable, "the Kubernetes service account token \(tokenFile) does not read (or is empty or over 64 KiB)")
        }
        return "Bearer \(token)"
    }
}
