"""Helpers for the scenario checkers (standard library only). A checker exits 0 when the round passes."""

import csv
import json
import os
import re
import sys
from datetime import UTC, datetime

ISO_OFFSET = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$")
PROBLEMS = []


def problem(msg):
    PROBLEMS.append(msg)


def done():
    if PROBLEMS:
        for p in PROBLEMS:
            print("FAIL:", p)
        sys.exit(1)
    print("PASS")
    sys.exit(0)


def load_json(path):
    if not os.path.isfile(path):
        problem(f"{path} does not exist")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except ValueError as e:
        problem(f"{path} is not valid JSON: {e}")
        return None


def load_csv(path):
    if not os.path.isfile(path):
        problem(f"{path} does not exist")
        return None
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def check_contacts_shape(rows):
    """contacts.csv keeps its header and exactly three columns per row."""
    if not rows or rows[0] != ["name", "email", "city"]:
        problem("the header must stay name,email,city")
    bad = [r for r in rows if len(r) != 3]
    if bad:
        problem(f"rows without exactly three columns: {bad[:3]}")


def parse_ts(value):
    """An aware datetime when value is ISO 8601 with an explicit offset, else None."""
    if not isinstance(value, str) or not ISO_OFFSET.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def utc(y, mo, d, h, mi):
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


def check_record(rec, *, version, env, when_utc, status, changes, where):
    """A complete log record: version, env, timestamp (ISO 8601 + offset, the right instant), status, changes."""
    for key in ("version", "env", "timestamp", "status", "changes"):
        if key not in rec:
            problem(f"{where}: the record for {version} has no {key!r}")
    ts = parse_ts(rec.get("timestamp"))
    if ts is None:
        problem(f"{where}: timestamp {rec.get('timestamp')!r} is not ISO 8601 with a UTC offset")
    elif ts != when_utc:
        problem(f"{where}: timestamp {rec.get('timestamp')!r} is not {when_utc.isoformat()}")
    if rec.get("env") != env:
        problem(f"{where}: env is {rec.get('env')!r}, expected {env!r}")
    if rec.get("status") != status:
        problem(f"{where}: status is {rec.get('status')!r}, expected {status!r}")
    got = rec.get("changes")
    if not isinstance(got, list) or not all(any(c.lower() in str(g).lower() for g in got) for c in changes):
        problem(f"{where}: changes {got!r} should be a list naming {changes!r}")


def find(records, **match):
    return [r for r in records if isinstance(r, dict) and all(r.get(k) == v for k, v in match.items())]


def require_backup(path, must=None):
    """<path>.bak exists; ``must(data)`` (optional) checks that it is the file as it was before the change."""
    bak = path + ".bak"
    if not os.path.isfile(bak):
        problem(f"no backup {bak} (keep a copy before changing a shared file)")
        return
    if must is not None:
        try:
            ok = must(bak)
        except Exception as e:
            ok = False
            problem(f"{bak} cannot be read: {e}")
            return
        if not ok:
            problem(f"{bak} is not a copy of {path} as it was before this change")
