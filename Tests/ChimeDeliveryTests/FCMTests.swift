import ChimeCore
import Foundation
import HTTPClient
import Testing

@testable import ChimeDelivery

@Suite struct FCMTests {
    private let registration = FCMDestination(token: "fcm-registration-token")

    @Test func alertContentMapsToNotificationDataAndAndroidOptions() {
        let content = Content(
            title: "Stand-up", body: "In 5 minutes", sound: "chime.caf", badge: 2,
            userInfo: ["room": .string("4.2"), "n": .integer(7), "tags": .array([.string("a/b")]), "firingId": .string("replaced")],
            category: "MEETING", threadId: "team")
        let attempt = PushFixtures.attempt(content, to: .fcm(registration), expiresAt: PushFixtures.dueAt.addingTimeInterval(90.2))
        let body = FCMMessage.body(attempt: attempt, registration: registration, now: PushFixtures.dueAt, collapseKey: "daily")
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"message":{"android":{"collapse_key":"daily","priority":"high","ttl":"91s"},"apns":{"payload":{"aps":{"badge":2,"category":"MEETING","sound":"chime.caf","thread-id":"team"}}},"data":{"firingId":"alice/r1@2026-12-05T09:00:00.000Z","n":"7","room":"4.2","tags":"[\"a/b\"]"},"notification":{"body":"In 5 minutes","title":"Stand-up"},"token":"fcm-registration-token"}}"#
        )
    }

    @Test func dataOnlyContentIsNormalPriorityWithoutNotificationOrTTL() {
        let attempt = PushFixtures.attempt(Content(userInfo: ["sync": .boolean(true)]), to: .fcm(registration))
        let body = FCMMessage.body(attempt: attempt, registration: registration, now: PushFixtures.dueAt)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"message":{"android":{"priority":"normal"},"data":{"firingId":"alice/r1@2026-12-05T09:00:00.000Z","sync":"true"},"token":"fcm-registration-token"}}"#
        )
    }

    @Test func ttlIsTheTimeLeftRoundedUpAndZeroOncePast() {
        let now = PushFixtures.dueAt
        #expect(FCMMessage.timeToLive(expiresAt: nil, now: now) == nil)
        #expect(FCMMessage.timeToLive(expiresAt: now.addingTimeInterval(-5), now: now) == 0)
        #expect(FCMMessage.timeToLive(expiresAt: now.addingTimeInterval(0.001), now: now) == 1)
        #expect(FCMMessage.timeToLive(expiresAt: now.addingTimeInterval(60 * 86_400), now: now) == Int64(2_419_200))
    }

    private static func googleError(_ code: Int, _ status: String, _ errorCode: String?) -> String {
        let details = errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return #"{"error":{"code":\#(code),"message":"m","status":"\#(status)"\#(details)}}"#
    }

    @Test(arguments: [
        (200, #"{"name":"projects/p/messages/1"}"#, "delivered 200"),
        (404, googleError(404, "NOT_FOUND", "UNREGISTERED"), "refused 404 remove FCM 404 UNREGISTERED m"),
        (400, googleError(400, "INVALID_ARGUMENT", "UNREGISTERED"), "refused 400 remove FCM 400 UNREGISTERED m"),
        (404, "", "refused 404 remove FCM 404 "),
        (400, googleError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"), "refused 400 keep FCM 400 INVALID_ARGUMENT m"),
        (400, googleError(400, "INVALID_ARGUMENT", nil), "refused 400 keep FCM 400 INVALID_ARGUMENT m"),
        (401, googleError(401, "UNAUTHENTICATED", nil), "renew FCM 401 UNAUTHENTICATED m"),
        (401, googleError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR"), "refused 401 keep FCM 401 THIRD_PARTY_AUTH_ERROR m"),
        (403, googleError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH"), "refused 403 keep FCM 403 SENDER_ID_MISMATCH m"),
        (429, googleError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), "retry 429 30 FCM 429 QUOTA_EXCEEDED m"),
        (500, googleError(500, "INTERNAL", "INTERNAL"), "retry 500 30 FCM 500 INTERNAL m"),
        (503, googleError(503, "UNAVAILABLE", "UNAVAILABLE"), "retry 503 30 FCM 503 UNAVAILABLE m"),
        (408, "timeout", "retry 408 30 FCM 408 timeout"),
    ])
    func everyDocumentedAnswerIsClassified(status: Int, body: String, expected: String) {
        let described =
            switch FCMResponse.classify(status: status, body: Data(body.utf8), retryAfter: 30) {
            case .renewAccessToken(let reason): "renew \(reason)"
            case .outcome(let result): describeResult(result)
            }
        #expect(described == expected)
    }

    @Test func assertionCarriesTheServiceAccountsClaims() throws {
        let directory = try PushFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try Self.serviceAccountFile(in: directory, tokenURI: "https://oauth2.example/token")
        let account = try ServiceAccount(contentsOfFile: file)
        #expect(account.clientEmail == "chime@test-project.iam.gserviceaccount.com")
        let client = HTTPSession(client: HTTPClient(timeout: 1))
        let source = try FCMAccessToken(account: account, tokenURL: account.tokenURI, session: client)
        let assertion = try source.assertion(now: PushFixtures.dueAt.addingTimeInterval(0.7))
        #expect(PushFixtures.parts(of: assertion).header == #"{"alg":"RS256","kid":"key-id-1","typ":"JWT"}"#)
        #expect(
            PushFixtures.parts(of: assertion).claims
                == #"{"aud":"https://oauth2.example/token","exp":1796464800,"iat":1796461200,"iss":"chime@test-project.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging"}"#
        )
    }

    @Test func aServiceAccountFileThatIsLooseOrIncompleteIsRefused() throws {
        let directory = try PushFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loose = try Self.serviceAccountFile(in: directory, tokenURI: "https://t", mode: 0o644)
        #expect(throws: CryptoError(.loosePermissions, "")) { try FCMChannel(configuration: FCMConfiguration(serviceAccountFile: loose)) }
        let incomplete = directory.appendingPathComponent("incomplete.json").path
        _ = FileManager.default.createFile(atPath: incomplete, contents: Data(#"{"client_email": "x"}"#.utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: CryptoError(.badKeyFile, "")) { try FCMChannel(configuration: FCMConfiguration(serviceAccountFile: incomplete)) }
    }

    @Test func configurationDecodesItsJSONKeys() throws {
        let json = #"{"serviceAccountFile": "/sa.json", "baseUrl": "https://127.0.0.1:9443", "tokenUrl": "https://127.0.0.1:9443/token", "timeoutSeconds": 3}"#
        #expect(
            try JSONDecoder().decode(FCMConfiguration.self, from: Data(json.utf8))
                == FCMConfiguration(serviceAccountFile: "/sa.json", baseURL: "https://127.0.0.1:9443", tokenURL: "https://127.0.0.1:9443/token", timeout: 3))
    }

    /// A service-account JSON around the test RSA key, mode `mode`.
    static func serviceAccountFile(in directory: URL, tokenURI: String, mode: Int = 0o600) throws -> String {
        let key = try String(contentsOf: PythonRunner.fixture("google-test-key.pem"), encoding: .utf8)
        let object: [String: String] = [
            "type": "service_account", "project_id": "test-project", "private_key_id": "key-id-1", "private_key": key,
            "client_email": "chime@test-project.iam.gserviceaccount.com", "token_uri": tokenURI,
        ]
        let path = directory.appendingPathComponent("service-account.json").path
        _ = FileManager.default.createFile(atPath: path, contents: try JSONSerialization.data(withJSONObject: object), attributes: [.posixPermissions: mode])
        return path
    }
}
