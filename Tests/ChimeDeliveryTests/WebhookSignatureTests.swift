import ChimeCore
import ChimeDelivery
import Foundation
import Testing

@Suite struct WebhookSignatureTests {
    @Test func eachSecretSignsIdTimestampAndBodyWithItsDecodedKey() {
        let seen = Mutex<[(Data, Data)]>([])
        let signature = WebhookSignature.header(
            id: "msg_1", timestamp: 1_614_265_330, body: Data(#"{"test": 2432232314}"#.utf8),
            secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_AAAAAAAAAAAAAAAAAAAAAAAA"],
            hmac: { key, message in
                seen.withLock { $0.append((key, message)) }
                return Data([UInt8(key.count)])
            })
        #expect(signature == "v1,GA== v1,Eg==")
        let calls = seen.withLock { $0 }
        #expect(calls.map(\.0.count) == [24, 18])
        #expect(calls.allSatisfy { String(decoding: $0.1, as: UTF8.self) == #"msg_1.1614265330.{"test": 2432232314}"# })
        #expect(WebhookSignature.header(id: "i", timestamp: 1, body: Data(), secrets: ["nope"], hmac: { _, _ in Data() }) == nil)
    }
}

import Synchronization

extension WebhookSignatureTests {
    /// The Standard Webhooks specification's test vector, through OpenSSL's HMAC.
    @Test func theSpecificationsVectorSignsTheSame() {
        let signature = WebhookSignature.header(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Data(#"{"test": 2432232314}"#.utf8),
            secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], hmac: { key, message in try? Digest.hmacSHA256(key: key, message: message) })
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }
}
