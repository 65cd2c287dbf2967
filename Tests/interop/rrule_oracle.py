#!/usr/bin/env python3
"""Differential oracle for Chime's recurrence engine: python-dateutil's rrule.

Generate mode (``--seed S --count N``) draws N random recurrences (RFC 5545 RRULE parts,
RDATE, EXDATE, month-end policy) over America/New_York, Europe/London,
Australia/Lord_Howe, Pacific/Apia, Asia/Kolkata and UTC, expands each with dateutil and
prints one JSON object per line:

    {"id", "zone", "start", "rrule", "monthEnd", "rdates", "exdates", "horizon",
     "expected": [UTC instants], "probe": UTC instant or null, "probeExpected": ... or null}

Expand mode (``--expand``) reads such objects (without "expected") from stdin and prints
them with "expected" filled in; the Swift side uses it to minimise a mismatch.

Everything is seeded (``random.Random(seed)``), so a seed and a count name a run.

dateutil expands on the wall clock. Chime's documented semantics are applied on top of
that expansion here, in ``chime_instants``, and nowhere else:

* wall-clock times resolve to instants with PEP 495 ``fold=0``: a time in a gap reads
  with the offset before the transition (shifted forward by the gap's length), a time in
  an overlap maps to its first copy; this is ``ZoneRules.resolve``;
* an instance that does not fire after every earlier one is dropped (one instant fires
  once);
* MINUTELY and HOURLY rules without BYxxx parts run on elapsed time: they are expanded by
  dateutil from DTSTART converted to UTC;
* DTSTART is always the first instance and counts towards COUNT (RFC 5545 §3.8.5.3);
  dateutil leaves out a DTSTART the rule does not match, so COUNT is lowered by one then;
* a UTC UNTIL filters instants (dateutil stops at the first one past it; the two differ
  only when UNTIL falls inside a gap's shifted window);
* monthEnd=clamp (not in dateutil): BYMONTHDAY gains -1 and the extra last days are kept
  only where a value 29-31 is missing from the month;
* RDATE instants are added and EXDATE instants removed as sets, to the millisecond.

dateutil bugs that are avoided, each a documented difference with a regression test on
the Chime side (Tests/ChimeCoreTests/DateutilDifferenceTests.swift):

* BYDAY mixing plain and ordinal values (``MO,1FR``): dateutil requires a day to match
  both kinds, so the rule never matches; RFC 5545 (and Chime) take any of them. Not
  generated.
* BYWEEKNO 52, 53, -52, -53: dateutil computes the previous year's week count from the
  current year's length, and never gives the December days of next year's week 1 a
  negative number, so days near January 1st get the wrong week. Not generated.
* WEEKLY with BYSETPOS: dateutil's first week starts at DTSTART, not at WKST, so
  positions count from DTSTART; it is expanded here from the week's start instead.

Rules Chime refuses are not generated (see ``draw_rule`` and ``is_chime_valid``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import math
import random
import signal
import sys
import warnings
from zoneinfo import ZoneInfo

from dateutil import rrule as du

ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kolkata", "UTC"]
FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY"]
FREQ_WEIGHTS = [18, 24, 18, 16, 12, 12]
DU_FREQ = {"YEARLY": du.YEARLY, "MONTHLY": du.MONTHLY, "WEEKLY": du.WEEKLY, "DAILY": du.DAILY,
           "HOURLY": du.HOURLY, "MINUTELY": du.MINUTELY}
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
# How far past DTSTART occurrences are compared, by FREQ (at most 20 are compared).
HORIZON = {"YEARLY": dt.timedelta(days=366 * 40), "MONTHLY": dt.timedelta(days=366 * 8),
           "WEEKLY": dt.timedelta(days=366 * 3), "DAILY": dt.timedelta(days=400),
           "HOURLY": dt.timedelta(days=20), "MINUTELY": dt.timedelta(days=2)}
MAX_COMPARED = 20
# Firing instances to collect per rule: the compared 20 plus room for COUNT and EXDATEs.
ENOUGH = 2 * MAX_COMPARED + 5
UTC = dt.timezone.utc
STATS = {"exhausted": 0}


class ScanTimeout(Exception):
    pass


def utc_text(instant: dt.datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def resolve(wall: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """Chime's ZoneRules.resolve: fold=0 (gap: offset before; overlap: first copy)."""
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)


def parse_rrule(text: str) -> dict:
    parts = {}
    for part in text.split(";"):
        name, value = part.split("=", 1)
        parts[name] = value
    return parts


def format_rrule(parts: dict) -> str:
    order = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYMONTH", "BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY",
             "BYHOUR", "BYMINUTE", "BYSECOND", "BYSETPOS", "WKST"]
    return ";".join(f"{name}={parts[name]}" for name in order if name in parts)


def ints(text: str | None) -> list[int]:
    return [int(v) for v in text.split(",")] if text else []


SELECTORS = ["BYMONTH", "BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND", "BYSETPOS"]


# --------------------------------------------------------------------------- expansion


def dateutil_rule(parts: dict, dtstart: dt.datetime, *, count=None, until=None, monthdays=None, months=None,
                  weekday=None):
    """A dateutil rrule from RFC parts (COUNT and UNTIL passed separately)."""
    kwargs = dict(dtstart=dtstart, interval=int(parts.get("INTERVAL", 1)),
                  wkst=DAYS.index(parts.get("WKST", "MO")), cache=False)
    if count is not None:
        kwargs["count"] = count
    if until is not None:
        kwargs["until"] = until
    mapping = {"BYMONTH": "bymonth", "BYWEEKNO": "byweekno", "BYYEARDAY": "byyearday", "BYMONTHDAY": "bymonthday",
               "BYHOUR": "byhour", "BYMINUTE": "byminute", "BYSECOND": "bysecond", "BYSETPOS": "bysetpos"}
    for name, key in mapping.items():
        if name in parts:
            kwargs[key] = ints(parts[name])
    if monthdays is not None:
        kwargs["bymonthday"] = monthdays
    if months is not None:
        kwargs["bymonth"] = months
    if weekday is not None and "BYDAY" not in parts:
        kwargs["byweekday"] = [weekday]
    if "BYDAY" in parts:
        weekdays = []
        for value in parts["BYDAY"].split(","):
            day = getattr(du, value[-2:])
            weekdays.append(day(int(value[:-2])) if value[:-2] else day)
        kwargs["byweekday"] = weekdays
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return du.rrule(DU_FREQ[parts["FREQ"]], **kwargs)


def until_value(text: str, zone: ZoneInfo):
    """('utc', aware UTC datetime) or ('local', naive wall-clock datetime)."""
    if text.endswith("Z"):
        return "utc", dt.datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    if "T" in text:
        return "local", dt.datetime.strptime(text, "%Y%m%dT%H%M%S")
    return "local", dt.datetime.strptime(text, "%Y%m%d").replace(hour=23, minute=59, second=59)


def clamp_setup(parts: dict, start: dt.datetime):
    """For monthEnd=clamp: the BYMONTHDAY values to hand dateutil, Chime's values, and BYMONTH."""
    explicit = ints(parts.get("BYMONTHDAY"))
    has_day_parts = any(name in parts for name in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY"))
    months = None
    if explicit:
        values = explicit
    elif not has_day_parts and parts["FREQ"] in ("MONTHLY", "YEARLY"):
        values = [start.day]
        if parts["FREQ"] == "YEARLY" and "BYMONTH" not in parts:
            months = [start.month]
    else:
        return None, [], None
    if not any(v > 28 for v in values):
        return None, [], None
    return sorted(set(values) | {-1}), values, months


def wall_expansion(parts: dict, zone: ZoneInfo, start: dt.datetime, horizon: dt.datetime, month_end: str):
    """The wall-clock instances (naive) dateutil gives, DTSTART first, bounded for Chime."""
    dtstart = start.replace(tzinfo=zone)
    bound = horizon + dt.timedelta(days=3)
    until = None
    utc_until = None
    if "UNTIL" in parts:
        kind, value = until_value(parts["UNTIL"], zone)
        if kind == "utc":
            utc_until = value
        elif resolve(value, zone) <= bound:
            until = value.replace(tzinfo=zone)  # same tzinfo: dateutil compares wall clocks
    if until is None:
        until = bound
    monthdays, clamped, months = (None, [], None)
    if month_end == "clamp":
        monthdays, clamped, months = clamp_setup(parts, start)

    def keep(wall: dt.datetime) -> bool:
        if monthdays is None:
            return True
        length = ((wall.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)).day
        return any(v == wall.day or (v < 0 and length + v + 1 == wall.day) or (v > length and wall.day == length)
                   for v in clamped)

    # dateutil's first WEEKLY period starts at DTSTART rather than at the week's start, so
    # BYSETPOS counts from DTSTART in that week (RFC 5545 counts within the whole week):
    # expand from the week's start and drop what comes before DTSTART.
    expansion_start, weekday = dtstart, None
    if parts["FREQ"] == "WEEKLY" and "BYSETPOS" in parts:
        expansion_start -= dt.timedelta(days=(start.weekday() - DAYS.index(parts.get("WKST", "MO"))) % 7)
        weekday = start.weekday()
    rule = dateutil_rule(parts, expansion_start, until=until, monthdays=monthdays, months=months, weekday=weekday)
    raw = bounded_iteration(rule, firing_counter(zone, keep))
    walls = [x.replace(tzinfo=None) for x in raw if keep(x.replace(tzinfo=None))]
    walls = [x for x in walls if x >= start]
    matches_start = bool(walls) and walls[0] == start
    if not matches_start:
        walls.insert(0, start)
    if "COUNT" in parts:
        walls = walls[: int(parts["COUNT"])]
    return walls, utc_until


def bounded_iteration(rule, is_enough=None) -> list[dt.datetime]:
    """The results of `rule` (which has an UNTIL), until `is_enough(result)` holds.

    dateutil checks UNTIL only on results it yields, so a rule with no result after some
    point scans on to year 9999. Results up to UNTIL come within milliseconds; when the
    scan goes quiet for half a second there is none left before UNTIL, and what came is
    complete (the count of such scans goes to stderr; rule drawing keeps it near zero).
    """
    results: list[dt.datetime] = []

    def expire(signum, frame):
        raise ScanTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        for value in rule:
            results.append(value)
            if is_enough is not None and is_enough(value):
                break
    except ScanTimeout:
        STATS["exhausted"] += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return results


def firing_counter(zone: ZoneInfo, keep=lambda wall: True):
    """An `is_enough` for wall-clock results: true once ENOUGH of them would fire (kept,
    and resolving after every earlier one), which covers COUNT, EXDATEs and the compared 20
    however many a DST gap drops."""
    state = {"latest": None, "firing": 0}

    def is_enough(value: dt.datetime) -> bool:
        wall = value.replace(tzinfo=None)
        if keep(wall):
            instant = resolve(wall, zone)
            if state["latest"] is None or instant > state["latest"]:
                state["latest"] = instant
                state["firing"] += 1
        return state["firing"] >= ENOUGH

    return is_enough


def chime_instants(spec: dict) -> list[dt.datetime]:
    """The occurrences Chime must produce for a spec, by the rules in the module docstring."""
    zone = ZoneInfo(spec["zone"])
    start = dt.datetime.fromisoformat(spec["start"])
    horizon = parse_utc(spec["horizon"])
    parts = parse_rrule(spec["rrule"]) if spec["rrule"] else None
    instants: list[dt.datetime] = []
    if parts is None:
        instants = [resolve(start, zone)]
    elif parts["FREQ"] in ("MINUTELY", "HOURLY") and not any(name in parts for name in SELECTORS):
        first = resolve(start, zone)
        until = horizon + dt.timedelta(days=1)
        if "UNTIL" in parts:
            kind, value = until_value(parts["UNTIL"], zone)
            until = min(until, value if kind == "utc" else resolve(value, zone))
        count = int(parts["COUNT"]) if "COUNT" in parts else None
        instants = bounded_iteration(
            dateutil_rule(parts, first, count=count, until=max(until, first)), firing_counter(UTC))
    else:
        walls, utc_until = wall_expansion(parts, zone, start, horizon, spec.get("monthEnd", "skip"))
        latest = None
        for index, wall in enumerate(walls):
            instant = resolve(wall, zone)
            if index > 0 and utc_until is not None and instant > utc_until:
                continue
            if latest is not None and instant <= latest:
                continue
            latest = instant
            instants.append(instant)
    added = [resolve_value(v, zone) for v in spec.get("rdates", [])]
    removed = {resolve_value(v, zone) for v in spec.get("exdates", [])}
    merged = sorted(set(instants) | set(added))
    return [x for x in merged if x not in removed and x <= horizon][:MAX_COMPARED]


def resolve_value(text: str, zone: ZoneInfo) -> dt.datetime:
    if text.endswith("Z"):
        return parse_utc(text)
    return resolve(dt.datetime.fromisoformat(text), zone)


# --------------------------------------------------------------------------- generation


def pick(rng: random.Random, values, low: int, high: int) -> list:
    return sorted(rng.sample(values, rng.randint(low, high)))


def join(values) -> str:
    return ",".join(str(v) for v in values)


def signed(rng: random.Random, limit: int, negative_share: float = 0.3) -> int:
    value = rng.randint(1, limit)
    return -value if rng.random() < negative_share else value


def draw_start(rng: random.Random) -> dt.datetime:
    year = rng.randint(2000, 2035)
    # DST months and the hours around transitions are over-represented on purpose.
    month = rng.choice([3, 4, 9, 10, 11, 12]) if rng.random() < 0.5 else rng.randint(1, 12)
    day = rng.choice([rng.randint(1, 28), rng.randint(25, 31)])
    while True:
        try:
            date = dt.date(year, month, day)
            break
        except ValueError:
            day -= 1
    hour = rng.choice([0, 1, 2, 3, 4]) if rng.random() < 0.4 else rng.randint(0, 23)
    minute = rng.choice([0, 0, 15, 30, 45, rng.randint(0, 59)])
    second = rng.randint(0, 59) if rng.random() < 0.1 else 0
    return dt.datetime(date.year, date.month, date.day, hour, minute, second)


def reachable(parts: dict, start: dt.datetime) -> bool:
    """Chime's check that INTERVAL steps reach a selected value of a cyclic field: the
    minute or hour of the week (MINUTELY, HOURLY), the weekday (DAILY), the month (MONTHLY)."""
    freq, interval = parts["FREQ"], int(parts.get("INTERVAL", 1))
    hours, minutes, months = ints(parts.get("BYHOUR")), ints(parts.get("BYMINUTE")), ints(parts.get("BYMONTH"))
    weekdays = {DAYS.index(v) for v in parts.get("BYDAY", "").split(",") if len(v) == 2}

    def positions(first: int, cycle: int):
        stride = math.gcd(interval, cycle)
        return ((first + k * stride) % cycle for k in range(cycle // stride))

    if freq in ("HOURLY", "MINUTELY") and (hours or minutes or weekdays):
        unit = 60 if freq == "MINUTELY" else 3600
        first = (start.weekday() * 86400 + start.hour * 3600 + start.minute * 60) // unit
        for position in positions(first, 7 * 86400 // unit):
            second = position * unit
            hour, minute = second % 86400 // 3600, (second % 3600 // 60 if unit == 60 else start.minute)
            if ((not hours or hour in hours) and (unit == 3600 or not minutes or minute in minutes)
                    and (not weekdays or second // 86400 in weekdays)):
                return True
        return False
    if freq == "DAILY" and weekdays:
        return any(p in weekdays for p in positions(start.weekday(), 7))
    if freq == "MONTHLY" and months:
        return any(p + 1 in months for p in positions(start.month - 1, 12))
    return True


def draw_rule(rng: random.Random, start: dt.datetime) -> dict:
    freq = rng.choices(FREQS, FREQ_WEIGHTS)[0]
    parts = {"FREQ": freq}
    interval = {"MINUTELY": [1, 5, 15, 20, 45, 90, 7], "HOURLY": [1, 2, 3, 5, 7, 12]}.get(freq, [1, 2, 3])
    if rng.random() < 0.5:
        parts["INTERVAL"] = str(rng.choice(interval))
    # At most two day-level parts, in pairs that can meet: BYMONTH with BYYEARDAY or
    # BYWEEKNO, or BYYEARDAY with BYMONTHDAY, would mostly never match.
    shape = rng.choice(["month", "monthday", "day", "month+monthday", "month+day", "monthday+day", "none",
                        "weekno", "weekno+day", "yearday", "yearday+day"])
    if "weekno" in shape and freq != "YEARLY" or "yearday" in shape and freq not in ("YEARLY", "HOURLY", "MINUTELY"):
        shape = "none"
    if "monthday" in shape and freq == "WEEKLY":
        shape = shape.replace("monthday", "month")
    if "month" in shape.split("+"):
        parts["BYMONTH"] = join(pick(rng, range(1, 13), 1, 4))
    if "weekno" in shape:
        # Not 52, 53, -52 or -53: dateutil numbers the days a year shares with the previous
        # or next week-numbering year wrongly for those (see the module docstring).
        parts["BYWEEKNO"] = join(sorted({signed(rng, 51, 0.25) for _ in range(rng.randint(1, 3))}))
    if "yearday" in shape:
        parts["BYYEARDAY"] = join(sorted({signed(rng, 366) for _ in range(rng.randint(1, 4))}))
    if "monthday" in shape:
        parts["BYMONTHDAY"] = join(sorted({signed(rng, 31, 0.25) for _ in range(rng.randint(1, 4))}))
    if "day" in shape.split("+"):
        # An ordinal weekday rarely falls on given days of the month or year.
        ordinal_ok = freq in ("MONTHLY", "YEARLY") and not any(
            name in parts for name in ("BYWEEKNO", "BYMONTHDAY", "BYYEARDAY"))
        if ordinal_ok and rng.random() < 0.5:
            # dateutil intersects plain and ordinal BYDAY values (a bug: RFC 5545 means
            # any of them), so a generated BYDAY is all plain or all ordinal.
            limit = 5 if freq == "MONTHLY" or "BYMONTH" in parts else 53
            values = {f"{signed(rng, min(limit, 5) if rng.random() < 0.7 else limit, 0.4)}{rng.choice(DAYS)}"
                      for _ in range(rng.randint(1, 3))}
        else:
            values = set(rng.sample(DAYS, rng.randint(1, 4)))
        parts["BYDAY"] = join(sorted(values, key=lambda v: (DAYS.index(v[-2:]), v)))
    if freq in ("MINUTELY", "HOURLY"):
        filters = rng.random() < 0.45
        if filters:
            parts["BYHOUR"] = join(pick(rng, range(24), 1, 8))
        if freq == "MINUTELY" and rng.random() < 0.3:
            parts["BYMINUTE"] = join(pick(rng, range(60), 1, 10))
    elif rng.random() < 0.25:
        parts["BYHOUR"] = join(pick(rng, [0, 1, 2, 3, 9, 12, 18, 23], 1, 3))
        if rng.random() < 0.5:
            parts["BYMINUTE"] = join(pick(rng, [0, 15, 30, 45], 1, 2))
    if freq == "HOURLY" and rng.random() < 0.2:
        parts["BYMINUTE"] = join(pick(rng, [0, 10, 30, 50], 1, 2))
    if rng.random() < 0.05:
        parts["BYSECOND"] = str(rng.randint(0, 59))
    if any(name in parts for name in SELECTORS) and rng.random() < 0.2:
        # Positions past the instances a period holds never match (Chime refuses rules
        # where none can), so stay within a rough count of them.
        most = min(4, instances_per_period(parts))
        parts["BYSETPOS"] = join(sorted({signed(rng, most, 0.5) for _ in range(rng.randint(1, 2))}))
    if rng.random() < 0.3:
        parts["WKST"] = rng.choice(DAYS)
    end = rng.random()
    if end < 0.3:
        parts["COUNT"] = str(rng.randint(1, 25))
    elif end < 0.55:
        span = HORIZON[freq] * rng.uniform(0.05, 0.8)
        until_wall = start + span
        if rng.random() < 0.6:
            parts["UNTIL"] = (until_wall - dt.timedelta(hours=rng.randint(-14, 14))).strftime("%Y%m%dT%H%M%SZ")
        else:
            parts["UNTIL"] = until_wall.strftime("%Y%m%dT%H%M%S")
    return parts


def instances_per_period(parts: dict) -> int:
    """About how many instances a period of the rule holds, when it holds any."""
    freq = parts["FREQ"]
    weekdays = [v for v in parts.get("BYDAY", "").split(",") if v]
    plain_days = sum(1 for v in weekdays if len(v) == 2)
    times = (len(ints(parts.get("BYHOUR"))) or 1) * (len(ints(parts.get("BYMINUTE"))) or 1)
    if freq == "MINUTELY":
        return 1
    if freq == "HOURLY":
        return len(ints(parts.get("BYMINUTE"))) or 1
    if freq == "DAILY":
        return times
    if freq == "WEEKLY":
        return times * (plain_days or 1)
    days = 1
    if "BYWEEKNO" in parts:
        days = len(ints(parts["BYWEEKNO"])) * (plain_days or 7)
    elif "BYYEARDAY" in parts:
        days = 1
    elif plain_days and "BYMONTHDAY" not in parts:
        days = 4 * plain_days
    elif "BYMONTHDAY" in parts and not weekdays:
        days = len(ints(parts["BYMONTHDAY"]))
    if freq == "YEARLY" and "BYMONTH" in parts:
        days *= len(ints(parts["BYMONTH"]))
    return times * days


def is_chime_valid(parts: dict, start: dt.datetime, month_end: str) -> bool:
    """Combinations Chime refuses (and which can never match) are redrawn."""
    if not reachable(parts, start):
        return False
    months, monthdays = ints(parts.get("BYMONTH")), ints(parts.get("BYMONTHDAY"))
    if months and monthdays and month_end == "skip":
        longest = max({2: 29, 4: 30, 6: 30, 9: 30, 11: 30}.get(m, 31) for m in months)
        if not any(abs(d) <= longest for d in monthdays):
            return False
    return True


DST_ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Apia"]


@functools.lru_cache(maxsize=None)
def transitions(zone: ZoneInfo, year: int) -> list[tuple[dt.datetime, dt.timedelta]]:
    """The offset changes of `zone` in `year`: (the wall clock just before, the jump)."""
    found = []
    moment = dt.datetime(year, 1, 1, tzinfo=UTC)
    step = dt.timedelta(days=1)
    while moment.year == year:
        later = moment + step
        before, after = moment.astimezone(zone).utcoffset(), later.astimezone(zone).utcoffset()
        if before != after:
            low, high = moment, later
            while high - low > dt.timedelta(minutes=1):
                middle = low + (high - low) / 2
                if middle.astimezone(zone).utcoffset() == before:
                    low = middle
                else:
                    high = middle
            wall = (high.astimezone(zone).replace(tzinfo=None) - (after - before))
            found.append((wall.replace(second=0, microsecond=0), after - before))
        moment = later
    return found


def draw_dst_spec(rng: random.Random) -> tuple[str, dt.datetime, dict] | None:
    """A rule aimed at a DST gap or overlap: its wall-clock times fall inside the skipped
    or repeated interval on the transition day."""
    zone_name = rng.choice(DST_ZONES)
    zone = ZoneInfo(zone_name)
    year = rng.randint(2011, 2020) if zone_name == "Pacific/Apia" else rng.randint(2000, 2035)
    changes = transitions(zone, year)
    if not changes:
        return None
    wall, jump = rng.choice(changes)
    length = abs(int(jump.total_seconds())) // 60
    # Inside the skipped or repeated interval, at its edges, or just around it.
    offset = rng.choice([0, length // 2, max(0, length - 1), rng.randint(0, length), -rng.randint(1, 60), length])
    moment = wall + dt.timedelta(minutes=offset)
    freq = rng.choice(["DAILY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY", "MINUTELY"])
    parts = {"FREQ": freq}
    if freq == "DAILY":
        start = moment - dt.timedelta(days=rng.randint(0, 4))
    elif freq == "WEEKLY":
        start = moment - dt.timedelta(days=7 * rng.randint(0, 3))
    elif freq == "MONTHLY":
        parts["BYDAY"] = weekday_ordinal(moment)
        start = moment.replace(month=max(1, moment.month - rng.randint(0, 2)), day=1)
    elif freq == "YEARLY":
        parts["BYMONTH"] = str(moment.month)
        parts["BYDAY"] = weekday_ordinal(moment)
        start = moment.replace(year=moment.year - rng.randint(0, 3), day=1)
    else:
        start = moment - dt.timedelta(hours=rng.randint(0, 3), minutes=rng.choice([0, 15, 30]))
        if freq == "MINUTELY":
            parts["INTERVAL"] = str(rng.choice([1, 10, 15, 30, 45]))
        else:
            parts["INTERVAL"] = str(rng.choice([1, 1, 2]))
    if freq in ("DAILY", "WEEKLY", "MONTHLY", "YEARLY") and rng.random() < 0.4:
        # Several times around the transition, some of which resolve to one instant.
        hour = moment.hour
        parts["BYHOUR"] = join(sorted({(hour + d) % 24 for d in (-1, 0, 1) if rng.random() < 0.7} | {hour}))
        parts["BYMINUTE"] = join(sorted({moment.minute, rng.choice([0, 15, 30, 45])}))
    elif freq in ("HOURLY", "MINUTELY") and rng.random() < 0.4:
        parts["BYHOUR"] = join(sorted({moment.hour, (moment.hour + 1) % 24, (moment.hour + 23) % 24}))
    if rng.random() < 0.3:
        parts["COUNT"] = str(rng.randint(2, 20))
    start = start.replace(second=0, microsecond=0)
    if not reachable(parts, start):
        return None
    return zone_name, start, parts


def weekday_ordinal(moment: dt.datetime) -> str:
    """`2SU` or `-1SU`: the BYDAY value naming `moment`'s day within its month."""
    month_length = ((moment.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)).day
    ordinal = -1 if moment.day + 7 > month_length else (moment.day - 1) // 7 + 1
    return f"{ordinal}{DAYS[moment.weekday()]}"


def synchronized(parts: dict, start: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """The rule's first wall-clock instance at or after `start`, so DTSTART matches it."""
    probe = {name: value for name, value in parts.items() if name not in ("COUNT", "UNTIL")}
    rule = dateutil_rule(probe, start.replace(tzinfo=zone), until=resolve(start, zone) + HORIZON[parts["FREQ"]])
    first = bounded_iteration(rule, lambda value: True)
    return first[0].replace(tzinfo=None) if first else start


def draw_spec(rng: random.Random, index: int) -> dict:
    targeted = draw_dst_spec(rng) if rng.random() < 0.3 else None
    if targeted:
        zone_name, start, parts = targeted
        month_end = "skip"
    else:
        zone_name = rng.choice(ZONES)
        start = draw_start(rng)
        while True:
            parts = draw_rule(rng, start)
            month_end = "clamp" if parts["FREQ"] in ("MONTHLY", "YEARLY") and rng.random() < 0.25 else "skip"
            if month_end == "clamp" and "BYSETPOS" in parts:
                month_end = "skip"  # clamping is emulated by filtering, which BYSETPOS would see
            if is_chime_valid(parts, start, month_end):
                break
        if month_end == "clamp" and rng.random() < 0.5 and start.month not in (2, 4, 6, 9, 11):
            start = start.replace(day=28 + rng.randint(1, 3))
        if rng.random() < 0.5 and month_end == "skip":
            # Half the rules start on an instance of their own, as RFC 5545 says DTSTART should.
            start = synchronized(parts, start, ZoneInfo(zone_name))
    if "UNTIL" in parts:
        # Chime refuses an UNTIL before the start (the rule could never fire): compared as
        # instants for a UTC UNTIL, as wall clocks for a local one.
        kind, value = until_value(parts["UNTIL"], ZoneInfo(zone_name))
        if value < (resolve(start, ZoneInfo(zone_name)) if kind == "utc" else start):
            del parts["UNTIL"]
    horizon = resolve(start, ZoneInfo(zone_name)) + HORIZON[parts["FREQ"]]
    spec = {"id": index, "zone": zone_name, "start": start.isoformat(), "rrule": format_rrule(parts),
            "monthEnd": month_end, "rdates": [], "exdates": [], "horizon": utc_text(horizon)}
    if rng.random() < 0.15:
        first = resolve(start, ZoneInfo(zone_name))
        for _ in range(rng.randint(1, 3)):
            moment = first + (horizon - first) * rng.uniform(0, 0.3)
            moment = moment.replace(second=0, microsecond=0)
            wall = moment.astimezone(ZoneInfo(zone_name)).replace(tzinfo=None)
            spec["rdates"].append(utc_text(moment) if rng.random() < 0.5 else wall.isoformat())
    return spec


def add_exdates(rng: random.Random, spec: dict, instants: list[dt.datetime]) -> None:
    if instants and rng.random() < 0.15:
        zone = ZoneInfo(spec["zone"])
        for instant in rng.sample(instants, min(len(instants), rng.randint(1, 3))):
            wall = instant.astimezone(zone).replace(tzinfo=None)
            # A local EXDATE names the wall clock; Chime resolves it like any other.
            spec["exdates"].append(utc_text(instant) if rng.random() < 0.5 else wall.isoformat())


def complete(spec: dict, rng: random.Random | None) -> dict:
    instants = chime_instants(spec)
    if rng is not None:
        add_exdates(rng, spec, instants)
        if spec["exdates"]:
            instants = chime_instants(spec)
    spec["expected"] = [utc_text(x) for x in instants]
    spec["probe"] = None
    spec["probeExpected"] = None
    if rng is not None and len(instants) >= 2:
        low, high = instants[0] - dt.timedelta(hours=1), instants[-1]
        probe = (low + (high - low) * rng.random()).replace(microsecond=0)
        spec["probe"] = utc_text(probe)
        spec["probeExpected"] = next(utc_text(x) for x in instants if x >= probe)
    return spec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--expand", action="store_true", help="read specs from stdin, print them expanded")
    arguments = parser.parse_args()
    out = sys.stdout
    if arguments.expand:
        for line in sys.stdin:
            if line.strip():
                out.write(json.dumps(complete(json.loads(line), None)) + "\n")
        return 0
    rng = random.Random(arguments.seed)
    for index in range(arguments.count):
        out.write(json.dumps(complete(draw_spec(rng, index), rng)) + "\n")
    print(f"rrule_oracle: {arguments.count} rules, {STATS['exhausted']} scanned to exhaustion", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
