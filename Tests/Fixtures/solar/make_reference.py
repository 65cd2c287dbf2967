"""Writes solar_reference.json: sunrise, sunset, civil dawn, nautical dusk and solar noon (UTC)
computed with the `astral` package (3.2, NOAA's algorithm) for places from 66°S to 66°N over
2020-2031, the table Tests/ChimeCoreTests/SolarReferenceTests.swift checks ChimeCore's
SolarCalculator against (to within a minute). Run from this folder:

    pip install 'astral==3.2' && python3 make_reference.py
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from astral import Depression, Observer
from astral import sun

PLACES = [
    ("Berlin", 52.52, 13.405), ("Reykjavik", 64.1466, -21.9426), ("Nuuk", 64.1814, -51.6941),
    ("Quito", -0.1807, -78.4678), ("Sydney", -33.8688, 151.2093), ("Ushuaia", -54.8019, -68.303),
    ("Auckland", -36.8485, 174.7633), ("Honolulu", 21.3069, -157.8583), ("Anchorage", 61.2181, -149.9003),
    ("Tromso-south", 66.0, 18.95), ("Antarctic-edge", -66.0, 110.5), ("Apia", -13.8333, -171.75),
    ("Kiritimati", 1.87, -157.4), ("Singapore", 1.3521, 103.8198),
]
EVENTS = [
    ("sunrise", None, lambda o, d: sun.sunrise(o, d)),
    ("sunset", None, lambda o, d: sun.sunset(o, d)),
    ("dawn", 6.0, lambda o, d: sun.dawn(o, d, depression=Depression.CIVIL)),
    ("dusk", 12.0, lambda o, d: sun.dusk(o, d, depression=Depression.NAUTICAL)),
    ("noon", None, lambda o, d: sun.noon(o, d)),
]


def main() -> None:
    rows = []
    day = datetime.date(2020, 1, 3)
    while day <= datetime.date(2031, 12, 31):
        for name, latitude, longitude in PLACES:
            observer = Observer(latitude=latitude, longitude=longitude)
            for event, depression, compute in EVENTS:
                try:
                    moment = compute(observer, day).astimezone(datetime.timezone.utc)
                    utc = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
                except ValueError:
                    utc = None
                rows.append([name, day.isoformat(), event, utc])
        day += datetime.timedelta(days=29)
    out = Path(__file__).with_name("solar_reference.json")
    document = {
        "generator": "astral 3.2 (make_reference.py)",
        "places": {name: [latitude, longitude] for name, latitude, longitude in PLACES},
        "depressions": {event: depression for event, depression, _ in EVENTS if depression is not None},
        "rows": rows,
    }
    out.write_text(json.dumps(document, separators=(",", ":")).replace("],[", "],\n[") + "\n")
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()
