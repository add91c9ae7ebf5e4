"""How long merging 16 one-hour reports takes (issue 26: under a second), the M1 row of
``make bench`` (scripts/bench.py runs it in the venv).

    source scripts/python-env.sh && python scripts/bench_merge.py [hist] [--rounds N] [--json]

Runs 17 s against a throwaway redis-server (16 whole seconds: 16 different rows), stretches
its timeline to 3,600 rows, makes 16 hosts' reports of it, each host starting at another
row (so that no second adds the same histogram twice, and no row repeats within 16 s: the
CPU cannot learn the payloads' bytes, as it learnt the 2 rows of a 2 s run), and times
``merge_reports`` and ``respload merge`` of the files (and of one file), ``--rounds`` times
each (default 1), in alternation. ``hist`` keeps every row's
interval histogram (``output.interval_histograms``). ``--keep DIR`` also saves the 16
reports there, to time or profile ``respload merge`` on the same files again. ``--json``
ends with one line of JSON: the timings in seconds and the files' total size in bytes.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import respload
from respload.testing import redis_server

RESPLOAD = str(Path(__file__).resolve().parent.parent / "target" / "release" / "respload")


def hour(rows: list[dict[str, Any]], start: float, first: int) -> list[dict[str, Any]]:
    """3,600 one-second rows from `rows` (from its `first`, round and round), starting at
    `start` (UNIX s)."""
    out = []
    for i in range(3600):
        r = copy.copy(rows[(first + i) % len(rows)])
        r["t"] = i + 1.0
        r["unix_s"] = start + i + 1.0
        r["interval_s"] = 1.0
        r["partial"] = False
        out.append(r)
    return out


def reports(hist: bool) -> list[respload.Report]:
    """16 hosts' reports of a one-hour run, made of one 17 s run."""
    with redis_server() as s:
        w = respload.Workload(
            target={"url": s.url},
            load={"duration": "17s", "connections": 4, "rate": 2000},
            output={"interval_histograms": hist},
        )
        base = json.loads(respload.run(w).to_json())
    rows = [r for r in base["timeline"] if not r.get("partial")]
    out = []
    for k in range(16):
        d = copy.deepcopy(base)
        tl = hour(rows, d["started_at"] + 0.001 * k, k)
        d["timeline"] = tl
        d["phases"][0]["timeline"] = tl
        d["duration_s"] = 3600.0
        d["phases"][0]["duration_s"] = 3600.0
        d["host"] = f"h{k}"
        out.append(respload.Report.from_json(json.dumps(d)))
    return out


def timed_cli(*args: str) -> float:
    t = time.perf_counter()
    subprocess.run([RESPLOAD, "merge", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("hist", nargs="?", choices=["hist"], help="keep interval histograms")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="end with one line of JSON")
    ap.add_argument("--keep", metavar="DIR", help="also save the 16 reports in DIR (to profile)")
    args = ap.parse_args()
    kind = "with" if args.hist else "without"
    made = reports(bool(args.hist))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, r in enumerate(made):
            p = os.path.join(tmp, f"r{i}.json")
            r.save(p)
            paths.append(p)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                r.save(os.path.join(args.keep, f"r{i}.json"))
        out = os.path.join(tmp, "m.json")
        times: dict[str, list[float]] = {"merge_reports": [], "cli16": [], "cli1": []}
        for _ in range(args.rounds):
            t = time.perf_counter()
            m = respload.merge_reports(made)
            times["merge_reports"].append(time.perf_counter() - t)
            assert len(m.timeline) == 3600
            times["cli16"].append(timed_cli(*paths, "--json", out))
            times["cli1"].append(timed_cli(paths[0], "--json", out))
            print(
                f"16 x 3600 rows {kind} interval histograms: merge_reports "
                f"{times['merge_reports'][-1]:.2f} s, respload merge of the 16 files "
                f"{times['cli16'][-1]:.2f} s, of 1 file {times['cli1'][-1]:.2f} s",
                file=sys.stderr,
                flush=True,
            )
        size = sum(os.path.getsize(p) for p in paths)
    if args.json:
        print(json.dumps({"hist": bool(args.hist), "bytes": size, **times}))


if __name__ == "__main__":
    main()
