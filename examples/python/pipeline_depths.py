"""Compare two pipeline depths on the same workload: throughput against latency.

    python examples/python/pipeline_depths.py [redis://HOST:PORT]

Pipelining sends several requests before reading the replies: more throughput per
connection, at the cost of each request waiting behind the others. Without a URL (or
``$REDIS_URL``) a throwaway redis-server is started.
"""

from __future__ import annotations

import os
import sys

import respload
from respload.testing import redis_server

DEPTHS = (1, 16)


def measure(url: str, pipeline: int) -> respload.Report:
    return respload.run(
        target={"url": url},
        load={"connections": 4, "pipeline": pipeline, "duration": "2s", "threads": 1},
        keys={"prefix": "k:", "range": [0, 999]},
        commands=[{"name": "get", "weight": 3}, {"name": "set"}],
        seed=1,
    )


def compare(url: str) -> dict[int, respload.Report]:
    reports = {depth: measure(url, depth) for depth in DEPTHS}
    print(f"{'pipeline':>8} {'ops/s':>12} {'p50 ms':>8} {'p99 ms':>8}")
    for depth, r in reports.items():
        lat = r.totals.latency_ms
        print(f"{depth:>8} {r.totals.ops_per_sec:>12,.0f} {lat.p50:>8.3f} {lat.p99:>8.3f}")
    shallow, deep = reports[DEPTHS[0]], reports[DEPTHS[-1]]
    gain = deep.totals.ops_per_sec / shallow.totals.ops_per_sec
    print(f"pipeline {DEPTHS[-1]} gives {gain:.1f}x the throughput of pipeline {DEPTHS[0]}")
    return reports


def main() -> None:
    given = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("REDIS_URL")
    if given:
        reports = compare(given)
    else:
        with redis_server() as server:
            reports = compare(server.url)
    # Deeper pipelines move more requests per round trip, even on a busy 2-core machine.
    assert reports[16].totals.ops_per_sec > reports[1].totals.ops_per_sec


if __name__ == "__main__":
    main()
