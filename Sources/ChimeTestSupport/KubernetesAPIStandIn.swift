import Foundation
import HTTPServer
import Synchronization

/// A stand-in for the Kubernetes API server's ConfigMap endpoints, on loopback (plain HTTP,
/// or HTTPS with a given identity), for the map register's tests: `GET` and `PUT` of
/// `/api/v1/namespaces/{ns}/configmaps/{name}` and `POST` to `…/configmaps`, with
/// `resourceVersion` optimistic concurrency as the real server does it: a `PUT` naming a
/// stale `metadata.resourceVersion` is answered 409 Conflict, a `POST` of an existing name
/// 409 AlreadyExists, an unknown name 404, each with a `Status` body.
///
/// Not a Kubernetes: no watch, no field validation beyond the object's shape, one global
/// resource version counter (as etcd's revision). Faults can be injected (refused verbs,
/// delays, a wrong token, garbage answers, conflicts) to test the client's errors.
public final class KubernetesAPIStandIn: Sendable {
    /// A stored ConfigMap.
    public struct ConfigMap: Sendable, Equatable {
        /// `metadata.resourceVersion`.
        public var resourceVersion: Int
        /// `metadata.labels`.
        public var labels: [String: String]
        /// `data`.
        public var data: [String: String]
    }

    /// What the stand-in does besides serving the objects.
    public struct Faults: Sendable {
        /// The bearer token accepted; `nil`: any request is authenticated.
        public var token: String?
        /// Verbs (`get`, `update`, `create`) answered 403 Forbidden.
        public var forbidden: Set<String> = []
        /// How long each answer waits first, in seconds.
        public var delay: Double = 0
        /// A body every `GET` is answered with (status 200) instead of the object.
        public var getBody: Data?
        /// `PUT`s answered 409 after the object's resource version was raised (as if someone
        /// changed a label meanwhile), counted down.
        public var conflictingPuts = 0
    }

    private struct Store {
        var objects: [String: ConfigMap] = [:]
        var revision = 100
        var faults = Faults()
        var requests: [String] = []
    }

    /// The state the server's threads and the test share.
    private final class Shared: Sendable {
        let store = Mutex(Store())
    }

    private let shared = Shared()
    private let server: HTTPServer
    /// The namespace served.
    public let namespace: String
    /// The base URL (`http://127.0.0.1:PORT`, or `https://` with TLS).
    public let baseURL: String

    /// Starts serving on 127.0.0.1 on a port the kernel picks.
    /// - Throws: `HTTPServerError` when it cannot listen.
    public init(namespace: String = "chime", tls: HTTPTLSIdentity? = nil) throws {
        self.namespace = namespace
        let shared = shared
        server = try HTTPServer(
            address: HTTPListenAddress(host: "127.0.0.1", port: 0), maximumBodyBytes: 32 << 20, tls: tls
        ) { request in
            Self.respond(to: request, shared: shared, namespace: namespace)
        }
        baseURL = "\(tls == nil ? "http" : "https")://127.0.0.1:\(server.port)"
    }

    deinit { server.stop() }

    /// Stops serving.
    public func stop() { server.stop() }

    /// The ConfigMap `name`, if any.
    public func configMap(_ name: String) -> ConfigMap? { shared.store.withLock { $0.objects[name] } }

    /// Stores `configMap` as `name` at a new resource version (as `kubectl apply` would).
    public func put(_ name: String, labels: [String: String] = [:], data: [String: String]) {
        shared.store.withLock { store in
            store.revision += 1
            store.objects[name] = ConfigMap(resourceVersion: store.revision, labels: labels, data: data)
        }
    }

    /// Changes the faults.
    public func setFaults(_ change: (inout Faults) -> Void) { shared.store.withLock { change(&$0.faults) } }

    /// Every request so far as `METHOD path`, in arrival order.
    public var requests: [String] { shared.store.withLock { $0.requests } }

    private static func respond(to request: HTTPRequest, shared: Shared, namespace: String) -> HTTPResponse {
        let store = shared
        let faults = store.store.withLock { store in
            store.requests.append("\(request.method) \(request.path)")
            return store.faults
        }
        if faults.delay > 0 { Thread.sleep(forTimeInterval: faults.delay) }
        let collection = "/api/v1/namespaces/\(namespace)/configmaps"
        let verb: String
        let name: String?
        switch request.method {
        case "GET" where request.path.hasPrefix(collection + "/"): verb = "get"
        case "PUT" where request.path.hasPrefix(collection + "/"): verb = "update"
        case "POST" where request.path == collection: verb = "create"
        default: return status(404, "NotFound", "no route \(request.method) \(request.path)")
        }
        name = verb == "create" ? nil : String(request.path.dropFirst(collection.count + 1))
        if let token = faults.token, request.headers.first(where: { $0.key.lowercased() == "authorization" })?.value != "Bearer \(token)" {
            return status(401, "Unauthorized", "Unauthorized")
        }
        if faults.forbidden.contains(verb) {
            return status(
                403, "Forbidden",
                "configmaps \"\(name ?? "")\" is forbidden: User \"system:serviceaccount:\(namespace):chime\" cannot \(verb) resource \"configmaps\" in API group \"\" in the namespace \"\(namespace)\"")
        }
        switch verb {
        case "get":
            if let body = faults.getBody { return Self.response(status: 200, body: body) }
            guard let name, let object = store.store.withLock({ $0.objects[name] }) else {
                return status(404, "NotFound", "configmaps \"\(name ?? "")\" not found")
            }
            return encode(object, name: name, namespace: namespace, status: 200)
        case "update":
            guard let name, let (object, version) = decode(request.body) else { return status(400, "BadRequest", "not a ConfigMap") }
            return store.store.withLock { store in
                guard let current = store.objects[name] else { return status(404, "NotFound", "configmaps \"\(name)\" not found") }
                if store.faults.conflictingPuts > 0 {
                    store.faults.conflictingPuts -= 1
                    store.revision += 1
                    store.objects[name]?.resourceVersion = store.revision
                    return conflict(name)
                }
                if let version, version != String(current.resourceVersion) { return conflict(name) }
                store.revision += 1
                var stored = object
                stored.resourceVersion = store.revision
                store.objects[name] = stored
                return encode(stored, name: name, namespace: namespace, status: 200)
            }
        default:
            guard let (object, _) = decode(request.body), let created = objectName(request.body) else {
                return status(400, "BadRequest", "not a ConfigMap")
            }
            return store.store.withLock { store in
                guard store.objects[created] == nil else {
                    return status(409, "AlreadyExists", "configmaps \"\(created)\" already exists")
                }
                store.revision += 1
                var stored = object
                stored.resourceVersion = store.revision
                store.objects[created] = stored
                return encode(stored, name: created, namespace: namespace, status: 201)
            }
        }
    }

    private static func conflict(_ name: String) -> HTTPResponse {
        status(
            409, "Conflict",
            "Operation cannot be fulfilled on configmaps \"\(name)\": the object has been modified; please apply your changes to the latest version and try again")
    }

    /// The object's labels and data, and the `metadata.resourceVersion` it names.
    private static func decode(_ body: [UInt8]) -> (ConfigMap, String?)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let metadata = object["metadata"] as? [String: Any]
        else { return nil }
        let labels = metadata["labels"] as? [String: String] ?? [:]
        guard let data = object["data"] as? [String: String] ?? (object["data"] == nil ? [:] : nil) else { return nil }
        return (ConfigMap(resourceVersion: 0, labels: labels, data: data), metadata["resourceVersion"] as? String)
    }

    private static func objectName(_ body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return nil }
        return (object["metadata"] as? [String: Any])?["name"] as? String
    }

    private static func encode(_ object: ConfigMap, name: String, namespace: String, status: Int) -> HTTPResponse {
        let json: [String: Any] = [
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": [
                "name": name, "namespace": namespace, "resourceVersion": String(object.resourceVersion), "labels": object.labels,
                "uid": "00000000-0000-0000-0000-000000000027",
            ],
            "data": object.data,
        ]
        let body = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data()
        return response(status: status, body: body)
    }

    private static func response(status: Int, body: Data) -> HTTPResponse {
        var response = HTTPResponse(status: status, contentType: "application/json", text: "")
        response.body = [UInt8](body)
        return response
    }

    private static func status(_ code: Int, _ reason: String, _ message: String) -> HTTPResponse {
        let json: [String: Any] = [
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code,
        ]
        let body = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data()
        return response(status: code, body: body)
    }
}
