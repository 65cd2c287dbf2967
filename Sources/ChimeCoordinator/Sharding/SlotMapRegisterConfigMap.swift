import ChimeWire
import Foundation
import HTTPClient

/// The map register of a deployment on Kubernetes: the register file's JSON (``SlotMapRecord``'s
/// Codable form) under one key of a ConfigMap, changed only by compare-and-swap.
///
/// Read with `GET /api/v1/namespaces/{namespace}/configmaps/{name}`; written with `PUT` of the
/// object as read, carrying its `metadata.resourceVersion`, which the API server refuses with
/// 409 Conflict when the object changed since (optimistic concurrency, the Kubernetes API
/// conventions' "Concurrency Control and Consistency"); created with `POST` when absent
/// (409 AlreadyExists: another process created it first, so it is read again). A write names
/// the record's `version` it read: it is put only while the object still holds that version,
/// and a 409 caused by another change of the object (a label) is retried on a fresh read.
/// Labels, annotations and other keys of the ConfigMap are kept.
///
/// RBAC: `get` and `update` on this ConfigMap (`resourceNames`), and `create` on configmaps
/// if the process must create it (Kubernetes cannot restrict `create` by name); a 401 or 403
/// names the verb that was refused.
public struct SlotMapRegisterConfigMap: Sendable {
    /// The ConfigMap's key holding the record.
    public static let dataKey = "register.json"
    /// The largest response read, in bytes (16 MiB, the register file's bound; the API server
    /// itself keeps a ConfigMap under 1 MiB).
    public static let maximumBytes = SlotMapRegisterFile.maximumBytes
    /// Writes retried after a 409 that did not change the record, before giving up.
    static let maximumConflictRetries = 8

    /// The ConfigMap's name.
    public let name: String
    /// Where the API server is and how to authenticate.
    public let access: KubernetesAPIAccess

    /// The register in ConfigMap `name` (nothing is read or created yet).
    public init(name: String, access: KubernetesAPIAccess) {
        self.name = name
        self.access = access
    }

    /// `namespace/name`, as logs and errors name the register.
    public var qualifiedName: String { "configmap \(access.namespace)/\(name)" }

    /// The ConfigMap as read: its whole object (kept for a `PUT`), its `resourceVersion`, and
    /// the record under ``dataKey`` (`nil` when the key is absent).
    struct Snapshot {
        var object: [String: Any]
        var resourceVersion: String
        var record: SlotMapRecord?
    }

    /// The record in the ConfigMap, `nil` when there is no ConfigMap or it has no ``dataKey``.
    /// - Throws: `WireError(.unavailable)` when the API server cannot be reached, times out or
    ///   refuses (401/403 name the verb); `WireError(.invalidArgument)` when the object or the
    ///   record does not decode.
    public func read() throws(WireError) -> SlotMapRecord? { try fetch()?.record }

    /// The ConfigMap's `resourceVersion`, which changes with every write (a cheap poll: the
    /// record is not decoded); `nil` when there is no ConfigMap or it does not read.
    public func stamp() -> String? {
        // Dropped deliberately: the poll's caller reads the register on a changed stamp,
        // and that read reports the error.
        try? fetch(decodingRecord: false)?.resourceVersion
    }

    /// Creates the record holding `map` at version 1 unless one exists; returns the register's record.
    /// - Throws: as ``read()``; `WireError(.unavailable)` when the write is refused.
    @discardableResult
    public func createIfAbsent(map: ShardMap) throws(WireError) -> SlotMapRecord {
        let fresh = SlotMapRecord(map: map)
        for _ in 0...Self.maximumConflictRetries {
            if let snapshot = try fetch() {
                if let record = snapshot.record { return record }
                if try put(fresh, over: snapshot) { return fresh }
            } else if try post(fresh) {
                return fresh
            }
        }
        throw WireError(.unavailable, "\(qualifiedName) kept changing while it was created")
    }

    /// Replaces the record with `new` (at `expectedVersion + 1`) if it is still at `expectedVersion`.
    /// - Returns: whether the write won (`false`: another writer changed the record first, or
    ///   there is none).
    /// - Throws: as ``read()``; `WireError(.unavailable)` when the write is refused.
    @discardableResult
    public func compareAndSwap(expectedVersion: UInt64, _ new: SlotMapRecord) throws(WireError) -> Bool {
        var next = new
        next.version = expectedVersion &+ 1
        for _ in 0...Self.maximumConflictRetries {
            guard let snapshot = try fetch(), let current = snapshot.record, current.version == expectedVersion else { return false }
            if try put(next, over: snapshot) { return true }
        }
        throw WireError(.unavailable, "\(qualifiedName) kept changing (409 Conflict \(Self.maximumConflictRetries + 1) times) at version \(expectedVersion)")
    }

    private var objectURL: String { "\(access.baseURL)/api/v1/namespaces/\(Self.pathSegment(access.namespace))/configmaps/\(Self.pathSegment(name))" }
    private var collectionURL: String { "\(access.baseURL)/api/v1/namespaces/\(Self.pathSegment(access.namespace))/configmaps" }

    /// GETs the ConfigMap; `nil` on 404.
    func fetch(decodingRecord: Bool = true) throws(WireError) -> Snapshot? {
        let response = try send("GET", objectURL, verb: "get")
        switch response.status {
        case 200: return try Self.decodeObject(response.body, name: qualifiedName, decodingRecord: decodingRecord)
        case 404: return nil
        default: throw failure(response, verb: "get")
        }
    }

    /// PUTs `record` into the object read; `false` on 409 Conflict (the object changed since).
    private func put(_ record: SlotMapRecord, over snapshot: Snapshot) throws(WireError) -> Bool {
        var object = snapshot.object
        var data = object["data"] as? [String: Any] ?? [:]
        data[Self.dataKey] = String(decoding: SlotMapRegisterFile.encode(record), as: UTF8.self)
        object["data"] = data
        var metadata = object["metadata"] as? [String: Any] ?? [:]
        metadata["resourceVersion"] = snapshot.resourceVersion
        object["metadata"] = metadata
        let response = try send("PUT", objectURL, body: try Self.serialize(object), verb: "update")
        switch response.status {
        case 200, 201: return true
        case 409: return false
        default: throw failure(response, verb: "update")
        }
    }

    /// POSTs a new ConfigMap holding `record`; `false` on 409 AlreadyExists.
    private func post(_ record: SlotMapRecord) throws(WireError) -> Bool {
        let object: [String: Any] = [
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": ["name": name, "namespace": access.namespace, "labels": ["app.kubernetes.io/name": "chime"]],
            "data": [Self.dataKey: String(decoding: SlotMapRegisterFile.encode(record), as: UTF8.self)],
        ]
        let response = try send("POST", collectionURL, body: try Self.serialize(object), verb: "create")
        switch response.status {
        case 200, 201, 202: return true
        case 409: return false
        default: throw failure(response, verb: "create")
        }
    }

    private func send(_ method: String, _ url: String, body: Data? = nil, verb: String) throws(WireError) -> HTTPClient.Response {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        if let authorization = try access.authorization() { headers.append(("Authorization", authorization)) }
        let client = HTTPClient(timeout: access.timeout, certificateAuthorityFile: access.certificateAuthorityFile, maximumResponseBytes: Self.maximumBytes)
        do {
            return try client.send(HTTPClient.Request(method: method, url: url, headers: headers, body: body))
        } catch {
            let reason = error.code == .tooLarge ? "its response is over \(Self.maximumBytes) bytes" : error.message
            throw WireError(error.code == .tooLarge ? .invalidArgument : .unavailable, "\(qualifiedName): cannot \(verb) (\(reason))")
        }
    }

    /// The error for an unexpected status, naming the RBAC verb on 401/403.
    private func failure(_ response: HTTPClient.Response, verb: String) -> WireError {
        let status = Self.statusMessage(response.body)
        switch response.status {
        case 401:
            return WireError(.unavailable, "\(qualifiedName): 401 Unauthorized for \(verb): the service account token was refused\(status)")
        case 403:
            return WireError(
                .unavailable,
                "\(qualifiedName): 403 Forbidden: the service account may not \(verb) it (grant the verb \"\(verb)\" on configmaps\(verb == "create" ? "" : " with resourceNames [\(name)]") in a Role bound to it)\(status)")
        default:
            return WireError(.unavailable, "\(qualifiedName): \(verb) answered HTTP \(response.status)\(status)")
        }
    }

    /// Decodes a ConfigMap object as the API server returns it.
    /// - Throws: `WireError(.invalidArgument)` for anything but a JSON object with a string
    ///   `metadata.resourceVersion` and string `data` values, or a record that does not decode.
    static func decodeObject(_ body: Data, name: String, decodingRecord: Bool = true) throws(WireError) -> Snapshot {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: body)
        } catch {
            throw WireError(.invalidArgument, "\(name): the API server's answer is not JSON")
        }
        guard let object = parsed as? [String: Any], let metadata = object["metadata"] as? [String: Any],
            let resourceVersion = metadata["resourceVersion"] as? String, !resourceVersion.isEmpty
        else {
            throw WireError(.invalidArgument, "\(name): the API server's answer is not a ConfigMap with metadata.resourceVersion")
        }
        var snapshot = Snapshot(object: object, resourceVersion: resourceVersion, record: nil)
        guard decodingRecord, let dataValue = object["data"], !(dataValue is NSNull) else { return snapshot }
        guard let data = dataValue as? [String: Any] else { throw WireError(.invalidArgument, "\(name): data is not an object of strings") }
        guard let text = data[dataKey] else { return snapshot }
        guard let text = text as? String else { throw WireError(.invalidArgument, "\(name): data.\(dataKey) is not a string") }
        snapshot.record = try SlotMapRegisterFile.decode(Data(text.utf8), path: "\(name) key \(dataKey)")
        return snapshot
    }

    /// The `message` of a Kubernetes `Status` body, as ": message", or "".
    static func statusMessage(_ body: Data) -> String {
        guard body.count <= 64 << 10, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let message = object["message"] as? String
        else { return "" }
        return ": \(message.prefix(500))"
    }

    private static func serialize(_ object: [String: Any]) throws(WireError) -> Data {
        do {
            return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        } catch {
            throw WireError(.invalidArgument, "the ConfigMap does not encode as JSON: \(error)")
        }
    }

    /// A namespace or name as one URL path segment (DNS-1123 names need no escaping; anything
    /// else is percent-encoded rather than trusted).
    private static func pathSegment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
