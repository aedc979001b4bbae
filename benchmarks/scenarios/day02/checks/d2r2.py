import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import done, problem

P = "notes/standup-2026-03-03.md"
if not os.path.isfile(P):
    problem(f"{P} does not exist")
else:
    text = open(P, encoding="utf-8").read()
    for owner, due in (("Priya", "2026-03-05"), ("Jonas", "2026-03-04"), ("Dana", "2026-03-06")):
        if not re.search(rf"^\W*Owner:\s*{owner}\s*\|\s*Due:\s*{due}\s*\|\s*\S", text, re.M | re.I):
            problem(f"no line 'Owner: {owner} | Due: {due} | ...'")
done()
