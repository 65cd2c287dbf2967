extension CoordinatorDirective {
    /// Whether this is a reply refusing a request.
    var isRefusal: Bool {
        switch self {
        case .reply(.failed, _, _): true
        case .replyEncoded(let body, _), .replyAtOnce(let body, _): body.starts(with: Array(#"{"ok":false"#.utf8))
        default: false
        }
    }
}
