import Foundation
import Testing

@testable import ChimeCore

@Suite struct RecipientTests {
    private func action(_ identifier: String) -> NotificationAction {
        NotificationAction(identifier: identifier, title: identifier.capitalized)
    }

    @Test func settingsEncodeAsNamesInFixedOrder() throws {
        #expect(try wireJSON(NotificationSettings.all) == #"["alert","sound","badge"]"#)
        #expect(try wireJSON([NotificationSettings.badge, .alert] as NotificationSettings) == #"["alert","badge"]"#)
        #expect(try wireJSON(NotificationSettings()) == "[]")
        #expect(try decodeWire(NotificationSettings.self, #"["badge","sound"]"#) == [.sound, .badge])
        #expect(throws: DecodingError.self) { try decodeWire(NotificationSettings.self, #"["vibrate"]"#) }
    }

    @Test func settingsParseTheAllowFlag() throws {
        #expect(try NotificationSettings(parsing: "alert,sound,badge") == .all)
        #expect(try NotificationSettings(parsing: " sound , badge ") == [.sound, .badge])
        #expect(try NotificationSettings(parsing: "none").isEmpty)
        #expect(try NotificationSettings(parsing: "").isEmpty)
        let error = expectValidationError(.invalidArgument, field: "settings") {
            _ = try NotificationSettings(parsing: "alert,buzz")
        }
        #expect(error?.message == "'buzz' is not a notification setting; use alert, sound and badge (or none)")
    }

    @Test func actionDefaultsToBackgroundAndNotDestructive() throws {
        let decoded = try decodeWire(NotificationAction.self, #"{"identifier":"snooze","title":"Snooze"}"#)
        #expect(decoded == NotificationAction(identifier: "snooze", title: "Snooze"))
        #expect(decoded.activationMode == .background)
        #expect(
            try wireJSON(decoded)
                == #"{"activationMode":"background","authenticationRequired":false,"destructive":false,"identifier":"snooze","title":"Snooze"}"#
        )
        let full = try decodeWire(
            NotificationAction.self,
            #"{"identifier":"delete","title":"Delete","destructive":true,"authenticationRequired":true,"activationMode":"foreground"}"#
        )
        #expect(full.destructive && full.authenticationRequired && full.activationMode == .foreground)
        #expect(throws: DecodingError.self) {
            try decodeWire(NotificationAction.self, #"{"identifier":"a","title":"A","activationMode":"sideways"}"#)
        }
    }

    @Test func minimalContextDefaultsToTheFirstTwoActions() {
        let category = NotificationCategory(identifier: "meeting", actions: ["a", "b", "c"].map(action))
        #expect(category.effectiveMinimalActions.map(\.identifier) == ["a", "b"])
        let explicit = NotificationCategory(
            identifier: "meeting", actions: ["a", "b", "c"].map(action), minimalActions: [action("c")])
        #expect(explicit.effectiveMinimalActions.map(\.identifier) == ["c"])
        #expect(explicit.action(withIdentifier: "b")?.title == "B")
        #expect(explicit.action(withIdentifier: "z") == nil)
    }

    @Test func fiveDefaultActionsAreRejected() {
        let categories = [
            NotificationCategory(identifier: "ok", actions: ["a", "b", "c", "d"].map(action)),
            NotificationCategory(identifier: "big", actions: ["a", "b", "c", "d", "e"].map(action)),
        ]
        let error = expectValidationError(.invalidArgument, field: "categories[1].actions") {
            try Recipient.validateCategories(categories)
        }
        #expect(error?.message == "has 5 actions; a category holds at most 4 actions in the default context")
    }

    @Test func threeMinimalActionsAreRejected() {
        let category = NotificationCategory(
            identifier: "m", actions: [action("a")], minimalActions: ["a", "b", "c"].map(action))
        let error = expectValidationError(.invalidArgument, field: "categories[0].minimalActions") {
            try Recipient.validateCategories([category])
        }
        #expect(error?.message == "has 3 actions; a category holds at most 2 actions in the minimal context")
    }

    @Test func duplicateIdentifiersAreRejected() {
        let actions = expectValidationError(.invalidArgument, field: "categories[0].actions[2].identifier") {
            try Recipient.validateCategories([
                NotificationCategory(identifier: "m", actions: ["a", "b", "a"].map(action))
            ])
        }
        #expect(actions?.message == "action identifier 'a' appears more than once in the default context")
        let categories = expectValidationError(.invalidArgument, field: "categories[1].identifier") {
            try Recipient.validateCategories([NotificationCategory(identifier: "m"), NotificationCategory(identifier: "m")])
        }
        #expect(categories?.message == "category identifier 'm' appears more than once")
    }

    @Test func aMinimalActionMustMatchTheDefaultActionOfTheSameIdentifier() {
        var changed = action("a")
        changed.destructive = true
        _ = expectValidationError(.invalidArgument, field: "categories[0].minimalActions[0]") {
            try Recipient.validateCategories([
                NotificationCategory(identifier: "m", actions: [action("a")], minimalActions: [changed])
            ])
        }
    }

    @Test func emptyActionTitlesAndIdentifiersAreRejected() {
        _ = expectValidationError(.invalidArgument, field: "categories[0].actions[0].title") {
            try Recipient.validateCategories([
                NotificationCategory(identifier: "m", actions: [NotificationAction(identifier: "a", title: "")])
            ])
        }
        _ = expectValidationError(.invalidArgument, field: "categories[0].actions[0].identifier") {
            try Recipient.validateCategories([
                NotificationCategory(identifier: "m", actions: [NotificationAction(identifier: "", title: "A")])
            ])
        }
        _ = expectValidationError(.invalidArgument, field: "categories[0].identifier") {
            try Recipient.validateCategories([NotificationCategory(identifier: "")])
        }
    }

    @Test func recipientDecodesWithDefaultsAndRoundTrips() throws {
        let minimal = try decodeWire(Recipient.self, #"{"id":"alice"}"#)
        #expect(minimal == Recipient(id: "alice"))
        #expect(minimal.settings == .all && minimal.categories.isEmpty && minimal.token == nil)
        let json =
            #"{"categories":[{"actions":[{"activationMode":"foreground","authenticationRequired":true,"destructive":false,"identifier":"open","title":"Open"}],"identifier":"c"}],"id":"bob","maxPending":64,"settings":["alert"],"token":"s3cret","zone":"Europe/Berlin"}"#
        let full = try decodeWire(Recipient.self, json)
        #expect(full.maxPending == 64 && full.zone == "Europe/Berlin" && full.settings == .alert)
        #expect(try wireJSON(full) == json)
        try full.validate()
    }

    @Test func listingsNeverShowTheToken() throws {
        let recipient = Recipient(id: "bob", token: "s3cret")
        let redacted = recipient.redacted()
        #expect(redacted.token == "<redacted>")
        #expect(try !wireJSON(redacted).contains("s3cret"))
        #expect(Recipient(id: "amy").redacted().token == nil)
        _ = expectValidationError(.invalidArgument, field: "token") { try redacted.validate() }
    }

    @Test func tokensCompareInConstantTime() {
        #expect(isEqualInConstantTime("s3cret", "s3cret"))
        #expect(!isEqualInConstantTime("s3cret", "s3creT"))
        #expect(!isEqualInConstantTime("s3cret", "s3cret!"))
        #expect(!isEqualInConstantTime("", "x"))
        #expect(isEqualInConstantTime("", ""))
        #expect(isEqualInConstantTime("ключ", "ключ"))
    }

    @Test func authenticationRequiredActionsNeedTheToken() {
        let open = NotificationAction(identifier: "open", title: "Open")
        var pay = NotificationAction(identifier: "pay", title: "Pay")
        pay.authenticationRequired = true
        let withToken = Recipient(id: "bob", token: "s3cret")
        #expect(withToken.authorizes(open, token: nil))
        #expect(withToken.authorizes(pay, token: "s3cret"))
        #expect(!withToken.authorizes(pay, token: "guess"))
        #expect(!withToken.authorizes(pay, token: nil))
        #expect(!Recipient(id: "amy").authorizes(pay, token: "anything"))
    }

    @Test func recipientValidationNamesTheField() {
        _ = expectValidationError(.unknownTimeZone, field: "zone") {
            try Recipient(id: "a", zone: "Mars/Olympus").validate()
        }
        let cap = expectValidationError(.invalidArgument, field: "maxPending") {
            try Recipient(id: "a", maxPending: 0).validate()
        }
        #expect(cap?.message == "must be at least 1 (leave it out for the configured default), not 0")
        _ = expectValidationError(.invalidArgument, field: "recipient") { try Recipient(id: "a b").validate() }
        _ = expectValidationError(.invalidArgument, field: "token") { try Recipient(id: "a", token: "").validate() }
    }
}
