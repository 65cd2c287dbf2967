import Foundation
import Testing

@testable import ChimeCore

@Suite struct ContentTests {
    @Test func numericBadgesDecodeAsBefore() throws {
        let content = try decodeWire(Content.self, #"{"body":"hi","badge":3}"#)
        #expect(content.badge == 3)
        #expect(content.badgeChange == .set(3))
        #expect(try wireJSON(content) == #"{"badge":3,"body":"hi"}"#)
        #expect(try decodeWire(Content.self, #"{"badge":-1}"#).badgeChange == .set(-1))
        #expect(try decodeWire(Content.self, "{}").badgeChange == nil)
    }

    @Test func plusOneDecodesAsIncrement() throws {
        let content = try decodeWire(Content.self, #"{"badge":"+1"}"#)
        #expect(content.badgeChange == .increment)
        #expect(content.badge == nil)
        #expect(try wireJSON(content) == #"{"badge":"+1"}"#)
        #expect(throws: DecodingError.self) { try decodeWire(Content.self, #"{"badge":"+2"}"#) }
        #expect(throws: DecodingError.self) { try decodeWire(Content.self, #"{"badge":1.5}"#) }
    }

    @Test func badgeShorthandAndLiteralsMeanSet() {
        #expect(Content(badge: 2).badgeChange == .set(2))
        #expect(Content(badgeChange: 2).badgeChange == .set(2))
        var content = Content(badgeChange: .increment)
        content.badge = 5
        #expect(content.badgeChange == .set(5))
    }

    @Test func badgeChangeParsesTheCommandLine() throws {
        #expect(try BadgeChange(parsing: "+1") == .increment)
        #expect(try BadgeChange(parsing: "7") == .set(7))
        #expect(try BadgeChange(parsing: "-1") == .set(-1))
        _ = expectValidationError(.invalidArgument, field: "content.badge") { _ = try BadgeChange(parsing: "+2") }
    }

    @Test(arguments: [
        (BadgeChange.set(5), 2, 5), (.set(0), 2, 2), (.set(-3), 2, 0), (.increment, 2, 3), (.increment, 0, 1),
    ])
    func badgeChangesApplyTheIOSRules(change: BadgeChange, current: Int, expected: Int) {
        #expect(change.applied(to: current) == expected)
    }

    @Test func nullInUserInfoIsRejectedAtDecode() {
        #expect(throws: DecodingError.self) { try decodeWire(Content.self, #"{"userInfo":{"a":null}}"#) }
        #expect(throws: DecodingError.self) { try decodeWire(Content.self, #"{"userInfo":{"a":[1,null]}}"#) }
    }

    /// `{"k":{"k":…{"k":1}…}}` with `depth` levels, counting the top object and the scalar.
    private func nestedUserInfo(depth: Int) -> [String: PropertyListValue] {
        var value = PropertyListValue.integer(1)
        for _ in 0..<(depth - 2) { value = .dictionary(["k": value]) }
        return ["k": value]
    }

    @Test func userInfoThirtyTwoDeepIsAcceptedAndThirtyThreeRejected() throws {
        #expect(PropertyListValue.dictionary(nestedUserInfo(depth: 32)).depth == 32)
        try Content(userInfo: nestedUserInfo(depth: 32)).validate()
        let error = expectValidationError(.invalidArgument, field: "content.userInfo") {
            try Content(userInfo: nestedUserInfo(depth: 33)).validate()
        }
        #expect(error?.message == "is nested 33 levels deep; at most 32 are allowed")
    }

    /// `{"k":"xxx…"}`: 8 bytes of JSON around the text.
    private func userInfo(bytes: Int) -> [String: PropertyListValue] {
        ["k": .string(String(repeating: "x", count: bytes - 8))]
    }

    @Test func userInfoOf4096BytesIsAcceptedAnd4097Rejected() throws {
        #expect(try JSONEncoder().encode(userInfo(bytes: 4096)).count == 4096)
        try Content(userInfo: userInfo(bytes: 4096)).validate()
        let error = expectValidationError(.tooLarge, field: "content.userInfo") {
            try Content(userInfo: userInfo(bytes: 4097)).validate()
        }
        #expect(error?.message == "is 4097 bytes of JSON; at most 4096 are allowed")
    }

    @Test func userInfoLimitIsConfigurable() throws {
        try Content(userInfo: userInfo(bytes: 4097)).validate(maximumUserInfoBytes: 8192)
        try Content(userInfo: userInfo(bytes: 100)).validate(maximumUserInfoBytes: 100)
        _ = expectValidationError(.tooLarge, field: "content.userInfo") {
            try Content(userInfo: userInfo(bytes: 101)).validate(maximumUserInfoBytes: 100)
        }
    }

    @Test func presentedPartsIgnoreABadgeThatLeavesTheNumber() {
        #expect(Content(title: "t", sound: "default", badge: 1).presentedParts == .all)
        #expect(Content(badge: 0).presentedParts == [])
        #expect(Content(launchImage: "splash").presentedParts == .alert)
        #expect(Content(badgeChange: .increment).presentedParts == .badge)
    }
}
