"""Scenario 3: RAM + flash tiering (memtier_benchmark lines: populate P:P all keys, read the
keys around the median, then a gaussian 1:1 load with pipeline 11 and a memtier out-file)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from respload import Report
from respload.testing import RedisServer, redis_server

from .common import Verdict, dbsize, phase, thresholds_held

NAME = "ram-flash-tiering"

#: What the publication measured on its setup.
PUBLISHED_OPS_PER_SEC = 115_000


@dataclass
class Local:
    """One local server (LFU eviction policy, so ``OBJECT FREQ`` shows each key's heat)."""

    server: RedisServer
    out_file: Path

    @property
    def variables(self) -> dict[str, Any]:
        """The scenario's variables for this server."""
        return {"url": self.server.url, "out_file": str(self.out_file)}


@contextlib.contextmanager
def local() -> Iterator[Local]:
    """Start the server; memtier's out-file goes to a temporary directory."""
    with (
        tempfile.TemporaryDirectory(prefix="respload-ram-flash-") as tmp,
        redis_server(args=["--maxmemory-policy", "allkeys-lfu"]) as server,
    ):
        yield Local(server, Path(tmp) / "test.out")


def key_heat(server: RedisServer, prefix: str, keys: range) -> list[tuple[int, int]]:
    """``(key number, OBJECT FREQ)`` for ``keys`` (the server's logarithmic LFU counter)."""
    heat = []
    for k in keys:
        freq = server.call("OBJECT", "FREQ", f"{prefix}{k}")
        heat.append((k, freq if isinstance(freq, int) else 0))
    return heat


def check(report: Report, here: Local | None = None) -> Verdict:
    """All keys populated, the median window read once, the gaussian load's figures and its
    memtier report; locally, the keys around the median are hotter than those at the edge."""
    v = Verdict(NAME)
    thresholds_held(v, report)  # no request of the gaussian load failed
    pop = phase(report, "populate")
    lo, hi = pop.workload["keys"]["range"]
    v.expect(pop.totals.ops == hi - lo + 1, f"populate: {pop.totals.ops} SETs for {hi - lo + 1}")
    median = phase(report, "median")
    mlo, mhi = median.workload["keys"]["range"]
    v.expect(median.totals.ops == mhi - mlo + 1, f"median: {median.totals.ops} of {mhi - mlo + 1}")
    v.expect(median.totals.hits == median.totals.ops, f"median: {median.totals.misses} misses")

    g = phase(report, "gaussian")
    gets = g.commands["GET"]
    v.expect(gets.hits == gets.ops, f"gaussian: {gets.misses} GETs missed a populated key")
    lat = g.totals.latency_ms
    v.judge(
        f"populate wrote all {pop.totals.ops:,} keys; the median window read once, every read a "
        f"hit; every gaussian GET a hit"
    )
    v.figures += [
        f"gaussian 1:1 {g.totals.ops_per_sec:,.0f} ops/s (published {PUBLISHED_OPS_PER_SEC:,})",
        f"p50 {lat.p50:.3f} ms p99 {lat.p99:.3f} ms",
    ]
    if here is not None:
        held = dbsize(here.server)
        v.expect(held == hi - lo + 1, f"the server holds {held} keys, not {hi - lo + 1}")
        text = here.out_file.read_text() if here.out_file.exists() else ""
        v.expect("ALL STATS" in text, f"no memtier report with ALL STATS in {here.out_file}")
        prefix = g.workload["keys"]["prefix"]
        mid = (lo + hi) // 2
        hot = key_heat(here.server, prefix, range(mid - 25, mid + 25))
        cold = key_heat(here.server, prefix, range(lo, lo + 50))
        hot_mean = sum(f for _, f in hot) / len(hot)
        cold_mean = sum(f for _, f in cold) / len(cold)
        v.expect(hot_mean > cold_mean, f"keys at the median not hotter ({hot_mean} vs {cold_mean})")
        v.judge(
            f"the server holds every key; memtier's report written; keys at the median hotter "
            f"(LFU heat {hot_mean:.1f}) than at the edge ({cold_mean:.1f})"
        )
    return v
