"""Oracle for Chime's iCalendar import: recurring-ical-events on its own test calendars.

For every calendar in recurring_ical_events/test/calendars prints one JSON line:
{"name", "path", "from", "to", "alarms": [...], "starts": [...]} (instants as
YYYY-MM-DDTHH:MM:SSZ, sorted) or {"name", "path", "error"} when the library refuses it.
- alarms: the instants of every VALARM occurrence (recurring_ical_events.of(calendar,
  components=["VALARM"]), which expands REPEAT/DURATION and relative triggers);
- starts: the DTSTART of every VEVENT/VTODO occurrence.
The window is [first DTSTART - 30 days, first DTSTART + 400 days); only instants inside it
count. Floating times and dates are read in X-WR-TIMEZONE when present, else UTC, as
`chime preview` does with its default --tz.
"""

import datetime
import json
import os
import sys
import zoneinfo

import icalendar
import recurring_ical_events

UTC = datetime.timezone.utc


def calendars_folder():
    return os.path.join(os.path.dirname(recurring_ical_events.__file__), "test", "calendars")


def to_utc(value, floating_zone):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=floating_zone)
        return value.astimezone(UTC)
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day, tzinfo=floating_zone).astimezone(UTC)
    return None


def text(instant):
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def first_start(calendar, floating_zone):
    starts = []
    for component in calendar.walk():
        if component.name in ("VEVENT", "VTODO") and "DTSTART" in component:
            instant = to_utc(component["DTSTART"].dt, floating_zone)
            if instant is not None:
                starts.append(instant)
    return min(starts) if starts else None


def examine(path):
    name = os.path.basename(path)
    with open(path, "rb") as file:
        calendar = icalendar.Calendar.from_ical(file.read())
    floating_zone = UTC
    if "X-WR-TIMEZONE" in calendar:
        try:
            floating_zone = zoneinfo.ZoneInfo(str(calendar["X-WR-TIMEZONE"]))
        except Exception:
            pass
    first = first_start(calendar, floating_zone)
    if first is None:
        return {"name": name, "path": path, "error": "no DTSTART"}
    low = first - datetime.timedelta(days=30)
    high = first + datetime.timedelta(days=400)
    alarms = []
    for occurrence in recurring_ical_events.of(calendar, components=["VALARM"]).between(low, high):
        for alarm in occurrence.walk("VALARM"):
            instant = to_utc(alarm["TRIGGER"].dt, floating_zone)
            if instant is not None and low <= instant < high:
                alarms.append(text(instant))
    starts = []
    for occurrence in recurring_ical_events.of(calendar, components=["VEVENT", "VTODO"]).between(low, high):
        if "DTSTART" not in occurrence:
            continue
        instant = to_utc(occurrence["DTSTART"].dt, floating_zone)
        if instant is not None and low <= instant < high:
            starts.append(text(instant))
    return {"name": name, "path": path, "from": text(low), "to": text(high),
            "alarms": sorted(alarms), "starts": sorted(starts)}


def main():
    folder = calendars_folder()
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".ics"):
            continue
        path = os.path.join(folder, name)
        try:
            result = examine(path)
        except Exception as error:  # the library refuses some deliberately broken files
            result = {"name": name, "path": path, "error": f"{type(error).__name__}: {error}"}
        print(json.dumps(result, sort_keys=True))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
