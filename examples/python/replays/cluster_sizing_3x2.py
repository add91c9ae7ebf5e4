"""Scenario 2: a first Redis Cluster sizing test, 3 primaries x 2 (writes, reads, the 1:1
mix, and the latency at each concurrency level)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from respload import PhaseReport, Report
from respload.testing import RedisCluster, redis_cluster

from .common import Verdict, dbsize, no_errors, phase

NAME = "cluster-sizing-3x2"

#: The publication's node settings: persistence off, 1 GB, allkeys-lru.
NODE_ARGS = ["--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru"]


@dataclass
class Local:
    """A local 6-node cluster with the publication's settings."""

    cluster: RedisCluster

    @property
    def variables(self) -> dict[str, Any]:
        """The scenario's variables for this cluster."""
        return {"url": self.cluster.url}


@contextlib.contextmanager
def local() -> Iterator[Local]:
    """Start 3 primaries with a replica each (persistence is off in every test server)."""
    with redis_cluster(primaries=3, replicas=1, args=NODE_ARGS) as cluster:
        yield Local(cluster)


def spread(p: PhaseReport) -> list[float]:
    """Each node's share of the phase's requests, largest first."""
    total = sum(s.ops for s in p.nodes.values()) or 1
    return sorted((s.ops / total for s in p.nodes.values()), reverse=True)


def check(report: Report, here: Local | None = None) -> Verdict:
    """The publication's four figures per phase: throughput, latency distribution, failure
    ratio, per-node spread; and latency per concurrency level."""
    v = Verdict(NAME)
    write = phase(report, "write")
    lo, hi = write.workload["keys"]["range"]
    records = hi - lo + 1
    v.expect(write.totals.ops == records, f"write: {write.totals.ops} SETs for {records} records")
    if here is not None:
        held = sum(dbsize(n) for n in here.cluster.primaries())
        v.expect(held == records, f"the primaries hold {held} keys, not {records}")

    for p in (write, phase(report, "read"), phase(report, "mix 1:1"), phase(report, "concurrency")):
        no_errors(v, p)
        shares = spread(p)
        v.expect(
            len(shares) == 3 and shares[-1] > 0.25,
            f"{p.name}: uneven spread over the primaries {[round(s, 2) for s in shares]}",
        )
        lat = p.totals.latency_ms
        v.figures.append(
            f"{p.name} {p.totals.ops_per_sec:,.0f} ops/s p50 {lat.p50:.2f} p99 {lat.p99:.2f} "
            f"p99.9 {lat.p99_9:.2f} ms, failures {p.totals.error_rate:.2%}"
        )

    read = phase(report, "read")
    v.expect(read.totals.hits == read.totals.ops, f"read: {read.totals.misses} GETs missed")
    mix = phase(report, "mix 1:1")
    sets, gets = mix.commands["SET"].ops, mix.commands["GET"].ops
    v.expect(abs(sets - gets) <= 0.1 * (sets + gets), f"mix 1:1: {sets} SETs vs {gets} GETs")

    steps = phase(report, "concurrency").steps
    v.expect(len(steps) >= 3, f"concurrency: {len(steps)} steps, expected 3")
    v.figures.append(
        "per concurrency "
        + ", ".join(
            f"{s.connections} connections {s.ops_per_sec:,.0f} ops/s p99 {s.latency_ms.p99:.2f} ms"
            for s in steps
        )
    )
    return v
