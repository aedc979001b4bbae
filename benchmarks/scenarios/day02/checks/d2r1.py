import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import check_record, done, find, load_json, problem, require_backup, utc

P = "ops/deploy_log.json"
data = load_json(P)
if isinstance(data, list):
    hits = find(data, version="v1.4.1")
    if len(hits) != 1:
        problem(f"expected one v1.4.1 record, found {len(hits)}")
    else:
        check_record(
            hits[0],
            version="v1.4.1",
            env="production",
            when_utc=utc(2026, 3, 3, 9, 15),
            status="ok",
            changes=["cache fix"],
            where=P,
        )
    if len(find(data, version="v1.3.0")) != 1 or len(find(data, version="v1.3.1")) != 1:
        problem("the earlier records were changed or removed")
elif data is not None:
    problem(f"{P} must stay a JSON list")
require_backup(P, must=lambda b: not any(r.get("version") == "v1.4.1" for r in load_json(b) or []))
done()
