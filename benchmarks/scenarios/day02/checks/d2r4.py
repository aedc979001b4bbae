import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import done, find, load_json, problem, require_backup

P = "projects/releases.json"
data = load_json(P)
if isinstance(data, list):
    st = find(data, version="v1.3.0", env="staging")
    if len(st) != 1 or st[0].get("status") != "retired":
        problem("the v1.3.0 staging record should have status 'retired'")
    prod = find(data, version="v1.3.0", env="production")
    if len(prod) != 1 or prod[0].get("status") != "ok":
        problem("the v1.3.0 production record must not change")
    if len(find(data, version="v1.2.0", status="ok")) != 1:
        problem("the v1.2.0 record must not change")
elif data is not None:
    problem(f"{P} must stay a JSON list")


def before_change(bak):
    old = load_json(bak) or []
    return any(r.get("version") == "v1.3.0" and r.get("env") == "staging" and r.get("status") == "ok" for r in old)


require_backup(P, must=before_change)
done()
