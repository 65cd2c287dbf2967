#if canImport(Glibc)
import Glibc

/// glibc's `malloc_trim`, which Swift's Glibc module does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif

/// Gives memory the allocator holds free back to the system.
enum MemoryTrim {
    /// Returns free heap pages to the system (glibc `malloc_trim(0)`); nothing elsewhere.
    static func releaseFreePages() {
        #if canImport(Glibc)
        _ = glibcMallocTrim(0)
        #endif
    }
}

extension CoordinatorDirective {
    /// Whether this is a reply refusing a request.
    var isRefusal: Bool {
        switch self {
        case .reply(.failed, _, _): true
        case .replyEncoded(let body, _): body.starts(with: Array(#"{"ok":false"#.utf8))
        default: false
        }
    }
}
