import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import check_contacts_shape, done, load_csv, problem, require_backup

P = "team/contacts.csv"
rows = load_csv(P)
if rows is not None:
    check_contacts_shape(rows)
    if ["Dana Weiss", "dana.weiss@example.com", "Berlin, DE"] not in rows:
        problem("no row 'Dana Weiss, dana.weiss@example.com, Berlin, DE' (with the city as one value)")
    if ["Tom Berg", "tom.berg@example.com", "Oslo, NO"] not in rows or [
        "Ana Lima",
        "ana.lima@example.com",
        "Lisbon",
    ] not in rows:
        problem("existing contacts were changed or removed")
require_backup(P, must=lambda b: "Dana Weiss" not in open(b, encoding="utf-8").read())
done()
