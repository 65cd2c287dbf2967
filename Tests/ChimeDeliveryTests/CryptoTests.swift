import ChimeDelivery
import Foundation
import Testing

@Suite struct CryptoTests {
    private static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
    private static func bytes(_ hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            data.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    /// RFC 4231 §4.2–4.8 (test case 5 truncates its output, so it is not a whole HMAC).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (
            String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            String(repeating: "aa", count: 131),
            "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            String(repeating: "aa", count: 131),
            "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ])
    func hmacSHA256MatchesRFC4231(key: String, message: String, expected: String) throws {
        #expect(Self.hex(try Digest.hmacSHA256(key: Self.bytes(key), message: Self.bytes(message))) == expected)
    }

    @Test func sha256MatchesFIPS180Examples() throws {
        #expect(Self.hex(try Digest.sha256(Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.hex(try Digest.sha256(Data())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func base64SpellsBothAlphabets() {
        let bytes = Data([0xfb, 0xff, 0xbf, 0x00, 0x3e])
        #expect(Base64.encode(bytes) == "+/+/AD4=")
        #expect(Base64.encodeURL(bytes) == "-_-_AD4")
        #expect(Base64.decode("+/+/AD4=") == bytes)
        #expect(Base64.decode("+/+/AD4") == bytes)
        #expect(Base64.decodeURL("-_-_AD4") == bytes)
        #expect(Base64.decodeURL("-_-_AD4=") == bytes)
        #expect(Base64.encodeURL(Data()) == "")
        #expect(Base64.decode("") == Data())
    }

    @Test(arguments: ["+/+/AD4=", "a", "ab=c", "ab c", "abc\n", "é"])
    func base64URLRefusesOtherAlphabetsAndLengths(text: String) {
        #expect(Base64.decodeURL(text) == nil)
    }

    @Test(arguments: ["-_-_AD4", "a", "ab=c", "ab c", "abcde"])
    func base64RefusesOtherAlphabetsAndLengths(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func rs256SignatureIsPKCS1v15AsOpenSSLMakesIt() throws {
        // `printf chime | openssl dgst -sha256 -sign google-test-key.pem | basenc --base64url`
        let expected =
            "hXSKvPBbFUWJm_wFmeMFIwehP_lXw97ZZJnyov_SvsdUprzP7f3QlFOLzDTB02CoHOOAgJDGs7DgJBqUuex0SOIYrynbq_miVU6D4VO--ZlABe3AiXQ6Thscyu2Ao6-MQ3yQn_pEX_HThQlzokD6pmqHoTfY0O_t2vPdsP9xZoBhrZf8C4acaQmELT4MXSj-BjohFwnPSGrHa3fvyfqFuRRKJG-xPQuOJkpABTQV72FaPPyZ3WIsGSbCofqA79r1W0Hf4voYHxxqb2iQLNYjVnN4_DATypXEnVZZtY6odNyThbR28IN5WoPABj1v4f8ZYktrfWLmnphNfXzZQZbYWw"
        for name in ["google-test-key.pem", "google-test-key-pkcs1.pem"] {
            let key = try SigningKey(pem: String(contentsOf: PythonRunner.fixture(name), encoding: .utf8), algorithm: .rs256)
            let signature = try key.sign(Data("chime".utf8))
            #expect(Base64.encodeURL(signature) == expected, "\(name)")
            #expect(key.isValidSignature(signature, for: Data("chime".utf8)))
            #expect(!key.isValidSignature(signature, for: Data("chimes".utf8)))
        }
    }

    @Test func es256SignatureIsRawRAndSAndVerifies() throws {
        let key = try SigningKey(pem: String(contentsOf: PythonRunner.fixture("apns-test-key.p8"), encoding: .utf8), algorithm: .es256)
        let message = Data("header.claims".utf8)
        for _ in 0..<20 {
            let signature = try key.sign(message)
            #expect(signature.count == 64)
            #expect(key.isValidSignature(signature, for: message))
            #expect(!key.isValidSignature(signature, for: Data("header.claimz".utf8)))
        }
        #expect(!key.isValidSignature(Data(repeating: 0, count: 63), for: message))
    }

    @Test func aKeyOfTheWrongKindIsRefusedByName() throws {
        let cases: [(String, SigningKey.Algorithm)] = [
            ("google-test-key.pem", .es256), ("p384-test-key.pem", .es256), ("apns-test-key.p8", .rs256), ("rsa1024-test-key.pem", .rs256),
        ]
        for (name, algorithm) in cases {
            let pem = try String(contentsOf: PythonRunner.fixture(name), encoding: .utf8)
            #expect(throws: CryptoError(.wrongKeyType, ""), "\(name) for \(algorithm)") { try SigningKey(pem: pem, algorithm: algorithm) }
        }
        for text in ["", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "not a key"] {
            #expect(throws: CryptoError(.badPEM, "")) { try SigningKey(pem: text, algorithm: .es256) }
        }
    }

    @Test func jwtIsSortedJSONPartsAndItsSignature() throws {
        let key = try SigningKey(pem: String(contentsOf: PythonRunner.fixture("google-test-key.pem"), encoding: .utf8), algorithm: .rs256)
        let token = try JSONWebToken.make(
            claims: ["iss": .string("a@b.iam.gserviceaccount.com"), "iat": .number(1_700_000_000), "aud": .string("https://x/token")],
            keyID: "k1", type: "JWT", key: key)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(String(decoding: Base64.decodeURL(parts[0]) ?? Data(), as: UTF8.self) == #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)
        #expect(
            String(decoding: Base64.decodeURL(parts[1]) ?? Data(), as: UTF8.self)
                == #"{"aud":"https://x/token","iat":1700000000,"iss":"a@b.iam.gserviceaccount.com"}"#)
        #expect(key.isValidSignature(Base64.decodeURL(parts[2]) ?? Data(), for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test(.enabled(if: PythonRunner.hasModules("jwt, cryptography"), "needs python3 with pyjwt[crypto] (pip install 'pyjwt[crypto]')"))
    func pyjwtVerifiesBothAlgorithms() throws {
        for (name, algorithm) in [("apns-test-key.p8", SigningKey.Algorithm.es256), ("google-test-key.pem", .rs256)] {
            let key = try SigningKey(pem: String(contentsOf: PythonRunner.fixture(name), encoding: .utf8), algorithm: algorithm)
            let token = try JSONWebToken.make(claims: ["iss": .string("TEAM123456"), "iat": .number(1_700_000_000)], keyID: "KEY1234567", key: key)
            let script = """
                import sys, jwt
                from cryptography.hazmat.primitives import serialization
                key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), None).public_key()
                claims = jwt.decode(sys.stdin.read(), key, algorithms=[sys.argv[2]], options={'verify_iat': False})
                header = jwt.get_unverified_header(open('/dev/stdin').read() if False else sys.argv[3])
                print(claims['iss'], claims['iat'], header['kid'], header['alg'])
                """
            let output = try PythonRunner.run(
                ["-c", script, PythonRunner.fixture(name).path, algorithm.rawValue, token], input: Data(token.utf8))
            #expect(String(decoding: output, as: UTF8.self) == "TEAM123456 1700000000 KEY1234567 \(algorithm.rawValue)\n")
        }
    }
}
