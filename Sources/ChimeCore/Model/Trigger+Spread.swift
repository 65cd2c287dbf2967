import Foundation

/// Spread (JSON `"spread"`, seconds or a duration such as `"15m"`): each occurrence fires a
/// deterministic delay after its instant, in `[0, spread)`, so a burst of reminders due at
/// one instant (09:00 for a million recipients in one zone) reaches the workers over the
/// bound instead of at once (systemd's `RandomizedDelaySec`, Temporal's schedule jitter).
///
/// The delay is derived from the occurrence's *nominal firing id* — the id it would have
/// without spread, `<recipient>/<id>@<event − before>` — and nothing else, so a replay, a
/// failover, another shard after a slot move and `preview` all compute the same instant:
///
///     h     = fmix32(CRC-32C(UTF-8 of the nominal firing id text))
///     delay = floor(h × floor(spread × 1000) / 2³²) milliseconds
///
/// where CRC-32C is ``CRC32C`` and `fmix32` is MurmurHash3's 32-bit finaliser
/// (`h ^= h >> 16; h *= 0x85EBCA6B; h ^= h >> 13; h *= 0xC2B2AE35; h ^= h >> 16`, wrapping),
/// which spreads the checksum's low-entropy differences (ids `user1`, `user2`, …) over the
/// whole range. The firing's own id names the delayed instant.
extension Trigger {
    /// The longest spread accepted, in seconds (one day).
    public static let maximumSpread: Double = 86_400

    /// The delay spread adds to the occurrence of `key` whose un-spread fire instant is
    /// `nominal`, in whole seconds of milliseconds (0 without spread); see the type's notes.
    public func spreadDelay(of key: ReminderKey, nominalFireInstant nominal: Date) -> Double {
        guard let spread, spread > 0 else { return 0 }
        return Self.spreadDelay(of: FiringID(key, dueAt: nominal), spread: spread)
    }

    /// The delay, in seconds (whole milliseconds), that a spread of `spread` seconds gives the
    /// firing whose nominal id is `nominal`.
    public static func spreadDelay(of nominal: FiringID, spread: Double) -> Double {
        let bound = UInt64(max(0, min(spread, maximumSpread)) * 1000)
        let milliseconds = (UInt64(spreadHash(of: nominal)) &* bound) >> 32
        return Double(milliseconds) / 1000
    }

    /// `fmix32(CRC-32C(text))` of the id's text: the fixed, documented hash the delay uses.
    public static func spreadHash(of nominal: FiringID) -> UInt32 {
        var hash = CRC32C.checksum(Array(nominal.text.utf8))
        hash ^= hash >> 16
        hash = hash &* 0x85EB_CA6B
        hash ^= hash >> 13
        hash = hash &* 0xC2B2_AE35
        hash ^= hash >> 16
        return hash
    }

    /// When `key`'s firing for the event at `eventInstant` fires: the event less the
    /// remind-before offset, plus the spread delay (UTC). A spread firing is due at a whole
    /// millisecond (its firing id's), so it reads back from any text form unchanged.
    public func fireInstant(eventInstant: Date, of key: ReminderKey) -> Date {
        let nominal = fireInstant(eventInstant: eventInstant)
        guard spread != nil else { return nominal }
        let delay = Int64((spreadDelay(of: key, nominalFireInstant: nominal) * 1000).rounded())
        return Date.wholeMillisecond(RFC3339.unixMilliseconds(of: nominal) + delay)
    }

    /// The earliest event whose spread firing could be at or after `fireInstant`: the event of
    /// a nominal firing a whole spread earlier (a firing is at most that late).
    public func earliestEvent(firingOnOrAfter fireInstant: Date) -> Date {
        eventInstant(fireInstant: fireInstant).addingTimeInterval(-(spread ?? 0))
    }

    /// The first event (index ≥ `fromIndex`) of `recurrence` whose firing for `key`, spread
    /// included, is at or after `instant`; `nil` when the sequence has ended. Without spread,
    /// ``firstEvent(firingOnOrAfter:in:fromIndex:)``; with it, the events of the spread's
    /// window before `instant` are walked (at most a day of them).
    public func firstEvent(firingOnOrAfter instant: Date, in recurrence: Recurrence, of key: ReminderKey, fromIndex: Int = 0)
        -> Occurrence?
    {
        guard spread != nil else { return firstEvent(firingOnOrAfter: instant, in: recurrence, fromIndex: fromIndex) }
        let nominalBound = eventInstant(fireInstant: instant)
        var candidate = recurrence.firstOccurrence(onOrAfter: earliestEvent(firingOnOrAfter: instant), fromIndex: fromIndex)
        while let occurrence = candidate, occurrence.instant < nominalBound,
            fireInstant(eventInstant: occurrence.instant, of: key) < instant
        {
            candidate = recurrence.nextOccurrence(after: occurrence)
        }
        return candidate
    }

    /// The event `key`'s firing at `fireInstant` reminds of: with spread, the occurrence of
    /// `recurrence` whose spread firing is exactly there (searched in the spread's window);
    /// otherwise, or when none is, `eventInstant(fireInstant:)`.
    public func eventInstant(fireInstant: Date, of key: ReminderKey, in recurrence: Recurrence?) -> Date {
        guard spread != nil, let recurrence else { return eventInstant(fireInstant: fireInstant) }
        let latest = eventInstant(fireInstant: fireInstant)
        var candidate = recurrence.firstOccurrence(onOrAfter: earliestEvent(firingOnOrAfter: fireInstant))
        while let occurrence = candidate, occurrence.instant <= latest {
            if self.fireInstant(eventInstant: occurrence.instant, of: key) == fireInstant { return occurrence.instant }
            candidate = recurrence.nextOccurrence(after: occurrence)
        }
        return latest
    }

    /// Checks that the spread, when present, is more than 0 s and at most a day.
    /// - Throws: `ValidationError` `.invalidArgument` with field `trigger.spread`.
    public func validateSpread() throws(ValidationError) {
        guard let spread else { return }
        guard spread.isFinite, spread > 0, spread <= Self.maximumSpread else {
            throw ValidationError(
                .invalidArgument, field: "trigger.spread",
                "spread must be more than 0 s and at most 1 day, not \(DurationParser.format(seconds: spread))")
        }
    }

    /// Parses the command line's `--spread DURATION` into seconds (`15m` → 900).
    /// - Throws: `ValidationError` `.invalidArgument` (field `trigger.spread`) for a malformed
    ///   or out-of-range duration.
    public static func parseSpread(_ text: String) throws(ValidationError) -> Double {
        let seconds: Double
        do {
            seconds = try DurationParser.parseSeconds(text)
        } catch {
            throw ValidationError(error.code, field: "trigger.spread", error.message)
        }
        var probe = Trigger(start: .instant(Date(timeIntervalSinceReferenceDate: 0)))
        probe.spread = seconds
        try probe.validateSpread()
        return seconds
    }
}

extension Reminder {
    /// When this reminder's firing for the event at `eventInstant` fires: remind-before and
    /// spread applied (``Trigger/fireInstant(eventInstant:of:)``), UTC.
    public func fireInstant(eventInstant: Date) -> Date {
        trigger.fireInstant(eventInstant: eventInstant, of: key)
    }
}

extension Date {
    /// The instant `milliseconds` after 1970-01-01T00:00:00Z, built as RFC 3339 parsing builds
    /// it (whole seconds from the reference date, then the fraction), so it equals, bit for bit,
    /// the instant its millisecond text reads back as.
    public static func wholeMillisecond(_ milliseconds: Int64) -> Date {
        let (seconds, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = remainder < 0 ? seconds - 1 : seconds
        let fraction = remainder < 0 ? remainder + 1000 : remainder
        return Date(timeIntervalSinceReferenceDate: Double(whole - Int64(CivilCalendar.unixToReferenceDate)) + Double(fraction) / 1000)
    }

    /// This instant rounded to its whole millisecond (as a firing id names it).
    public var roundedToMillisecond: Date { .wholeMillisecond(RFC3339.unixMilliseconds(of: self)) }
}
