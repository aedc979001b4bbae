import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import check_contacts_shape, done, load_csv, problem, require_backup

P = "team/contacts.csv"
rows = load_csv(P)
if rows is not None:
    check_contacts_shape(rows)
    for want in (
        ["Lee Chen", "lee.chen@example.com", "Austin, TX"],
        ["Marta Ruiz", "marta.ruiz@example.com", "Madrid"],
    ):
        if want not in rows:
            problem(f"no row {want}")
    if ["Ana Lima", "ana.lima@example.com", "Lisbon"] not in rows:
        problem("existing contacts were changed or removed")
require_backup(P, must=lambda b: "Lee Chen" not in open(b, encoding="utf-8").read())
done()
