import ChimeCore
import ChimeTestSupport
import Foundation
import HTTPClient
import Synchronization
import Testing

@testable import ChimeDelivery

/// A clock the tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var reading: @Sendable () -> Date { { [self] in now } }
}

/// The APNs and FCM channels against the Python stand-in: HTTP/2 over TLS, JWTs verified by
/// pyjwt, the providers' documented answers.
@Suite(
    .serialized,
    .enabled(if: PushProviderStandIn.isAvailable, "needs python3 with pyjwt[crypto], hypercorn and h2 (scripts/install-deps.sh --test)"))
final class PushStandInTests {
    let directory: URL
    let standIn: PushProviderStandIn
    let apnsKey: String
    let serviceAccount: String
    let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
    let control: HTTPSession

    init() throws {
        directory = try PushFixtures.temporaryDirectory()
        apnsKey = try PushFixtures.keyFile("apns-test-key.p8", in: directory)
        let googleKey = try PushFixtures.keyFile("google-test-key.pem", in: directory)
        standIn = try PushProviderStandIn(
            directory: directory, apnsKey: apnsKey, keyID: "KEY1234567", teamID: "TEAM123456", googleKey: googleKey,
            clientEmail: "chime@test-project.iam.gserviceaccount.com")
        serviceAccount = try FCMTests.serviceAccountFile(in: directory, tokenURI: "\(standIn.baseURL)/token")
        control = HTTPSession(client: HTTPClient(timeout: 10, certificateAuthorityFile: standIn.certificateFile, httpVersion: .http2))
    }

    deinit {
        standIn.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func apnsChannel() throws -> APNsChannel {
        try APNsChannel(
            configuration: APNsConfiguration(
                keyFile: apnsKey, keyID: "KEY1234567", teamID: "TEAM123456", productionURL: standIn.baseURL, sandboxURL: standIn.baseURL + "/",
                timeout: 10, certificateAuthorityFile: standIn.certificateFile),
            now: clock.reading)
    }

    private func fcmChannel() throws -> FCMChannel {
        try FCMChannel(
            configuration: FCMConfiguration(
                serviceAccountFile: serviceAccount, baseURL: standIn.baseURL, timeout: 10, certificateAuthorityFile: standIn.certificateFile),
            now: clock.reading)
    }

    private func script(_ route: String, _ responses: [[String: Any]]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["route": route, "responses": responses])
        let response = try control.send(HTTPClient.Request(method: "POST", url: "\(standIn.baseURL)/_script", body: body))
        #expect(response.status == 200)
    }

    private func configure(_ settings: [String: Any]) throws {
        let body = try JSONSerialization.data(withJSONObject: settings)
        #expect(try control.send(HTTPClient.Request(method: "POST", url: "\(standIn.baseURL)/_config", body: body)).status == 200)
    }

    /// What the stand-in received, oldest first.
    private func received() throws -> [[String: Any]] {
        let response = try control.send(HTTPClient.Request(method: "GET", url: "\(standIn.baseURL)/_requests"))
        return (try JSONSerialization.jsonObject(with: response.body) as? [[String: Any]]) ?? []
    }

    private static func json(_ value: Any?) -> String {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "none"
        }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func httpSessionSpeaksHTTP2KeepsHeadersAndReusesItsConnection() throws {
        let session = HTTPSession(client: HTTPClient(timeout: 10, certificateAuthorityFile: standIn.certificateFile, httpVersion: .http2))
        let first = try session.send(HTTPClient.Request(method: "GET", url: "\(standIn.baseURL)/_requests"))
        let second = try session.send(HTTPClient.Request(method: "GET", url: "\(standIn.baseURL)/_requests"))
        #expect(first.status == 200 && second.status == 200)
        #expect(first.httpVersion == 2)
        #expect(first.header("Content-Type") == "application/json")
        #expect(first.connectionsOpened == 1)
        #expect(second.connectionsOpened == 0)
        #expect(throws: HTTPClientError(.tls, "")) {
            try HTTPClient(timeout: 10, httpVersion: .http2).send(HTTPClient.Request(method: "GET", url: "\(self.standIn.baseURL)/_requests"))
        }
    }

    @Test func apnsDeliversWithAVerifiedProviderTokenAndExactHeaders() throws {
        let channel = try apnsChannel()
        let content = Content(title: "Stand-up", body: "In 5 minutes", sound: "default", badge: 1, userInfo: ["room": .string("4.2")])
        let expiresAt = clock.now.addingTimeInterval(600)
        let result = channel.deliver(PushFixtures.attempt(content, to: PushFixtures.device(.sandbox), expiresAt: expiresAt))
        #expect(result == .delivered(status: 200), "\(standIn.log)")
        let request = try #require(try received().last)
        let headers = request["headers"] as? [String: String] ?? [:]
        #expect(request["path"] as? String == "/3/device/\(PushFixtures.deviceToken)")
        #expect(request["httpVersion"] as? String == "2")
        #expect(Self.json((request["jwt"] as? [String: Any])?["header"]) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(Self.json((request["jwt"] as? [String: Any])?["claims"]) == #"{"iat":\#(Int(clock.now.timeIntervalSince1970)),"iss":"TEAM123456"}"#)
        #expect(headers["apns-topic"] == "com.example.app")
        #expect(headers["apns-push-type"] == "alert")
        #expect(headers["apns-priority"] == "10")
        #expect(headers["apns-expiration"] == String(Int(expiresAt.timeIntervalSince1970)))
        #expect(headers["apns-id"] == "e63a1780-4758-8f80-a852-07e1164ffa14")
        #expect(
            Self.json(request["body"])
                == #"{"aps":{"alert":{"body":"In 5 minutes","title":"Stand-up"},"badge":1,"sound":"default"},"room":"4.2"}"#)
    }

    @Test func apnsDocumentedErrorsAreClassified() throws {
        let channel = try apnsChannel()
        try script(
            "apns",
            [
                ["status": 400, "body": ["reason": "BadDeviceToken"]],
                ["status": 410, "body": ["reason": "Unregistered", "timestamp": 1_700_000_000_000]],
                ["status": 429, "body": ["reason": "TooManyRequests"], "headers": ["retry-after": "7"]],
                ["status": 503, "body": ["reason": "ServiceUnavailable"]],
                ["status": 413, "body": ["reason": "PayloadTooLarge"]],
            ])
        let attempt = PushFixtures.attempt(Content(body: "x"), to: PushFixtures.device())
        let results = (0..<5).map { _ in describeResult(channel.deliver(attempt)) }
        #expect(
            results == [
                "refused 400 remove APNs 400 BadDeviceToken", "refused 410 remove APNs 410 Unregistered", "retry 429 7 APNs 429 TooManyRequests",
                "retry 503 - APNs 503 ServiceUnavailable", "refused 413 keep APNs 413 PayloadTooLarge",
            ])
    }

    @Test func apnsRenewsAnExpiredProviderTokenOnlyOnceItIsTwentyMinutesOld() throws {
        let channel = try apnsChannel()
        let attempt = PushFixtures.attempt(Content(body: "x"), to: PushFixtures.device())
        let start = Int(clock.now.timeIntervalSince1970)
        #expect(channel.deliver(attempt) == .delivered(status: 200))
        try configure(["apnsMinimumIat": start + 1])
        clock.advance(by: 5 * 60)
        #expect(describeResult(channel.deliver(attempt)) == "retry 403 - APNs 403 ExpiredProviderToken", "a token younger than 20 minutes is kept")
        clock.advance(by: 20 * 60)
        #expect(channel.deliver(attempt) == .delivered(status: 200))
        let answered = try received().map { "\(($0["jwt"] as? [String: Any])?["claims"].map(Self.json) ?? "none") \($0["answered"] ?? "")" }
        #expect(
            answered == [
                #"{"iat":\#(start),"iss":"TEAM123456"} 200"#, #"{"iat":\#(start),"iss":"TEAM123456"} 403"#,
                #"{"iat":\#(start),"iss":"TEAM123456"} 403"#, #"{"iat":\#(start + 25 * 60),"iss":"TEAM123456"} 200"#,
            ])
    }

    @Test func fcmExchangesAVerifiedAssertionOnceAndSends() throws {
        let channel = try fcmChannel()
        let content = Content(title: "Stand-up", body: "In 5 minutes", userInfo: ["room": .string("4.2")])
        let attempt = PushFixtures.attempt(content, to: .fcm(FCMDestination(token: "registration-1")), expiresAt: clock.now.addingTimeInterval(120))
        #expect(channel.deliver(attempt) == .delivered(status: 200), "\(standIn.log)")
        #expect(channel.deliver(attempt) == .delivered(status: 200))
        clock.advance(by: 3599 - 300)
        #expect(channel.deliver(attempt) == .delivered(status: 200), "renewed within five minutes of its expiry")
        let requests = try received()
        #expect(
            requests.map { "\($0["path"] ?? "") \(($0["headers"] as? [String: String])?["authorization"] ?? "")" } == [
                "/token ", "/v1/projects/test-project/messages:send Bearer ya29.stand-in-1",
                "/v1/projects/test-project/messages:send Bearer ya29.stand-in-1", "/token ",
                "/v1/projects/test-project/messages:send Bearer ya29.stand-in-2",
            ])
        let assertion = try #require(requests.first?["jwt"] as? [String: Any])
        let issuedAt = Int(clock.now.timeIntervalSince1970) - (3599 - 300)
        #expect(Self.json(assertion["header"]) == #"{"alg":"RS256","kid":"key-id-1","typ":"JWT"}"#)
        #expect(
            Self.json(assertion["claims"])
                == #"{"aud":"\#(standIn.baseURL)/token","exp":\#(issuedAt + 3600),"iat":\#(issuedAt),"iss":"chime@test-project.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging"}"#
        )
        #expect(
            Self.json(requests[1]["body"])
                == #"{"message":{"android":{"priority":"high","ttl":"120s"},"data":{"firingId":"alice/r1@2026-12-05T09:00:00.000Z","room":"4.2"},"notification":{"body":"In 5 minutes","title":"Stand-up"},"token":"registration-1"}}"#
        )
    }

    @Test func fcmRenewsARevokedAccessTokenAndClassifiesGooglesErrors() throws {
        let channel = try fcmChannel()
        let attempt = PushFixtures.attempt(Content(body: "x"), to: .fcm(FCMDestination(token: "registration-1")))
        #expect(channel.deliver(attempt) == .delivered(status: 200))
        try configure(["revokeAccessTokens": true])
        #expect(channel.deliver(attempt) == .delivered(status: 200))
        #expect(try received().map { "\($0["path"] ?? "") \($0["answered"] ?? "")" }.suffix(3) == [
            "/v1/projects/test-project/messages:send 401", "/token 200", "/v1/projects/test-project/messages:send 200",
        ])
        func googleError(_ code: Int, _ status: String, _ errorCode: String) -> [String: Any] {
            [
                "error": [
                    "code": code, "message": "m", "status": status,
                    "details": [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode]],
                ]
            ]
        }
        try script(
            "fcm",
            [
                ["status": 404, "body": googleError(404, "NOT_FOUND", "UNREGISTERED")],
                ["status": 400, "body": googleError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT")],
                ["status": 429, "body": googleError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), "headers": ["retry-after": "3"]],
                ["status": 503, "body": googleError(503, "UNAVAILABLE", "UNAVAILABLE")],
            ])
        let results = (0..<4).map { _ in describeResult(channel.deliver(attempt)) }
        #expect(
            results == [
                "refused 404 remove FCM 404 UNREGISTERED m", "refused 400 keep FCM 400 INVALID_ARGUMENT m", "retry 429 3 FCM 429 QUOTA_EXCEEDED m",
                "retry 503 - FCM 503 UNAVAILABLE m",
            ])
    }

    @Test func aRefusedAssertionOrAnUnreachableHostIsARetryThatSaysWhy() throws {
        try script("token", [["status": 400, "body": ["error": "invalid_grant", "error_description": "Invalid JWT Signature."]]])
        let attempt = PushFixtures.attempt(Content(body: "x"), to: .fcm(FCMDestination(token: "registration-1")))
        let result = try fcmChannel().deliver(attempt)
        #expect(
            describeResult(result)
                == #"retry - - FCM OAuth token exchange at \#(standIn.baseURL)/token: 400 {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}"#)
        let closed = try APNsChannel(
            configuration: APNsConfiguration(
                keyFile: apnsKey, keyID: "KEY1234567", teamID: "TEAM123456", productionURL: "https://127.0.0.1:1", timeout: 5),
            now: clock.reading)
        guard case .retry(nil, let reason, nil) = closed.deliver(PushFixtures.attempt(Content(body: "x"), to: PushFixtures.device())) else {
            Issue.record("an unreachable APNs host is not a retry")
            return
        }
        #expect(reason.hasPrefix("APNs: POST https://127.0.0.1:1/3/device/"))
    }
}
