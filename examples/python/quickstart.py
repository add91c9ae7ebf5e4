"""Quickstart: run a mixed SET/GET workload and read the report.

    python examples/python/quickstart.py [redis://HOST:PORT]

Without a URL (or ``$REDIS_URL``) it starts a throwaway redis-server of its own
(``respload.testing.redis_server``), so it runs anywhere redis-server is installed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import respload
from respload.testing import redis_server


@contextlib.contextmanager
def server_url() -> Iterator[str]:
    """The URL given on the command line or in $REDIS_URL, else a throwaway server's."""
    given = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("REDIS_URL")
    if given:
        yield given
    else:
        with redis_server() as server:
            yield server.url


def main() -> None:
    with server_url() as url:
        report = respload.run(
            target={"url": url},
            load={"connections": 8, "duration": "2s", "warmup": "500ms"},
            keys={"prefix": "user:", "range": [0, 9_999], "distribution": "zipf"},
            values={"size": [64, 512]},
            commands=[{"name": "get", "weight": 9}, {"name": "set", "weight": 1}],
            seed=42,
        )

    t = report.totals
    print(f"{t.ops:,} requests in {report.duration_s:.2f} s: {t.ops_per_sec:,.0f} ops/s")
    print(f"latency p50 {t.latency_ms.p50:.3f} ms, p99 {t.latency_ms.p99:.3f} ms")
    for label, stats in report.commands.items():
        print(f"  {label}: {stats.ops:,} ops, {stats.hits:,} hits, {stats.misses:,} misses")
    print(f"client CPU: {report.client.cpu_s_per_million:.2f} s per million requests")
    if t.ops == 0 or t.errors:
        raise SystemExit(f"unexpected: {t.ops} requests, errors {t.errors_by_kind}")


if __name__ == "__main__":
    main()
