import ChimeCore
import Foundation
import Testing

@testable import ChimeDelivery

/// Attempts, keys and files the push tests share.
enum PushFixtures {
    static let dueAt = Date(timeIntervalSince1970: 1_796_461_200)  // 2026-12-05T09:00:00Z
    static let deviceToken = String(repeating: "ab", count: 32)

    static func attempt(_ content: Content, to destination: Destination, expiresAt: Date? = nil) -> DeliveryAttempt {
        let firing = Firing(reminderId: "r1", recipient: "alice", dueAt: dueAt, content: content)
        return DeliveryAttempt(firing: firing, eventJSON: Data("{}".utf8), content: content, destination: destination, number: 1, expiresAt: expiresAt)
    }

    static func device(_ environment: APNsDestination.Environment = .production) -> Destination {
        .apns(APNsDestination(token: deviceToken, topic: "com.example.app", environment: environment))
    }

    /// `fixture` copied into `directory` with `mode`.
    static func keyFile(_ fixture: String, in directory: URL, mode: Int = 0o600) throws -> String {
        let path = directory.appendingPathComponent(fixture).path
        try FileManager.default.copyItem(atPath: PythonRunner.fixture(fixture).path, toPath: path)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A JWT's header and claims as text.
    static func parts(of token: String) -> (header: String, claims: String) {
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3 else { return ("", "") }
        return (
            String(decoding: Base64.decodeURL(parts[0]) ?? Data(), as: UTF8.self), String(decoding: Base64.decodeURL(parts[1]) ?? Data(), as: UTF8.self)
        )
    }
}

@Suite struct APNsTests {
    private func text(_ headers: [(name: String, value: String)]) -> [String] { headers.map { "\($0.name): \($0.value)" } }

    @Test func alertContentMapsToAlertHeadersAndApsPayload() throws {
        let content = Content(
            title: "Stand-up", body: "In 5 minutes", launchImage: "Launch", sound: "default", badge: 3,
            userInfo: ["room": .string("4.2"), "n": .integer(7), "aps": .string("dropped")], category: "MEETING", threadId: "team")
        let attempt = PushFixtures.attempt(content, to: PushFixtures.device(), expiresAt: Date(timeIntervalSince1970: 1_796_464_800.9))
        guard case .apns(let device) = attempt.destination else { Issue.record("not apns"); return }
        let notification = APNsNotification(attempt: attempt, device: device, apnsID: "0a0b0c0d-0000-8000-8000-000000000000")
        #expect(notification.path == "/3/device/\(PushFixtures.deviceToken)")
        #expect(
            text(notification.headers) == [
                "apns-topic: com.example.app", "apns-push-type: alert", "apns-priority: 10", "apns-expiration: 1796464800",
                "apns-id: 0a0b0c0d-0000-8000-8000-000000000000",
            ])
        #expect(
            String(decoding: notification.body, as: UTF8.self)
                == #"{"aps":{"alert":{"body":"In 5 minutes","launch-image":"Launch","title":"Stand-up"},"badge":3,"category":"MEETING","sound":"default","thread-id":"team"},"n":7,"room":"4.2"}"#
        )
    }

    @Test func contentWithoutAlertSoundOrBadgeIsABackgroundPushAtPriorityFive() {
        let attempt = PushFixtures.attempt(Content(userInfo: ["sync": .boolean(true)]), to: PushFixtures.device())
        guard case .apns(let device) = attempt.destination else { Issue.record("not apns"); return }
        let notification = APNsNotification(attempt: attempt, device: device, apnsID: "id", collapseID: "daily")
        #expect(
            text(notification.headers) == [
                "apns-topic: com.example.app", "apns-push-type: background", "apns-priority: 5", "apns-expiration: 0", "apns-id: id",
                "apns-collapse-id: daily",
            ])
        #expect(String(decoding: notification.body, as: UTF8.self) == #"{"aps":{"content-available":1},"sync":true}"#)
    }

    @Test(arguments: [(BadgeChange.set(4), "4"), (.set(-1), "0"), (.set(0), "none"), (.increment, "none")])
    func badgeFollowsTheIOSRule(change: BadgeChange, expected: String) {
        #expect(APNsNotification.badge(change).map(String.init) ?? "none" == expected)
    }

    @Test func apnsIDIsAVersion8UUIDOfTheFiringAndTheSameOnEveryAttempt() throws {
        let firing = Firing(reminderId: "r1", recipient: "alice", dueAt: PushFixtures.dueAt, content: Content()).firingId
        // python3: sha256(b"chime/apns-id/alice/r1@2026-12-05T09:00:00.000Z")[:16], byte 6 = 0x8_, byte 8 = 0b10______
        #expect(firing.text == "alice/r1@2026-12-05T09:00:00.000Z")
        let id = try APNsNotification.apnsID(for: firing)
        #expect(id == "e63a1780-4758-8f80-a852-07e1164ffa14")
        #expect(try APNsNotification.apnsID(for: firing) == id)
        let nag = FiringID(nag: 1, of: firing)
        #expect(try APNsNotification.apnsID(for: nag) != id)
    }

    @Test(arguments: [
        (200, "", "delivered 200"),
        (400, #"{"reason":"BadDeviceToken"}"#, "refused 400 remove APNs 400 BadDeviceToken"),
        (400, #"{"reason":"DeviceTokenNotForTopic"}"#, "refused 400 keep APNs 400 DeviceTokenNotForTopic"),
        (400, #"{"reason":"BadCollapseId"}"#, "refused 400 keep APNs 400 BadCollapseId"),
        (400, #"{"reason":"PayloadEmpty"}"#, "refused 400 keep APNs 400 PayloadEmpty"),
        (400, #"{"reason":"TopicDisallowed"}"#, "refused 400 keep APNs 400 TopicDisallowed"),
        (403, #"{"reason":"ExpiredProviderToken"}"#, "renew APNs 403 ExpiredProviderToken"),
        (403, #"{"reason":"InvalidProviderToken"}"#, "renew APNs 403 InvalidProviderToken"),
        (403, #"{"reason":"BadCertificateEnvironment"}"#, "refused 403 keep APNs 403 BadCertificateEnvironment"),
        (404, #"{"reason":"BadPath"}"#, "refused 404 keep APNs 404 BadPath"),
        (405, #"{"reason":"MethodNotAllowed"}"#, "refused 405 keep APNs 405 MethodNotAllowed"),
        (410, #"{"reason":"Unregistered","timestamp":1700000000000}"#, "refused 410 remove APNs 410 Unregistered"),
        (410, #"{"reason":"ExpiredToken"}"#, "refused 410 remove APNs 410 ExpiredToken"),
        (413, #"{"reason":"PayloadTooLarge"}"#, "refused 413 keep APNs 413 PayloadTooLarge"),
        (429, #"{"reason":"TooManyProviderTokenUpdates"}"#, "retry 429 30 APNs 429 TooManyProviderTokenUpdates"),
        (429, #"{"reason":"TooManyRequests"}"#, "retry 429 30 APNs 429 TooManyRequests"),
        (500, #"{"reason":"InternalServerError"}"#, "retry 500 30 APNs 500 InternalServerError"),
        (503, #"{"reason":"ServiceUnavailable"}"#, "retry 503 30 APNs 503 ServiceUnavailable"),
        (503, #"{"reason":"Shutdown"}"#, "retry 503 30 APNs 503 Shutdown"),
        (502, "<html>bad gateway</html>", "retry 502 30 APNs 502 <html>bad gateway</html>"),
    ])
    func everyDocumentedAnswerIsClassified(status: Int, body: String, expected: String) {
        #expect(describe(APNsResponse.classify(status: status, body: Data(body.utf8), retryAfter: 30)) == expected)
    }

    private func describe(_ response: APNsResponse) -> String {
        switch response {
        case .renewProviderToken(let reason): "renew \(reason)"
        case .outcome(let result): describeResult(result)
        }
    }

    @Test func providerTokenIsReusedForFiftyMinutesAndRenewedOnRefusalOnlyAfterTwenty() throws {
        let key = try SigningKey(pem: String(contentsOf: PythonRunner.fixture("apns-test-key.p8"), encoding: .utf8), algorithm: .es256)
        let source = APNsProviderToken(key: key, keyID: "KEY1234567", teamID: "TEAM123456")
        let start = PushFixtures.dueAt
        let first = try source.token(now: start)
        #expect(PushFixtures.parts(of: first).header == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(PushFixtures.parts(of: first).claims == #"{"iat":1796461200,"iss":"TEAM123456"}"#)
        #expect(try source.token(now: start.addingTimeInterval(49 * 60)) == first)
        #expect(!source.refused(first, now: start.addingTimeInterval(19 * 60)))
        #expect(try source.token(now: start.addingTimeInterval(19 * 60)) == first)
        #expect(source.refused(first, now: start.addingTimeInterval(20 * 60)))
        let second = try source.token(now: start.addingTimeInterval(20 * 60))
        #expect(PushFixtures.parts(of: second).claims == #"{"iat":1796462400,"iss":"TEAM123456"}"#)
        #expect(source.refused(first, now: start.addingTimeInterval(20 * 60)), "an old token refused after it was replaced: send with the new one")
        let third = try source.token(now: start.addingTimeInterval(70 * 60))
        #expect(PushFixtures.parts(of: third).claims == #"{"iat":1796465400,"iss":"TEAM123456"}"#)
    }

    @Test func aKeyFileOthersCanReadIsRefused() throws {
        let directory = try PushFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loose = try PushFixtures.keyFile("apns-test-key.p8", in: directory, mode: 0o640)
        #expect(throws: CryptoError(.loosePermissions, "")) {
            try APNsChannel(configuration: APNsConfiguration(keyFile: loose, keyID: "KEY1234567", teamID: "TEAM123456"))
        }
        #expect(throws: CryptoError(.badKeyFile, "")) {
            try APNsChannel(configuration: APNsConfiguration(keyFile: directory.appendingPathComponent("absent.p8").path, keyID: "K", teamID: "T"))
        }
        let rsa = try PushFixtures.keyFile("google-test-key.pem", in: directory)
        #expect(throws: CryptoError(.wrongKeyType, "")) { try APNsChannel(configuration: APNsConfiguration(keyFile: rsa, keyID: "K", teamID: "T")) }
    }

    @Test func configurationDecodesItsJSONKeysWithAppleHostsByDefault() throws {
        let json = #"{"keyFile": "/k.p8", "keyId": "KEY1234567", "teamId": "TEAM123456", "sandboxUrl": "https://127.0.0.1:9443/"}"#
        let configuration = try JSONDecoder().decode(APNsConfiguration.self, from: Data(json.utf8))
        #expect(configuration == APNsConfiguration(keyFile: "/k.p8", keyID: "KEY1234567", teamID: "TEAM123456", sandboxURL: "https://127.0.0.1:9443/"))
        #expect(configuration.baseURL(for: .production) == "https://api.push.apple.com")
        #expect(configuration.baseURL(for: .sandbox) == "https://127.0.0.1:9443")
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_445_412_400)  // Wed, 21 Oct 2015 07:26:40 GMT
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 80)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("99999999999999999999999", now: now) == 86_400)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        // Non-ASCII never reaches DateFormatter, which trapped on a letter with a combining
        // mark (the provider fuzz target's finding); over-long text neither.
        #expect(RetryAfter.seconds("W\u{064D}", now: now) == nil)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2015 07:28:00 GMT\u{0301}", now: now) == nil)
        #expect(RetryAfter.seconds(String(repeating: "Wed, ", count: 20), now: now) == nil)
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }
}

/// A result as one line, for tables.
func describeResult(_ result: DeliveryResult) -> String {
    switch result {
    case .delivered(let status): "delivered \(status)"
    case .refused(let status, let reason, let removes): "refused \(status.map(String.init) ?? "-") \(removes ? "remove" : "keep") \(reason)"
    case .retry(let status, let reason, let retryAfter):
        "retry \(status.map(String.init) ?? "-") \(retryAfter.map { String(Int($0)) } ?? "-") \(reason)"
    }
}

/// The UserNotifications fields of issue 40 reach the APNs payload and headers as Apple
/// names them, and FCM's collapse key.
@Suite struct PushAttentionMappingTests {
    @Test func subtitleLevelScoreTargetCriteriaAndCollapseKeyAreMapped() throws {
        var content = Content(title: "Standup", body: "in 5 minutes")
        content.subtitle = "Room 4"
        content.interruptionLevel = .timeSensitive
        content.relevanceScore = 0.75
        content.targetContentIdentifier = "meeting-17"
        content.filterCriteria = "work"
        content.collapseKey = "standup"
        let firing = Firing(reminderId: ReminderID("r"), recipient: RecipientID("alice"), dueAt: Date(timeIntervalSince1970: 1_800_000_000), content: content)
        let token = String(repeating: "ab", count: 32)
        let attempt = DeliveryAttempt(
            firing: firing, eventJSON: Data(), content: content, destination: .apns(APNsDestination(token: token, topic: "com.example.app")), number: 1)
        let notification = APNsNotification(attempt: attempt, device: APNsDestination(token: token, topic: "com.example.app"), apnsID: "id")
        #expect(notification.headers.last.map { "\($0.name): \($0.value)" } == "apns-collapse-id: standup")
        let aps = try #require((try JSONSerialization.jsonObject(with: notification.body) as? [String: Any])?["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: String]) == ["title": "Standup", "subtitle": "Room 4", "body": "in 5 minutes"])
        #expect(aps["interruption-level"] as? String == "time-sensitive")
        #expect(aps["relevance-score"] as? Double == 0.75)
        #expect(aps["target-content-id"] as? String == "meeting-17")
        #expect(aps["filter-criteria"] as? String == "work")
        let fcm = FCMMessage.body(attempt: attempt, registration: FCMDestination(token: "t"), now: Date(timeIntervalSince1970: 1_800_000_000))
        let android = try #require(
            ((try JSONSerialization.jsonObject(with: fcm) as? [String: Any])?["message"] as? [String: Any])?["android"] as? [String: Any])
        #expect(android["collapse_key"] as? String == "standup")
        // The default level adds nothing: payloads of reminders without the new fields are as before.
        var plain = content
        plain.interruptionLevel = .active
        plain.subtitle = nil
        plain.relevanceScore = nil
        plain.targetContentIdentifier = nil
        plain.filterCriteria = nil
        let plainAPS = APNsNotification.payload(plain, isBackground: false)
        #expect(!String(decoding: plainAPS.data, as: UTF8.self).contains("interruption-level"))
    }

    @Test func criticalVolumeAttachmentsAndImageAreMapped() throws {
        let token = String(repeating: "ab", count: 32)
        let device = APNsDestination(token: token, topic: "com.example.app")
        func payloads(_ content: Content) throws -> (apns: [String: Any], fcm: [String: Any]) {
            let firing = Firing(reminderId: ReminderID("r"), recipient: RecipientID("alice"), dueAt: Date(timeIntervalSince1970: 1_800_000_000), content: content)
            let attempt = DeliveryAttempt(firing: firing, eventJSON: Data(), content: content, destination: .apns(device), number: 1)
            let apns = APNsNotification(attempt: attempt, device: device, apnsID: "id")
            let fcm = FCMMessage.body(attempt: attempt, registration: FCMDestination(token: "t"), now: Date(timeIntervalSince1970: 1_800_000_000))
            return (try #require(try JSONSerialization.jsonObject(with: apns.body) as? [String: Any]),
                    try #require((try JSONSerialization.jsonObject(with: fcm) as? [String: Any])?["message"] as? [String: Any]))
        }
        let clip = NotificationAttachment(identifier: "clip", url: "https://example.com/c.mp4", type: "video/mp4", size: 2000)
        let map = NotificationAttachment(identifier: "map", url: "https://example.com/m.png", type: "public.png", size: 1000)
        let critical = Content(title: "Flood", sound: "siren.caf", interruptionLevel: .critical, attachments: [clip, map], soundVolume: 0.8)
        let (apns, fcm) = try payloads(critical)
        let aps = try #require(apns["aps"] as? [String: Any])
        let sound = try #require(aps["sound"] as? [String: Any])
        #expect(sound["critical"] as? Int == 1 && sound["name"] as? String == "siren.caf" && sound["volume"] as? Double == 0.8)
        #expect(aps["mutable-content"] as? Int == 1)
        let listed = try #require(apns[APNsNotification.attachmentsKey] as? [[String: Any]])
        #expect(listed.map { $0["identifier"] as? String } == ["clip", "map"])
        #expect(listed.first?["url"] as? String == "https://example.com/c.mp4" && listed.first?["size"] as? Int == 2000)
        #expect((fcm["notification"] as? [String: String]) == ["title": "Flood", "image": "https://example.com/m.png"], "the first image, not the movie")
        // Not delivered as critical (the grant was missing): the plain sound name, no critical dictionary.
        var demoted = critical
        demoted.interruptionLevel = .active
        demoted.attachments = nil
        let plain = try payloads(demoted)
        let plainAPS = try #require(plain.apns["aps"] as? [String: Any])
        #expect(plainAPS["sound"] as? String == "siren.caf")
        #expect(plainAPS["mutable-content"] == nil && plain.apns[APNsNotification.attachmentsKey] == nil)
        #expect((plain.fcm["notification"] as? [String: String]) == ["title": "Flood"])
    }
}
