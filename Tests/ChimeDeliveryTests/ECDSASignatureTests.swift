import Testing

@testable import ChimeDelivery

@Suite struct ECDSASignatureTests {
    private let r = [UInt8](repeating: 0x11, count: 32)
    private let highS = [0x80] + [UInt8](repeating: 0x22, count: 31)

    @Test func derWithALeadingZeroAndAShortIntegerBecomesPaddedRawBytes() {
        // r has its high bit set (a 0x00 in front in DER); s is one byte (leading zeros dropped).
        let der: [UInt8] = [0x30, 0x26, 0x02, 0x21, 0x00] + highS + [0x02, 0x01, 0x05]
        #expect(ECDSASignature.raw(fromDER: der, coordinateBytes: 32) == highS + [UInt8](repeating: 0, count: 31) + [0x05])
    }

    @Test func rawAndDERRoundTrip() {
        for raw in [r + highS, highS + r, [UInt8](repeating: 0, count: 64), [UInt8](repeating: 0xFF, count: 64)] {
            let der = ECDSASignature.der(fromRaw: raw, coordinateBytes: 32)
            #expect(der.flatMap { ECDSASignature.raw(fromDER: $0, coordinateBytes: 32) } == raw)
        }
        #expect(ECDSASignature.der(fromRaw: highS + r, coordinateBytes: 32)?.prefix(5) == [0x30, 0x45, 0x02, 0x21, 0x00])
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 0, count: 64), coordinateBytes: 32) == [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00])
    }

    @Test(arguments: [
        [UInt8](),
        [0x30],
        [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01],  // truncated
        [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00],  // trailing byte
        [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // not a SEQUENCE
        [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01],  // negative r
        [0x30, 0x06, 0x02, 0x00, 0x02, 0x02, 0x01, 0x01],  // empty r
        [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF],  // a four-byte length
        [0x30, 0x26, 0x02, 0x22, 0x01] + [UInt8](repeating: 0x11, count: 33) + [0x02, 0x01, 0x01],  // r over 32 bytes
    ])
    func malformedDERIsNil(der: [UInt8]) {
        #expect(ECDSASignature.raw(fromDER: der, coordinateBytes: 32) == nil)
    }

    @Test func rawOfTheWrongLengthIsNil() {
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 63), coordinateBytes: 32) == nil)
        #expect(ECDSASignature.der(fromRaw: [], coordinateBytes: 0) == nil)
    }
}
