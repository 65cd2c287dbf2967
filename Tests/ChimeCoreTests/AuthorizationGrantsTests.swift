import Foundation
import Testing

@testable import ChimeCore

/// Grants per recipient: what each interruption level becomes under each set of grants, and
/// how the delivery plan applies them.
@Suite struct AuthorizationGrantsTests {
    /// Every level under every grant set: the delivered level and whether it arrives quietly.
    static let table: [(InterruptionLevel, AuthorizationGrants, InterruptionLevel, Bool)] = [
        (.passive, [], .passive, false),
        (.active, [], .active, false),
        (.timeSensitive, [], .active, false),
        (.critical, [], .active, false),
        (.passive, .timeSensitive, .passive, false),
        (.active, .timeSensitive, .active, false),
        (.timeSensitive, .timeSensitive, .timeSensitive, false),
        (.critical, .timeSensitive, .active, false),
        (.timeSensitive, .critical, .active, false),
        (.critical, .critical, .critical, false),
        (.critical, [.timeSensitive, .critical], .critical, false),
        (.passive, .provisional, .passive, true),
        (.active, .provisional, .passive, true),
        (.timeSensitive, .provisional, .passive, true),
        (.timeSensitive, [.provisional, .timeSensitive], .passive, true),
        (.critical, .provisional, .passive, true),
        (.critical, [.provisional, .critical], .critical, false),
    ]

    @Test(arguments: table.indices)
    func levelsUnderGrants(row: Int) {
        let (level, grants, expected, isQuiet) = Self.table[row]
        let delivered = grants.delivered(level)
        #expect(delivered.level == expected, "\(level) under \(grants.grantedNames)")
        #expect(delivered.isQuiet == isQuiet, "\(level) under \(grants.grantedNames)")
    }

    @Test func theTableCoversEveryLevelUnderNoGrantsAndProvisional() {
        for level in InterruptionLevel.allCases {
            #expect(Self.table.contains { $0.0 == level && $0.1 == [] })
            #expect(Self.table.contains { $0.0 == level && $0.1 == .provisional })
        }
    }

    @Test func planDeliversAnUngrantedLevelAsActive() {
        let content = Content(title: "T", sound: "default", interruptionLevel: .critical)
        let plan = DeliveryPlan.make(for: content, settings: .all, grants: .timeSensitive, requireRegistration: false)
        var expected = content
        expected.interruptionLevel = .active
        #expect(plan == .deliver(expected, stripped: []))
    }

    @Test func planKeepsAGrantedLevel() {
        let content = Content(title: "T", interruptionLevel: .timeSensitive)
        #expect(DeliveryPlan.make(for: content, settings: .all, grants: .timeSensitive, requireRegistration: false)
            == .deliver(content, stripped: []))
    }

    @Test func provisionalDeliversQuietlyAndSaysTheSoundWasStripped() {
        let content = Content(title: "T", sound: "default", badge: 2)
        let plan = DeliveryPlan.make(for: content, settings: .all, grants: .provisional, requireRegistration: false)
        #expect(plan == .deliver(Content(title: "T", badge: 2, interruptionLevel: .passive), stripped: .sound))
    }

    @Test func anUnregisteredRecipientGetsTheLevelAsScheduled() {
        let content = Content(title: "T", interruptionLevel: .critical)
        #expect(DeliveryPlan.make(for: content, settings: nil, requireRegistration: false) == .deliver(content, stripped: []))
    }

    @Test func parsesTheCommandLineAndJSONNames() throws {
        #expect(try AuthorizationGrants(parsing: "time-sensitive, critical") == [.timeSensitive, .critical])
        #expect(try AuthorizationGrants(parsing: "provisional,timeSensitive") == [.provisional, .timeSensitive])
        #expect(try AuthorizationGrants(parsing: "none") == [])
        #expect(throws: ValidationError.self) { try AuthorizationGrants(parsing: "loud") }
        let all: AuthorizationGrants = [.critical, .provisional, .timeSensitive]
        let json = try JSONEncoder().encode(all)
        #expect(String(decoding: json, as: UTF8.self) == #"["provisional","timeSensitive","critical"]"#)
        #expect(try JSONDecoder().decode(AuthorizationGrants.self, from: json) == all)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AuthorizationGrants.self, from: Data(#"["time-sensitive"]"#.utf8))
        }
    }

    @Test func aRegistrationWithoutGrantsEncodesAsBefore() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let plain = Recipient(id: "alice", zone: "Europe/Berlin")
        #expect(String(decoding: try encoder.encode(plain), as: UTF8.self)
            == #"{"categories":[],"id":"alice","settings":["alert","sound","badge"],"zone":"Europe\/Berlin"}"#)
        let granted = Recipient(id: "alice", grants: .critical)
        let decoded = try JSONDecoder().decode(Recipient.self, from: try encoder.encode(granted))
        #expect(decoded == granted)
        #expect(decoded.grants == .critical)
    }
}

/// Preferences: a category the recipient opted out of is suppressed with its reason.
@Suite struct PreferenceTests {
    @Test func anOptedOutCategoryIsSuppressedAndOthersAreDelivered() {
        let promo = Content(title: "Sale", category: "promo")
        #expect(DeliveryPlan.make(for: promo, settings: .all, optedOutCategories: ["promo"], requireRegistration: false)
            == .suppressed(reason: "recipient opted out of category 'promo'"))
        let todo = Content(title: "Call", category: "todo")
        #expect(DeliveryPlan.make(for: todo, settings: .all, optedOutCategories: ["promo"], requireRegistration: false)
            == .deliver(todo, stripped: []))
        #expect(DeliveryPlan.make(for: Content(title: "x"), settings: .all, optedOutCategories: ["promo"], requireRegistration: false)
            == .deliver(Content(title: "x"), stripped: []))
    }

    @Test func optOutsRoundTripAndEmptyNamesAreRefused() throws {
        let recipient = Recipient(id: "alice", optedOutCategories: ["promo", "digest"])
        #expect(try JSONDecoder().decode(Recipient.self, from: try JSONEncoder().encode(recipient)) == recipient)
        #expect(throws: ValidationError.self) { try Recipient(id: "alice", optedOutCategories: [""]).validate() }
    }
}
