#!/usr/bin/env python3
"""Keep a study as a test fixture of the diagnosis: its study.json with the
runs' full results left out (the diagnosis judges their summaries), so that
a planted run's measurements can be judged again without root.

usage: bench/fixture.py STUDY_DIR NAME  (writes
crates/diagnosis/tests/fixtures/NAME.json)"""
import json, os, sys

if len(sys.argv) != 3:
    sys.exit("usage: bench/fixture.py STUDY_DIR NAME")
src, name = sys.argv[1], sys.argv[2]
d = json.load(open(os.path.join(src, "study.json")))
for r in d.get("runs", []):
    r["result"] = None
out = os.path.join(os.path.dirname(__file__), "..", "crates", "diagnosis", "tests", "fixtures", name + ".json")
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(d, f, separators=(",", ":"))
os.replace(tmp, out)
print(f"{out}: {os.path.getsize(out)} bytes")
