import ChimeCore
import ChimeJournal
import ChimeTestSupport
import ChimeWire
import Foundation
import HTTPServer
import Synchronization
import Testing

@testable import ChimeCoordinator
@testable import HTTPClient

/// The map register in a Kubernetes ConfigMap, against a stand-in API server on loopback
/// (`KubernetesAPIStandIn`): the file register's compare-and-swap contract over GET, PUT with
/// `resourceVersion` and POST, and the client's errors.
@Suite struct SlotMapRegisterConfigMapTests {
    static let map = SlotMapRegisterFileTests.map
    static let move = SlotMapRegisterFileTests.move

    /// A stand-in that accepts token `t1`, with a register named `chime-shard-map` on it.
    struct Fixture {
        let server: KubernetesAPIStandIn
        let directory: TemporaryDirectory
        let register: SlotMapRegisterConfigMap
        let tokenFile: String

        init(timeout: Double = 5) throws {
            server = try KubernetesAPIStandIn(namespace: "chime")
            server.setFaults { $0.token = "t1" }
            directory = try TemporaryDirectory(prefix: "configmap")
            tokenFile = directory.url.appendingPathComponent("token").path
            try Data("t1\n".utf8).write(to: URL(fileURLWithPath: tokenFile))
            let access = KubernetesAPIAccess(
                baseURL: server.baseURL, tokenFile: tokenFile, certificateAuthorityFile: nil, namespace: "chime", timeout: timeout)
            register = SlotMapRegisterConfigMap(name: "chime-shard-map", access: access)
        }
    }

    /// libcurl's timeout in whole milliseconds: never 0, never a trapping conversion.
    @Test(arguments: [(5.0, 5_000), (0.0004, 1), (-3.0, 1), (1e300, 86_400_000), (Double.infinity, 86_400_000), (Double.nan, 86_400_000)])
    func theTimeoutIsClampedForLibcurl(seconds: Double, milliseconds: Int) {
        #expect(HTTPClient(timeout: seconds).timeoutMilliseconds == milliseconds)
    }

    @Test func createReadAndCompareAndSwap() throws {
        let fixture = try Fixture()
        let register = fixture.register
        #expect(try register.read() == nil)
        #expect(register.stamp() == nil)
        let created = try register.createIfAbsent(map: Self.map)
        #expect(created == SlotMapRecord(map: Self.map))
        #expect(fixture.server.configMap("chime-shard-map")?.labels == ["app.kubernetes.io/name": "chime"])
        let opened = try #require(created.opening(Self.move))
        let stampBefore = try #require(register.stamp())
        #expect(try register.compareAndSwap(expectedVersion: 1, opened))
        #expect(register.stamp() != stampBefore)
        // A second create keeps what is there.
        #expect(try register.createIfAbsent(map: Self.map).version == 2)
        // A stale writer loses; the winner's record is what a reader sees, exactly.
        #expect(try !register.compareAndSwap(expectedVersion: 1, try #require(created.opening(Self.move))))
        let committed = try #require(try register.read()?.committing(Self.move.id))
        #expect(try register.compareAndSwap(expectedVersion: 2, committed))
        let read = try #require(try register.read())
        #expect(read.version == 3)
        #expect(read.outcomes == [Self.move.id: .committed(mapEpoch: 2)])
        #expect(read.map.ownerID(ofSlot: 1) == 2)
        #expect(read.open.isEmpty)
        // The ConfigMap holds the file register's bytes under its one key.
        let stored = try #require(fixture.server.configMap("chime-shard-map")?.data[SlotMapRegisterConfigMap.dataKey])
        #expect(try SlotMapRegisterFile.decode(Data(stored.utf8)) == read)
        // 1 POST, 2 winning PUTs; the losing swap stopped at its GET (version 2, not 1).
        #expect(fixture.server.requests.filter { $0.hasPrefix("PUT") }.count == 2)
        #expect(fixture.server.requests.filter { $0.hasPrefix("POST") } == ["POST /api/v1/namespaces/chime/configmaps"])
    }

    /// Two writers read version 1 and swap at once: the API server's 409 lets exactly one win.
    @Test func ofTwoRacingWritesOnOneVersionExactlyOneWins() throws {
        let fixture = try Fixture()
        let register = fixture.register
        let created = try register.createIfAbsent(map: Self.map)
        for round in 0..<20 {
            let current = try #require(try register.read())
            let moves = (0..<2).map { writer in
                SlotMove(id: SlotMoveID("r\(round)-w\(writer)"), slots: [21 + writer], source: 1, target: 0, slotCount: 64)
            }
            let records = try moves.map { try #require(current.opening($0)?.aborting($0.id)) }
            let wins = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { writer in
                if (try? register.compareAndSwap(expectedVersion: current.version, records[writer])) == true {
                    wins.withLock { $0.append(writer) }
                }
            }
            let winners = wins.withLock { $0 }
            try #require(winners.count == 1, "round \(round): winners \(winners)")
            let after = try #require(try register.read())
            #expect(after.version == current.version + 1)
            #expect(after.outcomes[moves[winners[0]].id] == .aborted)
            #expect(after.outcomes[moves[1 - winners[0]].id] == nil)
        }
        #expect(try register.read()?.version == created.version + 20)
    }

    /// Eight threads each add ten moves, rereading on a lost swap: every write lands once.
    @Test func concurrentWritersEachLandOnce() throws {
        let fixture = try Fixture()
        let register = fixture.register
        try register.createIfAbsent(map: Self.map)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<10 {
                while true {
                    guard let current = try? register.read() else { continue }
                    let id = SlotMoveID("t\(thread)-\(round)")
                    let move = SlotMove(id: id, slots: [21 + thread * 2 + (round % 2)], source: 1, target: 0, slotCount: 64)
                    guard let next = current.opening(move)?.aborting(id) else { return }
                    if (try? register.compareAndSwap(expectedVersion: current.version, next)) == true { break }
                }
            }
        }
        let final = try #require(try register.read())
        #expect(final.version == 81)
        #expect(final.outcomes.count == 80)
        #expect(final.outcomes.values.allSatisfy { $0 == .aborted })
    }

    /// A 409 from a change that left the record alone (a label) is retried on a fresh read;
    /// one that keeps coming is an error, not a lost write reported as a win.
    @Test func aConflictFromAnotherChangeIsRetried() throws {
        let fixture = try Fixture()
        let register = fixture.register
        let created = try register.createIfAbsent(map: Self.map)
        fixture.server.setFaults { $0.conflictingPuts = 3 }
        #expect(try register.compareAndSwap(expectedVersion: 1, try #require(created.opening(Self.move))))
        #expect(try register.read()?.version == 2)
        fixture.server.setFaults { $0.conflictingPuts = 100 }
        let opened = try #require(try register.read())
        #expect(throws: WireError(.unavailable, "")) { try register.compareAndSwap(expectedVersion: 2, try #require(opened.aborting(Self.move.id))) }
        #expect(try register.read()?.version == 2)
    }

    /// A ConfigMap that exists without the key (declared empty by a manifest) gets it by PUT,
    /// keeping its labels and other keys; a POST racing another creator re-reads.
    @Test func anEmptyConfigMapIsFilledAndOtherKeysKept() throws {
        let fixture = try Fixture()
        fixture.server.put("chime-shard-map", labels: ["team": "x"], data: ["note": "kept"])
        #expect(try fixture.register.read() == nil)
        #expect(try fixture.register.createIfAbsent(map: Self.map) == SlotMapRecord(map: Self.map))
        let stored = try #require(fixture.server.configMap("chime-shard-map"))
        #expect(stored.labels == ["team": "x"])
        #expect(stored.data["note"] == "kept")
        #expect(try fixture.register.read() == SlotMapRecord(map: Self.map))
        #expect(fixture.server.requests.filter { $0.hasPrefix("POST") }.isEmpty)
    }

    /// A coordinator starting for a shard the register's map lacks (a StatefulSet scaled up)
    /// joins it with no slots, one epoch higher; a shard that would own slots does not.
    @Test func aNewShardJoinsTheRegistersMapWithNoSlots() throws {
        let fixture = try Fixture()
        let register = fixture.register
        try register.createIfAbsent(map: Self.map)
        var configured = Self.map
        let endpoints = ShardMap.Endpoints(control: "tcp://127.0.0.1:7003", dispatch: "d3", results: "r3", events: "e3", eventsIngest: "i3")
        configured.shards.append(ShardMap.Shard(id: 3, slots: [], endpoints: endpoints))
        let joined = try register.createIfAbsent(map: configured, joining: 3)
        #expect(joined.version == 2)
        #expect(joined.map.mapEpoch == 2)
        #expect(joined.map.shards.map(\.id) == [0, 1, 2, 3])
        #expect(joined.map.shard(id: 3) == ShardMap.Shard(id: 3, slots: [], endpoints: endpoints))
        #expect(try register.read() == joined)
        // Joining again, or starting a shard already in the map, writes nothing.
        #expect(try register.createIfAbsent(map: configured, joining: 3) == joined)
        #expect(try register.createIfAbsent(map: configured, joining: 0) == joined)
        #expect(fixture.server.requests.filter { $0.hasPrefix("PUT") }.count == 1)
        // A shard the configuration does not list, or lists with slots, is refused.
        #expect(throws: WireError(.invalidArgument, "")) { try register.createIfAbsent(map: configured, joining: 4) }
        var owning = Self.map
        owning.shards.append(ShardMap.Shard(id: 5, slots: [ShardMap.SlotRange(0, 0)], endpoints: endpoints))
        let refused = try #require(throws: WireError.self) { try register.createIfAbsent(map: owning, joining: 5) }
        #expect(refused.message == "shard 5 is not in the map of configmap chime/chime-shard-map (epoch 2): list it in the cluster section with \"slots\": [] to join it")
        #expect(try register.read() == joined)
    }

    @Test func refusalsNameTheMissingVerb() throws {
        let fixture = try Fixture()
        let register = fixture.register
        let created = try register.createIfAbsent(map: Self.map)
        fixture.server.setFaults { $0.forbidden = ["update"] }
        let error = try #require(throws: WireError.self) { try register.compareAndSwap(expectedVersion: 1, try #require(created.opening(Self.move))) }
        #expect(error.code == .unavailable)
        #expect(error.message.hasPrefix(
            "configmap chime/chime-shard-map: 403 Forbidden: the service account may not update it (grant the verb \"update\" on configmaps with resourceNames [chime-shard-map] in a Role bound to it): configmaps \"chime-shard-map\" is forbidden"))
        fixture.server.setFaults { $0.forbidden = ["create"] }
        let absent = SlotMapRegisterConfigMap(name: "other", access: register.access)
        let creation = try #require(throws: WireError.self) { try absent.createIfAbsent(map: Self.map) }
        #expect(creation.message.contains("may not create it (grant the verb \"create\" on configmaps in a Role bound to it)"))
        // A rotated token is read again on the next call: the old one is refused, the new one works.
        fixture.server.setFaults {
            $0.forbidden = []
            $0.token = "t2"
        }
        let unauthorized = try #require(throws: WireError.self) { try register.read() }
        #expect(unauthorized.message == "configmap chime/chime-shard-map: 401 Unauthorized for get: the service account token was refused: Unauthorized")
        try Data("t2".utf8).write(to: URL(fileURLWithPath: fixture.tokenFile))
        #expect(try register.read()?.version == 1)
    }

    @Test func aSlowServerTimesOut() throws {
        let fixture = try Fixture(timeout: 0.3)
        fixture.server.setFaults { $0.delay = 1.5 }
        let started = ContinuousClock.now
        let error = try #require(throws: WireError.self) { try fixture.register.read() }
        #expect(ContinuousClock.now - started < .seconds(1.4))
        #expect(error.code == .unavailable)
        #expect(error.message.hasPrefix("configmap chime/chime-shard-map: cannot get (GET \(fixture.server.baseURL)/api/v1/namespaces/chime/configmaps/chime-shard-map timed out"))
    }

    @Test func anAnswerOverTheBoundIsRefused() throws {
        let fixture = try Fixture()
        fixture.server.setFaults { $0.getBody = Data(repeating: 0x20, count: SlotMapRegisterConfigMap.maximumBytes + 1) }
        #expect(throws: WireError(.invalidArgument, "")) { try fixture.register.read() }
        let error = try #require(throws: WireError.self) { try fixture.register.read() }
        #expect(error.message.hasPrefix("configmap chime/chime-shard-map: cannot get (its response is over 16777216 bytes)"))
        // Exactly at the bound it is read (and refused as what it is: not JSON).
        fixture.server.setFaults { $0.getBody = Data(repeating: 0x20, count: SlotMapRegisterConfigMap.maximumBytes) }
        let atBound = try #require(throws: WireError.self) { try fixture.register.read() }
        #expect(atBound.message == "configmap chime/chime-shard-map: the API server's answer is not JSON")
    }

    @Test func garbageIsRefusedNeverATrap() throws {
        let fixture = try Fixture()
        let good = SlotMapRegisterFile.encode(try #require(SlotMapRecord(map: Self.map).opening(Self.move)))
        let answers: [(Data, String)] = [
            (Data("<html>".utf8), "configmap chime/chime-shard-map: the API server's answer is not JSON"),
            (Data("[1]".utf8), "configmap chime/chime-shard-map: the API server's answer is not a ConfigMap with metadata.resourceVersion"),
            (Data(#"{"metadata": {"resourceVersion": 7}}"#.utf8), "configmap chime/chime-shard-map: the API server's answer is not a ConfigMap with metadata.resourceVersion"),
            (Data(#"{"metadata": {"resourceVersion": "7"}, "data": [1]}"#.utf8), "configmap chime/chime-shard-map: data is not an object of strings"),
            (Data(#"{"metadata": {"resourceVersion": "7"}, "data": {"register.json": 5}}"#.utf8), "configmap chime/chime-shard-map: data.register.json is not a string"),
        ]
        for (body, message) in answers {
            fixture.server.setFaults { $0.getBody = body }
            let error = try #require(throws: WireError.self) { try fixture.register.read() }
            #expect(error.code == .invalidArgument)
            #expect(error.message == message)
        }
        // A record that breaks a rule inside a well-formed ConfigMap.
        fixture.server.setFaults { $0.getBody = nil }
        fixture.server.put("chime-shard-map", data: ["register.json": String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"format\" : 1", with: "\"format\" : 2")])
        let wrongFormat = try #require(throws: WireError.self) { try fixture.register.read() }
        #expect(wrongFormat.message == "configmap chime/chime-shard-map key register.json: map register format 2 is not this version's 1")
        // Truncations and damaged bytes of a whole answer: an error or a valid record, never a trap.
        let object: [String: Any] = ["metadata": ["resourceVersion": "9"], "data": ["register.json": String(decoding: good, as: UTF8.self)]]
        let whole = [UInt8](try JSONSerialization.data(withJSONObject: object))
        #expect(try SlotMapRegisterConfigMap.decodeObject(Data(whole), name: "x").record == SlotMapRegisterFile.decode(good))
        for length in stride(from: 0, to: whole.count, by: 5) {
            #expect(throws: WireError.self) { try SlotMapRegisterConfigMap.decodeObject(Data(whole[..<length]), name: "x") }
        }
        var random = SeededRandomNumberGenerator(seed: 27)
        for _ in 0..<500 {
            var damaged = whole
            damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            do { _ = try SlotMapRegisterConfigMap.decodeObject(Data(damaged), name: "x") } catch {}
        }
    }

    @Test func inClusterAccessComesFromTheEnvironment() throws {
        let pod = try KubernetesAPIAccess.inCluster(
            environment: ["KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "CHIME_KUBERNETES_NAMESPACE": "prod"])
        #expect(pod == KubernetesAPIAccess(
            baseURL: "https://10.96.0.1:443", tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
            certificateAuthorityFile: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", namespace: "prod"))
        let ipv6 = try KubernetesAPIAccess.inCluster(environment: ["KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"], namespace: "ns")
        #expect(ipv6.baseURL == "https://[fd00::1]:6443")
        let overridden = try KubernetesAPIAccess.inCluster(
            environment: ["CHIME_KUBERNETES_API": "http://127.0.0.1:9/", "CHIME_KUBERNETES_TOKEN_FILE": "", "CHIME_KUBERNETES_CA_FILE": "/ca.pem"],
            namespace: "chime")
        #expect(overridden == KubernetesAPIAccess(baseURL: "http://127.0.0.1:9", tokenFile: nil, certificateAuthorityFile: "/ca.pem", namespace: "chime"))
        #expect(throws: WireError(.invalidArgument, "")) { try KubernetesAPIAccess.inCluster(environment: [:], namespace: "chime") }
    }

    /// HTTPS with the cluster's own CA: trusted through the CA file, refused without it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") && HTTPServer.supportsTLS, "needs openssl and a TLS libmicrohttpd"))
    func httpsVerifiesAgainstTheCAFile() throws {
        let directory = try TemporaryDirectory(prefix: "configmap-tls")
        let certificate = directory.url.appendingPathComponent("ca.crt").path
        let key = directory.url.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)
        let identity = HTTPTLSIdentity(certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8), keyPEM: try String(contentsOfFile: key, encoding: .utf8))
        let server = try KubernetesAPIStandIn(namespace: "chime", tls: identity)
        #expect(server.baseURL.hasPrefix("https://127.0.0.1:"))
        let trusted = SlotMapRegisterConfigMap(
            name: "m", access: KubernetesAPIAccess(baseURL: server.baseURL, tokenFile: nil, certificateAuthorityFile: certificate, namespace: "chime"))
        #expect(try trusted.createIfAbsent(map: Self.map) == SlotMapRecord(map: Self.map))
        #expect(try trusted.read()?.version == 1)
        let untrusted = SlotMapRegisterConfigMap(
            name: "m", access: KubernetesAPIAccess(baseURL: server.baseURL, tokenFile: nil, certificateAuthorityFile: nil, namespace: "chime"))
        let error = try #require(throws: WireError.self) { try untrusted.read() }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("SSL certificate problem"))
    }
}
