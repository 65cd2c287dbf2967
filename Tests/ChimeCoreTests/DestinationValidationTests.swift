import ChimeCore
import Foundation
import Testing

@Suite struct DestinationValidationTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test(arguments: [
        ("ftp://example.com/hook", "destinations[0].url"),
        ("https://", "destinations[0].url"),
        ("https://user:pw@example.com/", "destinations[0].url"),
        ("example.com/hook", "destinations[0].url"),
    ])
    func aWebhookURLMustBeHTTPWithAHost(url: String, field: String) {
        let recipient = Recipient(id: "alice", destinations: [.webhook(WebhookDestination(url: url, secrets: [Self.secret]))])
        #expect(throws: ValidationError.self) { try recipient.validate() }
        do {
            try recipient.validate()
        } catch {
            #expect(error.field == field)
        }
    }

    @Test(arguments: [
        ([] as [String], "destinations[0].secrets"),
        (["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], "destinations[0].secrets[0]"),
        (["whsec_not base64!"], "destinations[0].secrets[0]"),
        (["whsec_c2hvcnQ="], "destinations[0].secrets[0]"),
        ([secret, "whsec_"], "destinations[0].secrets[1]"),
    ])
    func aSecretIsWhsecAndTheBase64OfSixteenToOneHundredTwentyEightBytes(secrets: [String], field: String) {
        let recipient = Recipient(
            id: "alice", destinations: [.webhook(WebhookDestination(url: "https://example.com", secrets: secrets))])
        do {
            try recipient.validate()
            Issue.record("accepted \(secrets)")
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func tokensHaveTheirProvidersShapes() {
        let good: [Destination] = [
            .webhook(WebhookDestination(url: "http://127.0.0.1:8080/hook", secrets: [Self.secret])),
            .apns(APNsDestination(token: String(repeating: "0f", count: 32), topic: "com.example.app", environment: .sandbox)),
            .fcm(FCMDestination(token: "dQw4w9WgXcQ:APA91bH-x_y")),
        ]
        #expect(throws: Never.self) { try Recipient(id: "alice", destinations: good).validate() }
        let bad: [(Destination, String)] = [
            (.apns(APNsDestination(token: "abc", topic: "com.example.app")), "destinations[0].token"),
            (.apns(APNsDestination(token: "zz", topic: "com.example.app")), "destinations[0].token"),
            (.apns(APNsDestination(token: "abcd", topic: "com example")), "destinations[0].topic"),
            (.fcm(FCMDestination(token: "a token")), "destinations[0].token"),
            (.fcm(FCMDestination(token: "")), "destinations[0].token"),
        ]
        for (destination, field) in bad {
            do {
                try Recipient(id: "alice", destinations: [destination]).validate()
                Issue.record("accepted \(destination)")
            } catch {
                #expect(error.field == field)
            }
        }
    }

    @Test func aRecipientHoldsAtMostSixteenDestinationsEachOnce() {
        let many = (0..<17).map { Destination.fcm(FCMDestination(token: "t\($0)")) }
        do {
            try Recipient(id: "alice", destinations: many).validate()
            Issue.record("accepted 17")
        } catch {
            #expect(error.field == "destinations")
        }
        let twice = [Destination.fcm(FCMDestination(token: "t")), .fcm(FCMDestination(token: "t"))]
        do {
            try Recipient(id: "alice", destinations: twice).validate()
            Issue.record("accepted a key twice")
        } catch {
            #expect(error.field == "destinations[1]")
        }
        let json = #"{"id": "alice", "destinations": [\#((0..<17).map { _ in #"{"kind": "fcm", "token": "t"}"# }.joined(separator: ","))]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Recipient.self, from: Data(json.utf8)) }
    }

    @Test func redactionMasksSecretsAndTheMiddleOfTokens() throws {
        let token = "0123456789abcdef0123456789abcdef"
        let recipient = Recipient(
            id: "alice", token: "s3cret",
            destinations: [
                .webhook(WebhookDestination(url: "https://example.com/h", secrets: [Self.secret, Self.secret])),
                .apns(APNsDestination(token: token, topic: "com.example.app")),
                .fcm(FCMDestination(token: "short")),
            ])
        let shown = recipient.redacted()
        #expect(shown.destinations == [
            .webhook(WebhookDestination(url: "https://example.com/h", secrets: ["<redacted>", "<redacted>"])),
            .apns(APNsDestination(token: "01234567…cdef", topic: "com.example.app")),
            .fcm(FCMDestination(token: "<redacted>")),
        ])
        let json = String(decoding: try JSONEncoder().encode(shown), as: UTF8.self)
        #expect(!json.contains("MfKQ9r8") && !json.contains(token) && !json.contains("s3cret"))
    }

    @Test func aRecipientOfAnEarlierVersionLoadsWithoutDestinationsAndWritesNone() throws {
        let old = #"{"id": "alice", "settings": ["alert"], "categories": [], "zone": "UTC"}"#
        let recipient = try JSONDecoder().decode(Recipient.self, from: Data(old.utf8))
        #expect(recipient.destinations == nil)
        #expect(!String(decoding: try JSONEncoder().encode(recipient), as: UTF8.self).contains("destinations"))
        #expect(Destination.secretKey(Self.secret)?.count == 24)
    }
}
