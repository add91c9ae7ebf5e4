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


def compare_depths(url: str) -> respload.Comparison:
    """Both depths measured and compared (respload.compare: the changes, marked when worse
    beyond noise)."""
    reports = [measure(url, depth) for depth in DEPTHS]
    comparison = respload.compare(*reports, labels=[f"pipeline {d}" for d in DEPTHS])
    print(comparison)  # the table `respload compare` prints
    throughput = next(
        r for r in comparison.rows if r.command == "ALL" and r.metric == "ops_per_sec"
    )
    gain = 1 + (throughput.changes[1] or 0.0)
    print(f"pipeline {DEPTHS[-1]} gives {gain:.1f}x the throughput of pipeline {DEPTHS[0]}")
    return comparison


def main() -> None:
    given = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("REDIS_URL")
    if given:
        comparison = compare_depths(given)
    else:
        with redis_server() as server:
            comparison = compare_depths(server.url)
    # Deeper pipelines move more requests per round trip, even on a busy 2-core machine: a
    # fall in throughput of more than 0% would fail the check.
    comparison.check(ops_per_sec="-0%")


if __name__ == "__main__":
    main()
