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
