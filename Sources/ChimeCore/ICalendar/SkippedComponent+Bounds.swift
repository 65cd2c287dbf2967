extension SkippedComponent {
    /// The most Unicode scalars of a component's UID or SUMMARY echoed in a skipped entry:
    /// 200, then `…` (an `.ics` may carry a 20 MB SUMMARY, which was echoed whole).
    public static let maximumEchoedScalars = 200
    /// The most Unicode scalars of a reason, which may quote a value (a TZID, a rule): 400,
    /// then `…`.
    public static let maximumReasonScalars = 400

    /// A skipped entry with its UID, SUMMARY and reason cut to their bounds.
    init(echoingUID uid: String, summary: String?, reason: String) {
        self.init(
            uid: Self.bounded(uid, to: Self.maximumEchoedScalars),
            summary: summary.map { Self.bounded($0, to: Self.maximumEchoedScalars) },
            reason: Self.bounded(reason, to: Self.maximumReasonScalars))
    }

    /// `text` when it has at most `limit` Unicode scalars, else its first `limit` and `…`.
    /// Counts scalars, not characters: a crafted run of combining marks is one character of
    /// any length, so a character bound would not bound the bytes.
    static func bounded(_ text: String, to limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
            end != scalars.endIndex
        else { return text }
        var cut = String.UnicodeScalarView(scalars[..<end])
        cut.append("…")
        return String(cut)
    }
}
