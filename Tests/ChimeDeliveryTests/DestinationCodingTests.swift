import ChimeCore
import Foundation
import Testing

@Suite struct DestinationCodingTests {
    @Test func eachKindRoundTripsThroughItsJSONShape() throws {
        let destinations: [Destination] = [
            .webhook(WebhookDestination(url: "https://example.com/hook", secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])),
            .apns(APNsDestination(token: "a1b2", topic: "com.example.app", environment: .sandbox)),
            .fcm(FCMDestination(token: "fcm-token")),
        ]
        let data = try JSONEncoder().encode(destinations)
        #expect(try JSONDecoder().decode([Destination].self, from: data) == destinations)
        #expect(destinations.map(\.key) == ["webhook:https://example.com/hook", "apns:a1b2", "fcm:fcm-token"])
    }

    @Test func aKeyOfAnotherKindOrAnUnknownKindIsRefused() {
        for json in [
            #"{"kind": "fcm", "token": "t", "url": "https://x"}"#,
            #"{"kind": "sms", "token": "t"}"#,
            #"{"kind": "apns", "token": "t"}"#,
            #"{"token": "t"}"#,
        ] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Destination.self, from: Data(json.utf8)) }
        }
    }
}
