/// What a monthly or yearly recurrence does in a month too short for its day of the month.
///
/// RFC 5545 §3.3.10 says recurrence instances with an invalid date "MUST be ignored", so a
/// rule on the 31st skips April, June, September, November and February; that is ``skip``.
/// ``clamp`` fires on the month's last day instead. It applies to positive `BYMONTHDAY`
/// values 29–31 and to the day a monthly or yearly rule takes from its start when it has
/// no day parts (a monthly rule started on Jan 31, a yearly one started on Feb 29).
/// Values that clamp onto the same day fire once. JSON: `"skip"` or `"clamp"`.
public enum MonthEndPolicy: String, Codable, CaseIterable, Hashable, Sendable {
    /// Ignore the missing day, as RFC 5545 §3.3.10 specifies (the default).
    case skip
    /// Fire on the last day of the shorter month (Feb 28 or 29, Apr 30, …).
    case clamp
}
