import Foundation

/// The localized formats of content's localizable keys, per locale: the server-side form of an
/// app's `Localizable.strings`, read from `notifications.stringsDirectory` (one
/// `<locale>.json` file per locale, a flat `{"KEY": "format"}` object).
///
/// A key resolves in a recipient's locale as iOS resolves `localizedUserNotificationString`:
/// the locale itself (`fr-CA`), then its shorter forms (`fr`), then the development locale's
/// (`notifications.developmentLocale`, `en` by default); when no table has the key, the
/// content's own text (`title`, `body`) is shown, and without one the key itself, as iOS shows
/// a key it cannot find. Locale names compare without case, `_` and `-` alike.
public struct StringTables: Hashable, Sendable {
    /// Formats by normalized locale (lowercase, `-` between subtags), then by key.
    public private(set) var tables: [String: [String: String]]
    /// The locale tried after the recipient's, normalized.
    public private(set) var developmentLocale: String

    /// Tables from their formats by locale (names normalized here).
    public init(tables: [String: [String: String]] = [:], developmentLocale: String = "en") {
        var normalized: [String: [String: String]] = [:]
        for (locale, table) in tables { normalized[Self.normalized(locale), default: [:]].merge(table) { $1 } }
        self.tables = normalized
        self.developmentLocale = Self.normalized(developmentLocale)
    }

    /// Whether no table is loaded.
    public var isEmpty: Bool { tables.isEmpty }

    /// The largest table file read, in bytes.
    public static let maximumFileBytes = 4 << 20
    /// The most table files read from a directory.
    public static let maximumFiles = 1000

    /// Reads every `<locale>.json` file of `directory`; an empty path reads none.
    /// - Throws: ``StringTablesError`` for a directory that cannot be listed, more than
    ///   ``maximumFiles`` tables, a file name that is not a locale, a file that is not regular
    ///   or is over ``maximumFileBytes``, or a file that is not a JSON object of strings.
    public static func load(directory: String, developmentLocale: String = "en") throws(StringTablesError) -> StringTables {
        guard !directory.isEmpty else { return StringTables(developmentLocale: developmentLocale) }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw StringTablesError("cannot list the strings directory \(directory): \(error.localizedDescription)")
        }
        guard names.count <= maximumFiles else {
            throw StringTablesError("the strings directory \(directory) has \(names.count) tables; at most \(maximumFiles) are read")
        }
        var tables: [String: [String: String]] = [:]
        for name in names {
            let locale = String(name.dropLast(".json".count))
            let path = (directory as NSString).appendingPathComponent(name)
            guard isLocale(locale) else {
                throw StringTablesError("\(path): '\(locale)' is not a locale name (language[-region…], e.g. fr or fr-CA)")
            }
            // Followed through symbolic links: a Kubernetes ConfigMap mounts each key as one.
            let attributes = try? FileManager.default.attributesOfItem(atPath: (path as NSString).resolvingSymlinksInPath)
            guard (attributes?[.type] as? FileAttributeType) == .typeRegular else {
                throw StringTablesError("\(path) is not a regular file")
            }
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            guard size <= maximumFileBytes else {
                throw StringTablesError("\(path) is \(size) bytes; a table may have at most \(maximumFileBytes)")
            }
            guard let data = FileManager.default.contents(atPath: path), data.count <= maximumFileBytes else {
                throw StringTablesError("\(path) cannot be read")
            }
            guard let table = try? JSONDecoder().decode([String: String].self, from: data) else {
                throw StringTablesError("\(path) is not a JSON object of strings ({\"KEY\": \"format with %@\"})")
            }
            tables[normalized(locale), default: [:]].merge(table) { $1 }
        }
        return StringTables(tables: tables, developmentLocale: developmentLocale)
    }

    /// Whether `name` has a locale's shape: a language of 2 to 8 letters, then subtags of 1 to
    /// 8 letters or digits after `-` or `_`, at most 35 bytes in all (BCP 47's shape, not its
    /// registry).
    public static func isLocale(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 35 else { return false }
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard let language = parts.first, (2...8).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            return false
        }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// `locale` lowercased with `-` between its subtags.
    static func normalized(_ locale: String) -> String {
        locale.lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// The format of `key` in `locale` (`nil`: the development locale alone), trying the
    /// locale, its shorter forms, then the development locale's; `nil` when none has it.
    public func format(forKey key: String, locale: String?) -> String? {
        guard !tables.isEmpty else { return nil }
        for candidate in [locale.map(Self.normalized), developmentLocale].compactMap({ $0 }) {
            var name = Substring(candidate)
            while true {
                if let format = tables[String(name)]?[key] { return format }
                guard let cut = name.lastIndex(of: "-") else { break }
                name = name[..<cut]
            }
        }
        return nil
    }

    /// `content` with `title` and `body` resolved from `titleKey` and `bodyKey` in `locale`
    /// (the keys and arguments stay, so a subscriber can resolve them itself): the key's
    /// format filled with its arguments; else the content's own text; else the key. Content
    /// without keys comes back as it is.
    public func localized(_ content: Content, locale: String?) -> Content {
        guard content.hasLocalizableKeys else { return content }
        var resolved = content
        if let key = content.titleKey {
            resolved.title = format(forKey: key, locale: locale).map { Self.fill($0, with: content.titleArgs ?? []) }
                ?? content.title ?? key
        }
        if let key = content.bodyKey {
            resolved.body = format(forKey: key, locale: locale).map { Self.fill($0, with: content.bodyArgs ?? []) }
                ?? content.body ?? key
        }
        return resolved
    }

    /// `format` with its conversions filled from `arguments`, as `String(format:)` fills a
    /// localized format with object arguments: `%@` (and `%d`, `%i`, `%u`, `%s`, `%f`, given as
    /// text) takes the next argument, `%N$@` the N-th (from 1), `%%` is a `%`; a conversion
    /// without its argument becomes empty text, and any other `%` sequence stays as written.
    /// Total: no format, however malformed, traps.
    public static func fill(_ format: String, with arguments: [String]) -> String {
        guard format.contains("%") else { return format }
        var out = ""
        var next = 0
        var characters = format[...]
        let conversions: Set<Character> = ["@", "d", "i", "u", "s", "f"]
        while let percent = characters.firstIndex(of: "%") {
            out += characters[..<percent]
            var rest = characters[characters.index(after: percent)...]
            guard let first = rest.first else {
                out += "%"
                characters = rest
                break
            }
            if first == "%" {
                out += "%"
                characters = rest.dropFirst()
                continue
            }
            if conversions.contains(first) {
                out += next < arguments.count ? arguments[next] : ""
                next += 1
                characters = rest.dropFirst()
                continue
            }
            // A positional conversion: digits, `$`, a conversion letter.
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            rest = rest.dropFirst(digits.count)
            if !digits.isEmpty, digits.count <= 3, rest.first == "$", let letter = rest.dropFirst().first, conversions.contains(letter),
                let position = Int(digits), position >= 1
            {
                out += position <= arguments.count ? arguments[position - 1] : ""
                characters = rest.dropFirst(2)
                continue
            }
            out += "%"
            characters = characters[characters.index(after: percent)...]
        }
        out += characters
        return out
    }
}

/// A strings directory that cannot be read (``StringTables/load(directory:developmentLocale:)``).
public struct StringTablesError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the file.
    public let description: String

    init(_ description: String) { self.description = description }
}
