import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import check_record, done, find, load_json, problem, require_backup, utc

P = "projects/releases.json"
data = load_json(P)
if isinstance(data, list):
    hits = find(data, version="v1.4.0", env="staging")
    if len(hits) != 1:
        problem(f"expected one v1.4.0 staging record, found {len(hits)}")
    else:
        check_record(
            hits[0],
            version="v1.4.0",
            env="staging",
            when_utc=utc(2026, 3, 2, 13, 30),
            status="ok",
            changes=["login fix"],
            where=P,
        )
    if len(find(data, version="v1.3.0")) != 2 or len(find(data, version="v1.2.0")) != 1:
        problem("the earlier records were changed or removed")
elif data is not None:
    problem(f"{P} must stay a JSON list")
require_backup(P, must=lambda b: not any(r.get("version") == "v1.4.0" for r in load_json(b) or []))
done()
