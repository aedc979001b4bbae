import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import done, load_json, parse_ts, problem, utc

P = "ops/oncall.json"
data = load_json(P)
want = [
    ("Priya", utc(2026, 3, 9, 8, 0), utc(2026, 3, 13, 17, 0)),
    ("Jonas", utc(2026, 3, 16, 8, 0), utc(2026, 3, 20, 17, 0)),
]
if data is not None:
    if not isinstance(data, list) or len(data) != 2:
        problem("expected a JSON list of two shifts")
    else:
        for got, (name, start, end) in zip(data, want):
            if not isinstance(got, dict) or got.get("name") != name:
                problem(f"expected {name}'s shift, got {got!r}")
                continue
            for key, when in (("start", start), ("end", end)):
                ts = parse_ts(got.get(key))
                if ts is None:
                    problem(f"{name}.{key} = {got.get(key)!r} is not ISO 8601 with a UTC offset")
                elif ts != when:
                    problem(f"{name}.{key} = {got.get(key)!r} is not {when.isoformat()}")
done()
