import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import done, load_csv, problem, require_backup

P = "team/contacts.csv"
rows = load_csv(P)
if rows is not None:
    if not rows or rows[0] != ["name", "email", "city"]:
        problem("the header must stay name,email,city")
    bad = [r for r in rows if len(r) != 3]
    if bad:
        problem(f"rows without exactly three columns: {bad[:3]}")
    for want in (["Lee Chen", "lee.chen@example.com", "Austin, TX"], ["Marta Ruiz", "marta.ruiz@example.com", "Madrid"]):
        if want not in rows:
            problem(f"no row {want}")
    if ["Ana Lima", "ana.lima@example.com", "Lisbon"] not in rows:
        problem("existing contacts were changed or removed")
require_backup(P, must=lambda b: "Lee Chen" not in open(b, encoding="utf-8").read())
done()
