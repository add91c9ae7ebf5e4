"""How long merging 16 one-hour reports takes (issue 26: under a second).

    source scripts/python-env.sh && python scripts/bench_merge.py [hist]

Runs 2 s against a throwaway redis-server, stretches its timeline to 3,600 rows, makes 16
hosts' reports of it and times ``merge_reports`` and ``respload merge`` of the files.
``hist`` keeps every row's interval histogram (``output.interval_histograms``).
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import respload
from respload.testing import redis_server

HIST = sys.argv[1:] == ["hist"]

with redis_server() as s:
    w = respload.Workload(
        target={"url": s.url},
        load={"duration": "2s", "connections": 4, "rate": 2000},
        output={"interval_histograms": HIST},
    )
    base = json.loads(respload.run(w).to_json())
rows = [r for r in base["timeline"] if not r.get("partial")]


def hour(rows: list[dict[str, Any]], start: float) -> list[dict[str, Any]]:
    """3,600 one-second rows from `rows`, starting at `start` (UNIX s)."""
    out = []
    for i in range(3600):
        r = copy.copy(rows[i % len(rows)])
        r["t"] = i + 1.0
        r["unix_s"] = start + i + 1.0
        r["interval_s"] = 1.0
        r["partial"] = False
        out.append(r)
    return out


reports = []
for k in range(16):
    d = copy.deepcopy(base)
    tl = hour(rows, d["started_at"] + 0.001 * k)
    d["timeline"] = tl
    d["phases"][0]["timeline"] = tl
    d["duration_s"] = 3600.0
    d["phases"][0]["duration_s"] = 3600.0
    d["host"] = f"h{k}"
    reports.append(respload.Report.from_json(json.dumps(d)))
t = time.perf_counter()
m = respload.merge_reports(reports)
kind = "with" if HIST else "without"
print(f"merge_reports, 16 x 3600 rows {kind} interval histograms: {time.perf_counter() - t:.2f} s")
assert len(m.timeline) == 3600
tmp = tempfile.mkdtemp()
paths = []
for i, r in enumerate(reports):
    p = os.path.join(tmp, f"r{i}.json")
    r.save(p)
    paths.append(p)
t = time.perf_counter()
subprocess.run(
    ["target/release/respload", "merge", *paths, "--json", os.path.join(tmp, "m.json")],
    check=True,
    stdout=subprocess.DEVNULL,
)
print(f"respload merge of the 16 files: {time.perf_counter() - t:.2f} s")
t = time.perf_counter()
subprocess.run(
    ["target/release/respload", "merge", paths[0], "--json", os.path.join(tmp, "m1.json")],
    check=True,
    stdout=subprocess.DEVNULL,
)
print(f"respload merge of 1 file: {time.perf_counter() - t:.2f} s")
