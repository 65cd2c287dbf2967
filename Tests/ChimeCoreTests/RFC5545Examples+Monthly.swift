/// The recurrence examples of RFC 5545 §3.8.5.3 ("All examples assume the Eastern United
/// States time zone"): DTSTART in America/New_York, expected instants in UTC as the RFC
/// lists them (EDT is UTC−4, EST UTC−5). Lists the RFC leaves open ("forever", "...") are
/// cut where its text stops.
extension RFC5545Example {
    /// MONTHLY and YEARLY examples, in the RFC's order.
    static let monthlyAndYearly: [RFC5545Example] = [
        RFC5545Example(
            "Every day in January, for 3 years (yearly form)",
            start: "1998-01-01T09:00", rrule: "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
            expected: [
                "1998-01-01T14:00:00Z", "1998-01-02T14:00:00Z", "1998-01-03T14:00:00Z", "1998-01-04T14:00:00Z",
                "1998-01-05T14:00:00Z", "1998-01-06T14:00:00Z", "1998-01-07T14:00:00Z", "1998-01-08T14:00:00Z",
                "1998-01-09T14:00:00Z", "1998-01-10T14:00:00Z", "1998-01-11T14:00:00Z", "1998-01-12T14:00:00Z",
                "1998-01-13T14:00:00Z", "1998-01-14T14:00:00Z", "1998-01-15T14:00:00Z", "1998-01-16T14:00:00Z",
                "1998-01-17T14:00:00Z", "1998-01-18T14:00:00Z", "1998-01-19T14:00:00Z", "1998-01-20T14:00:00Z",
                "1998-01-21T14:00:00Z", "1998-01-22T14:00:00Z", "1998-01-23T14:00:00Z", "1998-01-24T14:00:00Z",
                "1998-01-25T14:00:00Z", "1998-01-26T14:00:00Z", "1998-01-27T14:00:00Z", "1998-01-28T14:00:00Z",
                "1998-01-29T14:00:00Z", "1998-01-30T14:00:00Z", "1998-01-31T14:00:00Z", "1999-01-01T14:00:00Z",
                "1999-01-02T14:00:00Z", "1999-01-03T14:00:00Z", "1999-01-04T14:00:00Z", "1999-01-05T14:00:00Z",
                "1999-01-06T14:00:00Z", "1999-01-07T14:00:00Z", "1999-01-08T14:00:00Z", "1999-01-09T14:00:00Z",
                "1999-01-10T14:00:00Z", "1999-01-11T14:00:00Z", "1999-01-12T14:00:00Z", "1999-01-13T14:00:00Z",
                "1999-01-14T14:00:00Z", "1999-01-15T14:00:00Z", "1999-01-16T14:00:00Z", "1999-01-17T14:00:00Z",
                "1999-01-18T14:00:00Z", "1999-01-19T14:00:00Z", "1999-01-20T14:00:00Z", "1999-01-21T14:00:00Z",
                "1999-01-22T14:00:00Z", "1999-01-23T14:00:00Z", "1999-01-24T14:00:00Z", "1999-01-25T14:00:00Z",
                "1999-01-26T14:00:00Z", "1999-01-27T14:00:00Z", "1999-01-28T14:00:00Z", "1999-01-29T14:00:00Z",
                "1999-01-30T14:00:00Z", "1999-01-31T14:00:00Z", "2000-01-01T14:00:00Z", "2000-01-02T14:00:00Z",
                "2000-01-03T14:00:00Z", "2000-01-04T14:00:00Z", "2000-01-05T14:00:00Z", "2000-01-06T14:00:00Z",
                "2000-01-07T14:00:00Z", "2000-01-08T14:00:00Z", "2000-01-09T14:00:00Z", "2000-01-10T14:00:00Z",
                "2000-01-11T14:00:00Z", "2000-01-12T14:00:00Z", "2000-01-13T14:00:00Z", "2000-01-14T14:00:00Z",
                "2000-01-15T14:00:00Z", "2000-01-16T14:00:00Z", "2000-01-17T14:00:00Z", "2000-01-18T14:00:00Z",
                "2000-01-19T14:00:00Z", "2000-01-20T14:00:00Z", "2000-01-21T14:00:00Z", "2000-01-22T14:00:00Z",
                "2000-01-23T14:00:00Z", "2000-01-24T14:00:00Z", "2000-01-25T14:00:00Z", "2000-01-26T14:00:00Z",
                "2000-01-27T14:00:00Z", "2000-01-28T14:00:00Z", "2000-01-29T14:00:00Z", "2000-01-30T14:00:00Z",
                "2000-01-31T14:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the first Friday for 10 occurrences",
            start: "1997-09-05T09:00", rrule: "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
            expected: [
                "1997-09-05T13:00:00Z", "1997-10-03T13:00:00Z", "1997-11-07T14:00:00Z", "1997-12-05T14:00:00Z",
                "1998-01-02T14:00:00Z", "1998-02-06T14:00:00Z", "1998-03-06T14:00:00Z", "1998-04-03T14:00:00Z",
                "1998-05-01T13:00:00Z", "1998-06-05T13:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the first Friday until December 24, 1997",
            start: "1997-09-05T09:00", rrule: "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR",
            expected: [
                "1997-09-05T13:00:00Z", "1997-10-03T13:00:00Z", "1997-11-07T14:00:00Z", "1997-12-05T14:00:00Z",
            ]),
        RFC5545Example(
            "Every other month on the first and last Sunday for 10 occurrences",
            start: "1997-09-07T09:00", rrule: "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
            expected: [
                "1997-09-07T13:00:00Z", "1997-09-28T13:00:00Z", "1997-11-02T14:00:00Z", "1997-11-30T14:00:00Z",
                "1998-01-04T14:00:00Z", "1998-01-25T14:00:00Z", "1998-03-01T14:00:00Z", "1998-03-29T14:00:00Z",
                "1998-05-03T13:00:00Z", "1998-05-31T13:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the second-to-last Monday for 6 months",
            start: "1997-09-22T09:00", rrule: "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
            expected: [
                "1997-09-22T13:00:00Z", "1997-10-20T13:00:00Z", "1997-11-17T14:00:00Z", "1997-12-22T14:00:00Z",
                "1998-01-19T14:00:00Z", "1998-02-16T14:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the third-to-the-last day, forever",
            start: "1997-09-28T09:00", rrule: "FREQ=MONTHLY;BYMONTHDAY=-3",
            expected: [
                "1997-09-28T13:00:00Z", "1997-10-29T14:00:00Z", "1997-11-28T14:00:00Z", "1997-12-29T14:00:00Z",
                "1998-01-29T14:00:00Z", "1998-02-26T14:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the 2nd and 15th for 10 occurrences",
            start: "1997-09-02T09:00", rrule: "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
            expected: [
                "1997-09-02T13:00:00Z", "1997-09-15T13:00:00Z", "1997-10-02T13:00:00Z", "1997-10-15T13:00:00Z",
                "1997-11-02T14:00:00Z", "1997-11-15T14:00:00Z", "1997-12-02T14:00:00Z", "1997-12-15T14:00:00Z",
                "1998-01-02T14:00:00Z", "1998-01-15T14:00:00Z",
            ]),
        RFC5545Example(
            "Monthly on the first and last day for 10 occurrences",
            start: "1997-09-30T09:00", rrule: "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
            expected: [
                "1997-09-30T13:00:00Z", "1997-10-01T13:00:00Z", "1997-10-31T14:00:00Z", "1997-11-01T14:00:00Z",
                "1997-11-30T14:00:00Z", "1997-12-01T14:00:00Z", "1997-12-31T14:00:00Z", "1998-01-01T14:00:00Z",
                "1998-01-31T14:00:00Z", "1998-02-01T14:00:00Z",
            ]),
        RFC5545Example(
            "Every 18 months on the 10th thru 15th for 10 occurrences",
            start: "1997-09-10T09:00", rrule: "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
            expected: [
                "1997-09-10T13:00:00Z", "1997-09-11T13:00:00Z", "1997-09-12T13:00:00Z", "1997-09-13T13:00:00Z",
                "1997-09-14T13:00:00Z", "1997-09-15T13:00:00Z", "1999-03-10T14:00:00Z", "1999-03-11T14:00:00Z",
                "1999-03-12T14:00:00Z", "1999-03-13T14:00:00Z",
            ]),
        RFC5545Example(
            "Every Tuesday, every other month",
            start: "1997-09-02T09:00", rrule: "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
            expected: [
                "1997-09-02T13:00:00Z", "1997-09-09T13:00:00Z", "1997-09-16T13:00:00Z", "1997-09-23T13:00:00Z",
                "1997-09-30T13:00:00Z", "1997-11-04T14:00:00Z", "1997-11-11T14:00:00Z", "1997-11-18T14:00:00Z",
                "1997-11-25T14:00:00Z", "1998-01-06T14:00:00Z", "1998-01-13T14:00:00Z", "1998-01-20T14:00:00Z",
                "1998-01-27T14:00:00Z", "1998-03-03T14:00:00Z", "1998-03-10T14:00:00Z", "1998-03-17T14:00:00Z",
                "1998-03-24T14:00:00Z", "1998-03-31T14:00:00Z",
            ]),
        RFC5545Example(
            "Yearly in June and July for 10 occurrences",
            start: "1997-06-10T09:00", rrule: "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
            expected: [
                "1997-06-10T13:00:00Z", "1997-07-10T13:00:00Z", "1998-06-10T13:00:00Z", "1998-07-10T13:00:00Z",
                "1999-06-10T13:00:00Z", "1999-07-10T13:00:00Z", "2000-06-10T13:00:00Z", "2000-07-10T13:00:00Z",
                "2001-06-10T13:00:00Z", "2001-07-10T13:00:00Z",
            ]),
        RFC5545Example(
            "Every other year on January, February and March for 10 occurrences",
            start: "1997-03-10T09:00", rrule: "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
            expected: [
                "1997-03-10T14:00:00Z", "1999-01-10T14:00:00Z", "1999-02-10T14:00:00Z", "1999-03-10T14:00:00Z",
                "2001-01-10T14:00:00Z", "2001-02-10T14:00:00Z", "2001-03-10T14:00:00Z", "2003-01-10T14:00:00Z",
                "2003-02-10T14:00:00Z", "2003-03-10T14:00:00Z",
            ]),
        RFC5545Example(
            "Every third year on the 1st, 100th and 200th day for 10 occurrences",
            start: "1997-01-01T09:00", rrule: "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
            expected: [
                "1997-01-01T14:00:00Z", "1997-04-10T13:00:00Z", "1997-07-19T13:00:00Z", "2000-01-01T14:00:00Z",
                "2000-04-09T13:00:00Z", "2000-07-18T13:00:00Z", "2003-01-01T14:00:00Z", "2003-04-10T13:00:00Z",
                "2003-07-19T13:00:00Z", "2006-01-01T14:00:00Z",
            ]),
        RFC5545Example(
            "Every 20th Monday of the year, forever",
            start: "1997-05-19T09:00", rrule: "FREQ=YEARLY;BYDAY=20MO",
            expected: [
                "1997-05-19T13:00:00Z", "1998-05-18T13:00:00Z", "1999-05-17T13:00:00Z",
            ]),
        RFC5545Example(
            "Monday of week number 20, forever",
            start: "1997-05-12T09:00", rrule: "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
            expected: [
                "1997-05-12T13:00:00Z", "1998-05-11T13:00:00Z", "1999-05-17T13:00:00Z",
            ]),
        RFC5545Example(
            "Every Thursday in March, forever",
            start: "1997-03-13T09:00", rrule: "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
            expected: [
                "1997-03-13T14:00:00Z", "1997-03-20T14:00:00Z", "1997-03-27T14:00:00Z", "1998-03-05T14:00:00Z",
                "1998-03-12T14:00:00Z", "1998-03-19T14:00:00Z", "1998-03-26T14:00:00Z", "1999-03-04T14:00:00Z",
                "1999-03-11T14:00:00Z", "1999-03-18T14:00:00Z", "1999-03-25T14:00:00Z",
            ]),
        RFC5545Example(
            "Every Thursday, but only during June, July and August, forever",
            start: "1997-06-05T09:00", rrule: "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
            expected: [
                "1997-06-05T13:00:00Z", "1997-06-12T13:00:00Z", "1997-06-19T13:00:00Z", "1997-06-26T13:00:00Z",
                "1997-07-03T13:00:00Z", "1997-07-10T13:00:00Z", "1997-07-17T13:00:00Z", "1997-07-24T13:00:00Z",
                "1997-07-31T13:00:00Z", "1997-08-07T13:00:00Z", "1997-08-14T13:00:00Z", "1997-08-21T13:00:00Z",
                "1997-08-28T13:00:00Z", "1998-06-04T13:00:00Z", "1998-06-11T13:00:00Z", "1998-06-18T13:00:00Z",
                "1998-06-25T13:00:00Z", "1998-07-02T13:00:00Z", "1998-07-09T13:00:00Z", "1998-07-16T13:00:00Z",
                "1998-07-23T13:00:00Z", "1998-07-30T13:00:00Z", "1998-08-06T13:00:00Z", "1998-08-13T13:00:00Z",
                "1998-08-20T13:00:00Z", "1998-08-27T13:00:00Z", "1999-06-03T13:00:00Z", "1999-06-10T13:00:00Z",
                "1999-06-17T13:00:00Z", "1999-06-24T13:00:00Z", "1999-07-01T13:00:00Z", "1999-07-08T13:00:00Z",
                "1999-07-15T13:00:00Z", "1999-07-22T13:00:00Z", "1999-07-29T13:00:00Z", "1999-08-05T13:00:00Z",
                "1999-08-12T13:00:00Z", "1999-08-19T13:00:00Z", "1999-08-26T13:00:00Z",
            ]),
        // Not synchronized: DTSTART (a Tuesday) is no Friday the 13th, which RFC 5545
        // §3.8.5.3 leaves undefined; the RFC hides it with an EXDATE. Chime always keeps
        // DTSTART as the first instance, so the EXDATE is what removes it here too.
        RFC5545Example(
            "Every Friday the 13th, forever",
            start: "1997-09-02T09:00", rrule: "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", exdates: ["1997-09-02T09:00:00"],
            expected: [
                "1998-02-13T14:00:00Z", "1998-03-13T14:00:00Z", "1998-11-13T14:00:00Z", "1999-08-13T13:00:00Z",
                "2000-10-13T13:00:00Z",
            ]),
        RFC5545Example(
            "The first Saturday that follows the first Sunday of the month, forever",
            start: "1997-09-13T09:00", rrule: "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
            expected: [
                "1997-09-13T13:00:00Z", "1997-10-11T13:00:00Z", "1997-11-08T14:00:00Z", "1997-12-13T14:00:00Z",
                "1998-01-10T14:00:00Z", "1998-02-07T14:00:00Z", "1998-03-07T14:00:00Z", "1998-04-11T13:00:00Z",
                "1998-05-09T13:00:00Z", "1998-06-13T13:00:00Z",
            ]),
        RFC5545Example(
            "Every 4 years, the first Tuesday after a Monday in November, forever",
            start: "1996-11-05T09:00", rrule: "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
            expected: [
                "1996-11-05T14:00:00Z", "2000-11-07T14:00:00Z", "2004-11-02T14:00:00Z",
            ]),
        RFC5545Example(
            "The third instance of Tuesday, Wednesday or Thursday, for the next 3 months",
            start: "1997-09-04T09:00", rrule: "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
            expected: [
                "1997-09-04T13:00:00Z", "1997-10-07T13:00:00Z", "1997-11-06T14:00:00Z",
            ]),
        RFC5545Example(
            "The second-to-last weekday of the month",
            start: "1997-09-29T09:00", rrule: "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
            expected: [
                "1997-09-29T13:00:00Z", "1997-10-30T14:00:00Z", "1997-11-27T14:00:00Z", "1997-12-30T14:00:00Z",
                "1998-01-29T14:00:00Z", "1998-02-26T14:00:00Z", "1998-03-30T14:00:00Z",
            ]),
        RFC5545Example(
            "An invalid date (February 30) is ignored",
            start: "2007-01-15T09:00", rrule: "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
            expected: [
                "2007-01-15T14:00:00Z", "2007-01-30T14:00:00Z", "2007-02-15T14:00:00Z", "2007-03-15T13:00:00Z",
                "2007-03-30T13:00:00Z",
            ]),
    ]
}
