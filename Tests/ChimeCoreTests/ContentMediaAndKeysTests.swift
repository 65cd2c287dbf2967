import ChimeTestSupport
import Foundation
import Testing

@testable import ChimeCore

/// Attachments, localizable keys and the critical sound volume (issue 40, item 1): their
/// checks at scheduling, their JSON and binary forms, and the string tables keys resolve in.
@Suite struct ContentMediaAndKeysTests {
    private let png = NotificationAttachment(identifier: "map", url: "https://example.com/map.png", type: "image/png", size: 120_000)

    private func field(of content: Content) -> String? {
        do {
            try content.validate()
            return nil
        } catch {
            return "\(error.code.rawValue) \(error.field ?? "-")"
        }
    }

    private var full: Content {
        Content(
            title: "Fallback", body: "Body", sound: "siren.caf", interruptionLevel: .critical,
            attachments: [png, NotificationAttachment(identifier: "clip", url: "https://example.com/a,b.mp4", type: "public.mpeg-4", size: 50 << 20)],
            titleKey: "TITLE", titleArgs: ["Alice", "3"], bodyKey: "BODY", bodyArgs: [], soundVolume: 0.25)
    }

    // MARK: Attachments

    @Test func attachmentKindsAndLimitsAreApples() throws {
        #expect(NotificationAttachment.Kind.audio.maximumSize == 5_242_880)
        #expect(NotificationAttachment.Kind.image.maximumSize == 10_485_760)
        #expect(NotificationAttachment.Kind.movie.maximumSize == 52_428_800)
        for (type, kind) in [("image/JPEG", "image"), ("public.png", "image"), ("com.compuserve.gif", "image"), ("audio/mpeg", "audio"),
                             ("public.aiff-audio", "audio"), ("video/mp4", "movie"), ("public.avi", "movie")] {
            #expect(NotificationAttachment(identifier: "a", url: "https://x.example/f", type: type, size: 1).kind?.rawValue == kind, "\(type)")
        }
        #expect(NotificationAttachment(identifier: "a", url: "https://x.example/f", type: "image/webp", size: 1).kind == nil)
        try png.validate(field: "a")
    }

    @Test(arguments: [
        ("", "https://x.example/f", "image/png", 1, "content.attachments[0].identifier"),
        (String(repeating: "i", count: 257), "https://x.example/f", "image/png", 1, "content.attachments[0].identifier"),
        ("a", "ftp://x.example/f", "image/png", 1, "content.attachments[0].url"),
        ("a", "/relative/f.png", "image/png", 1, "content.attachments[0].url"),
        ("a", "https://x.example/" + String(repeating: "p", count: 2048), "image/png", 1, "content.attachments[0].url"),
        ("a", "https://x.example/f", "image/webp", 1, "content.attachments[0].type"),
        ("a", "https://x.example/f", "image/png", 0, "content.attachments[0].size"),
        ("a", "https://x.example/f", "image/png", (10 << 20) + 1, "content.attachments[0].size"),
        ("a", "https://x.example/f", "audio/mpeg", (5 << 20) + 1, "content.attachments[0].size"),
        ("a", "https://x.example/f", "video/mp4", (50 << 20) + 1, "content.attachments[0].size"),
    ])
    func aBadAttachmentIsRefusedNamingItsField(identifier: String, url: String, type: String, size: Int, expected: String) {
        let content = Content(title: "t", attachments: [NotificationAttachment(identifier: identifier, url: url, type: type, size: size)])
        #expect(field(of: content) == "invalid_argument \(expected)")
    }

    @Test func aLimitSizeIsAcceptedAndTooManyOrTwiceNamedAreNot() {
        let limit = NotificationAttachment(identifier: "v", url: "https://x.example/v", type: "video/mp4", size: 50 << 20)
        #expect(field(of: Content(title: "t", attachments: [limit])) == nil)
        let eleven = (0..<11).map { NotificationAttachment(identifier: "a\($0)", url: "https://x.example/f", type: "image/png", size: 1) }
        #expect(field(of: Content(title: "t", attachments: eleven)) == "invalid_argument content.attachments")
        #expect(field(of: Content(title: "t", attachments: [png, png])) == "invalid_argument content.attachments[1].identifier")
    }

    @Test func attachmentJSONIsStrictAndCountedBeforeDecoding() throws {
        let decoded = try JSONDecoder().decode(
            Content.self, from: Data(#"{"attachments": [{"identifier": "map", "url": "https://example.com/map.png", "type": "image/png", "size": 120000}]}"#.utf8))
        #expect(decoded.attachments == [png])
        for bad in [
            #"{"attachments": [{"identifier": "m", "url": "https://e.x/m", "type": "image/png"}]}"#,
            #"{"attachments": [{"identifier": "m", "url": "https://e.x/m", "type": "image/png", "size": 1.5}]}"#,
            #"{"attachments": [{"identifier": "m", "url": "https://e.x/m", "type": "image/png", "size": 1, "extra": 1}]}"#,
            "{\"attachments\": [" + Array(repeating: "{}", count: 11).joined(separator: ",") + "]}",
        ] {
            #expect(throws: DecodingError.self, "\(bad)") { try JSONDecoder().decode(Content.self, from: Data(bad.utf8)) }
        }
    }

    // MARK: Keys and the critical volume

    @Test func keysArgumentsAndVolumeAreChecked() {
        #expect(field(of: full) == nil)
        #expect(field(of: Content(titleArgs: ["x"])) == "invalid_argument content.titleArgs")
        #expect(field(of: Content(bodyKey: "")) == "invalid_argument content.bodyKey")
        #expect(field(of: Content(bodyKey: String(repeating: "k", count: 257))) == "invalid_argument content.bodyKey")
        #expect(field(of: Content(bodyKey: "K", bodyArgs: Array(repeating: "a", count: 17))) == "invalid_argument content.bodyArgs")
        #expect(field(of: Content(bodyKey: "K", bodyArgs: ["a", String(repeating: "x", count: 257)])) == "invalid_argument content.bodyArgs[1]")
        #expect(field(of: Content(bodyKey: "K", bodyArgs: [String(repeating: "x", count: 256)])) == nil)
        #expect(field(of: Content(title: "t", soundVolume: 0.5)) == "invalid_argument content.soundVolume")
        #expect(field(of: Content(title: "t", sound: "default", soundVolume: 1.5)) == "invalid_argument content.soundVolume")
        #expect(field(of: Content(title: "t", sound: "default", soundVolume: .nan)) == "invalid_argument content.soundVolume")
        #expect(Content(titleKey: "K").hasAlertText, "a key is alert text: a recipient without alerts loses it")
        #expect(Content(titleKey: "K").hasLocalizableKeys && !Content(title: "t").hasLocalizableKeys)
        #expect(Content(soundVolume: 0).hasExtendedFields && !Content(subtitle: "s").hasExtendedFields)
    }

    @Test func everyNewFieldRoundTripsThroughJSONAndTheBinaryForm() throws {
        let json = try JSONEncoder().encode(full)
        #expect(try JSONDecoder().decode(Content.self, from: json) == full)
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content = full
        #expect(try Reminder(binary: reminder.binaryEncoded()) == reminder)
        // Empty lists stay empty, not absent: the journal's copy folds to what the live fold stored.
        reminder.content = Content(title: "t", attachments: [], titleKey: "K", titleArgs: [])
        let decoded = try Reminder(binary: reminder.binaryEncoded())
        #expect(decoded.content.attachments == [] && decoded.content.titleArgs == [])
        #expect(decoded == reminder)
    }

    @Test func contentWithoutTheNewFieldsEncodesAsBefore() throws {
        let plain = Content(title: "t", subtitle: "s")
        let text = String(decoding: try JSONEncoder().encode(plain), as: UTF8.self)
        #expect(!text.contains("attachments") && !text.contains("Key") && !text.contains("soundVolume"))
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content = plain
        let withoutKeys = reminder.binaryEncoded().count
        reminder.content.titleKey = "K"
        // The key's length and byte, and one more byte of flags varint (bit 34 needs a fifth).
        #expect(reminder.binaryEncoded().count == withoutKeys + 3)
    }

    @Test func cutOrPaddedExtendedBytesAreRefused() throws {
        var reminder = ReminderBinaryFixtures.oneShot
        reminder.content = full
        let bytes = reminder.binaryEncoded()
        for cut in 1..<40 {
            #expect(throws: BinaryDecodingError.self) { try Reminder(binary: bytes.dropLast(cut)) }
        }
        #expect(throws: BinaryDecodingError.self) { try Reminder(binary: bytes + [0]) }
    }

    // MARK: String tables

    @Test(arguments: [
        ("Hello %@", ["Alice"], "Hello Alice"),
        ("%2$@ before %1$@", ["a", "b"], "b before a"),
        ("%d%% done by %@", ["50", "noon"], "50% done by noon"),
        ("missing %@ and %@", ["one"], "missing one and "),
        ("%9$@|", ["a"], "|"),
        ("odd %q and %", ["x"], "odd %q and %"),
        ("%1$x stays", ["x"], "%1$x stays"),
        ("no conversions", ["unused"], "no conversions"),
        ("%", [], "%"),
        ("%9999999999999999999$@", ["a"], "%9999999999999999999$@"),
    ])
    func formatsFillAsStringFormatWithObjectArguments(format: String, arguments: [String], expected: String) {
        #expect(StringTables.fill(format, with: arguments) == expected)
    }

    @Test func aKeyResolvesInTheLocaleThenItsLanguageThenTheDevelopmentLocale() {
        let tables = StringTables(
            tables: ["fr_CA": ["GREETING": "Allô %@"], "fr": ["GREETING": "Bonjour %@", "BYE": "Au revoir"], "en": ["GREETING": "Hello %@", "ONLY_EN": "English"]],
            developmentLocale: "en")
        #expect(tables.format(forKey: "GREETING", locale: "fr-CA") == "Allô %@")
        #expect(tables.format(forKey: "GREETING", locale: "FR-ca") == "Allô %@")
        #expect(tables.format(forKey: "BYE", locale: "fr-CA") == "Au revoir")
        #expect(tables.format(forKey: "ONLY_EN", locale: "fr-CA") == "English")
        #expect(tables.format(forKey: "GREETING", locale: "de") == "Hello %@")
        #expect(tables.format(forKey: "GREETING", locale: nil) == "Hello %@")
        #expect(tables.format(forKey: "NONE", locale: "fr") == nil)
        let content = Content(title: "Fallback", titleKey: "GREETING", titleArgs: ["Zoé"], bodyKey: "NONE", bodyArgs: ["x"])
        let french = tables.localized(content, locale: "fr")
        #expect(french.title == "Bonjour Zoé")
        #expect(french.body == "NONE", "no table has it and there is no body: the key, as iOS shows it")
        #expect(french.titleKey == "GREETING" && french.titleArgs == ["Zoé"], "the keys stay for subscribers")
        var withBody = content
        withBody.body = "Own body"
        #expect(tables.localized(withBody, locale: "fr").body == "Own body")
        #expect(StringTables().localized(content, locale: "fr").title == "Fallback", "no tables: the content's own text")
        #expect(tables.localized(Content(title: "plain"), locale: "fr") == Content(title: "plain"))
    }

    @Test func tablesLoadFromADirectoryAndABadFileIsNamed() throws {
        let directory = try TemporaryDirectory(prefix: "strings")
        defer { directory.remove() }
        try Data(#"{"GREETING": "Bonjour %@"}"#.utf8).write(to: URL(fileURLWithPath: directory.path("fr.json")))
        try Data(#"{"GREETING": "Hi %@"}"#.utf8).write(to: URL(fileURLWithPath: directory.path("en-US.json")))
        try Data("not json".utf8).write(to: URL(fileURLWithPath: directory.path("README.txt")))
        // A table behind a symbolic link (as a Kubernetes ConfigMap mounts each key) is read.
        let elsewhere = try TemporaryDirectory(prefix: "strings-target")
        defer { elsewhere.remove() }
        try Data(#"{"GREETING": "Hola %@"}"#.utf8).write(to: URL(fileURLWithPath: elsewhere.path("es.json")))
        try FileManager.default.createSymbolicLink(atPath: directory.path("es.json"), withDestinationPath: elsewhere.path("es.json"))
        let tables = try StringTables.load(directory: directory.url.path, developmentLocale: "en_US")
        #expect(tables.tables == ["fr": ["GREETING": "Bonjour %@"], "en-us": ["GREETING": "Hi %@"], "es": ["GREETING": "Hola %@"]])
        #expect(tables.format(forKey: "GREETING", locale: "it") == "Hi %@")
        #expect(try StringTables.load(directory: "").isEmpty)

        try Data(#"{"GREETING": 1}"#.utf8).write(to: URL(fileURLWithPath: directory.path("de.json")))
        #expect { try StringTables.load(directory: directory.url.path) } throws: { error in
            "\(error)".contains("de.json") && "\(error)".contains("not a JSON object of strings")
        }
        try FileManager.default.removeItem(atPath: directory.path("de.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: directory.path("not a locale.json")))
        #expect { try StringTables.load(directory: directory.url.path) } throws: { "\($0)".contains("is not a locale name") }
        try FileManager.default.removeItem(atPath: directory.path("not a locale.json"))
        try FileManager.default.createDirectory(atPath: directory.path("it.json"), withIntermediateDirectories: false)
        #expect { try StringTables.load(directory: directory.url.path) } throws: { "\($0)".contains("it.json is not a regular file") }
        #expect { try StringTables.load(directory: directory.path("missing")) } throws: { "\($0)".contains("cannot list") }
    }

    @Test func aRecipientsLocaleIsCheckedAndRoundTrips() throws {
        for good in ["fr", "fr-CA", "zh_Hant_TW", "sr-Latn-RS"] {
            #expect(StringTables.isLocale(good), "\(good)")
            try Recipient(id: "alice", locale: good).validate()
        }
        for bad in ["", "f", "fr-", "français", "fr--CA", "123", "fr-CA-toolongsubtag", String(repeating: "ab-", count: 12) + "ab"] {
            #expect(!StringTables.isLocale(bad), "\(bad)")
            #expect(throws: ValidationError(.invalidArgument, field: "locale", "")) { try Recipient(id: "alice", locale: bad).validate() }
        }
        let recipient = Recipient(id: "alice", locale: "fr-CA")
        #expect(try JSONDecoder().decode(Recipient.self, from: JSONEncoder().encode(recipient)) == recipient)
        #expect(!String(decoding: try JSONEncoder().encode(Recipient(id: "bob")), as: UTF8.self).contains("locale"))
    }
}

/// Stripping covers the new fields: a recipient without `alert` loses the localizable keys
/// (dispatch would resolve them into alert text), one without `sound` the critical volume.
@Suite struct DeliveryPlanKeysTests {
    @Test func keysAndVolumeAreStrippedWithTheirParts() throws {
        let content = Content(
            title: "t", sound: "siren", badge: 1,
            attachments: [NotificationAttachment(identifier: "i", url: "https://example.com/i.png", type: "image/png", size: 1)],
            titleKey: "K", titleArgs: ["a"], bodyKey: "B", bodyArgs: ["b"], soundVolume: 0.5)
        let soundOnly = try #require(DeliveryPlan.make(for: content, settings: [.sound, .badge], requireRegistration: false).deliveredContent)
        #expect(soundOnly.title == nil && soundOnly.titleKey == nil && soundOnly.titleArgs == nil)
        #expect(soundOnly.bodyKey == nil && soundOnly.bodyArgs == nil && soundOnly.attachments == nil)
        #expect(soundOnly.soundVolume == 0.5 && soundOnly.sound == "siren")
        #expect(StringTables(tables: ["en": ["K": "resolved"]]).localized(soundOnly, locale: nil).title == nil, "nothing to resolve")
        let alertOnly = try #require(DeliveryPlan.make(for: content, settings: [.alert], requireRegistration: false).deliveredContent)
        #expect(alertOnly.titleKey == "K" && alertOnly.sound == nil && alertOnly.soundVolume == nil)
        // Provisional: quiet delivery loses the sound and with it the volume.
        let quiet = try #require(DeliveryPlan.make(for: content, settings: .all, grants: .provisional, requireRegistration: false).deliveredContent)
        #expect(quiet.sound == nil && quiet.soundVolume == nil)
        // A firing whose only alert text is a key is suppressed for a recipient without alert and badge.
        let keyOnly = Content(titleKey: "K")
        #expect(DeliveryPlan.make(for: keyOnly, settings: [.sound], requireRegistration: false).deliveredContent == nil)
    }
}
