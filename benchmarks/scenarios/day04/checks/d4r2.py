import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from checklib import done, load_json, problem

data = load_json("ops/deploy_log.json")
P = "ops/deploy_count.txt"
if not os.path.isfile(P):
    problem(f"{P} does not exist")
elif isinstance(data, list):
    text = open(P, encoding="utf-8").read().strip()
    if text != str(len(data)):
        problem(f"{P} says {text!r}; ops/deploy_log.json holds {len(data)} records")
done()
