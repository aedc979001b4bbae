import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import check_record, done, find, load_json, problem, require_backup, utc

P = "projects/releases.json"
data = load_json(P)
if isinstance(data, list):
    hits = find(data, version="v1.5.0")
    if len(hits) != 1:
        problem(f"expected one v1.5.0 record, found {len(hits)}")
    else:
        check_record(
            hits[0],
            version="v1.5.0",
            env="production",
            when_utc=utc(2026, 3, 5, 15, 0),
            status="ok",
            changes=["new dashboard", "csv export"],
            where=P,
        )
    if len(find(data, version="v1.2.0")) != 1:
        problem("the earlier records were changed or removed")
elif data is not None:
    problem(f"{P} must stay a JSON list")
require_backup(P, must=lambda b: not any(r.get("version") == "v1.5.0" for r in load_json(b) or []))
done()
