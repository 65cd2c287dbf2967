import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Windows time zone names (`W. Europe Standard Time`, as Outlook writes TZIDs) mapped to
/// IANA zone names through CLDR's windowsZones table, territory `001` (the zone Windows
/// means by the name), as ICU's `ucal_getTimeZoneIDForWindowsID` does: what `chime import`
/// hands the calendar importer (`CalendarImportOptions.windowsZoneNames`), which checks the
/// name it gets back is a zone Chime accepts.
///
/// Foundation links ICU on Linux (`lib_FoundationICU`, whose C functions carry a `swift_`
/// prefix) but exposes neither the function nor a module to import, and `TimeZone` does
/// not accept Windows names; so the function is looked up once with `dlsym` in the running
/// process (here, with the process's other facts, not in the pure `ChimeCore`). Where it is
/// missing (a toolchain that no longer ships it, a static build that does not export it)
/// ``ianaIdentifier(forWindowsName:)`` returns `nil` and a calendar's Windows zone names are
/// reported as unknown, never guessed.
public enum WindowsZoneNames {
    typealias Lookup = @convention(c) (
        UnsafePointer<UInt16>?, Int32, UnsafePointer<CChar>?, UnsafeMutablePointer<UInt16>?, Int32,
        UnsafeMutablePointer<Int32>?
    ) -> Int32

    static let lookup: Lookup? = {
        for name in ["swift_ucal_getTimeZoneIDForWindowsID", "ucal_getTimeZoneIDForWindowsID"] {
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), name) { return unsafeBitCast(symbol, to: Lookup.self) }
        }
        return nil
    }()

    /// Whether the ICU mapping is available in this process.
    public static var isAvailable: Bool { lookup != nil }

    /// The IANA zone name CLDR maps the Windows zone name `name` to (`W. Europe Standard
    /// Time` → `Europe/Berlin`); `nil` for any other text.
    public static func ianaIdentifier(forWindowsName name: String) -> String? {
        guard let lookup, !name.isEmpty, name.utf16.count < 128 else { return nil }
        let windowsName = Array(name.utf16)
        var buffer = [UInt16](repeating: 0, count: 128)
        var status: Int32 = 0
        let length = windowsName.withUnsafeBufferPointer { input in
            buffer.withUnsafeMutableBufferPointer { output in
                lookup(input.baseAddress, Int32(input.count), nil, output.baseAddress, Int32(output.count), &status)
            }
        }
        // ICU: status > 0 is an error (U_FAILURE); length 0 means no mapping.
        guard status <= 0, length > 0, Int(length) <= buffer.count else { return nil }
        return String(decoding: buffer[0..<Int(length)], as: UTF16.self)
    }
}
