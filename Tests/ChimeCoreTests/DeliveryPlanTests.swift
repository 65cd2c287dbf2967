import Testing

@testable import ChimeCore

@Suite struct DeliveryPlanTests {
    private let full = Content(
        title: "Stand-up", body: "now", action: "join", launchImage: "splash", sound: "default", badge: 3,
        userInfo: ["room": .string("4b")], category: "meeting", threadId: "team")

    @Test func everythingAllowedDeliversUnchanged() {
        #expect(DeliveryPlan.make(for: full, settings: .all, requireRegistration: true) == .deliver(full, stripped: []))
    }

    @Test func unregisteredRecipientsGetEverythingUnlessRegistrationIsRequired() {
        #expect(DeliveryPlan.make(for: full, settings: nil, requireRegistration: false) == .deliver(full, stripped: []))
        #expect(
            DeliveryPlan.make(for: full, settings: nil, requireRegistration: true)
                == .suppressed(reason: "recipient not registered"))
    }

    @Test func aRecipientAllowingNothingIsSuppressed() {
        #expect(
            DeliveryPlan.make(for: full, settings: [], requireRegistration: false)
                == .suppressed(reason: "recipient allows no alert, sound or badge"))
    }

    @Test func alertTextIsStrippedWithoutAlert() {
        let plan = DeliveryPlan.make(for: full, settings: [.sound, .badge], requireRegistration: false)
        let expected = Content(
            sound: "default", badge: 3, userInfo: ["room": .string("4b")], category: "meeting", threadId: "team")
        #expect(plan == .deliver(expected, stripped: .alert))
    }

    @Test func soundAndBadgeAreStrippedWhenNotAllowed() {
        let plan = DeliveryPlan.make(for: full, settings: .alert, requireRegistration: false)
        var expected = full
        expected.sound = nil
        expected.badgeChange = nil
        #expect(plan == .deliver(expected, stripped: [.sound, .badge]))
        #expect(plan.deliveredContent == expected)
    }

    @Test func incrementBadgesAreStrippedLikeNumbers() {
        let content = Content(title: "t", badgeChange: .increment)
        #expect(
            DeliveryPlan.make(for: content, settings: .alert, requireRegistration: false)
                == .deliver(Content(title: "t"), stripped: .badge))
    }

    @Test func aFiringLosingEverythingItCarriesIsSuppressed() {
        let plan = DeliveryPlan.make(for: Content(title: "t", sound: "bell.caf"), settings: .badge, requireRegistration: false)
        #expect(plan == .suppressed(reason: "recipient allows only badge; this firing has only alert, sound"))
        #expect(plan.deliveredContent == nil)
    }

    @Test func dataOnlyFiringsAreDelivered() {
        let content = Content(userInfo: ["sync": .boolean(true)])
        #expect(DeliveryPlan.make(for: content, settings: .badge, requireRegistration: false) == .deliver(content, stripped: []))
    }
}
