import Foundation
import Testing

/// The C shims keep no state (the libcrypto crash of 80831e3's release build): a `static`
/// inside a `static inline` function is copied into every object file that inlines it, and a
/// release build (whole-module optimization, one object file per source file) made two
/// copies of libcrypto's table, one loaded and one called. Debug builds have one copy, so no
/// test that runs a debug build sees the crash: this checks the headers instead.
@Suite struct ShimStateTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test(arguments: ["COpenSSL/shim.h", "CCurl/shim.h"])
    func aShimHeaderHasNoStaticInsideAFunction(_ header: String) throws {
        let text = try String(contentsOf: Self.sources.appendingPathComponent(header), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        #expect(lines.count > 50, "read \(header)")
        let functionStatics = lines.enumerated().filter { $0.element.hasPrefix(" ") && $0.element.trimmingCharacters(in: .whitespaces).hasPrefix("static ") }
        #expect(functionStatics.isEmpty, "\(header): \(functionStatics.map { "line \($0.offset + 1): \($0.element)" })")
        #expect(!text.contains("pthread_once"), "\(header) loads once through the Swift side's global, not pthread_once")
    }
}
