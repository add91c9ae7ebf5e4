"""Scenario 2: a first Redis Cluster sizing test, 3 primaries x 2 (writes, reads, the 1:1
mix, and the latency at each concurrency level)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from respload import PhaseReport, Report
from respload.testing import RedisCluster, redis_cluster

from .common import Verdict, dbsize, phase, thresholds_held

NAME = "cluster-sizing-3x2"
#: The phases that run from any number of hosts; the last one, ``concurrency``, is a
#: connection ramp: one host's.
PHASES = ["write", "read", "mix 1:1"]

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


def check_phases(
    v: Verdict, find: Callable[[str], PhaseReport], names: list[str], here: Local | None
) -> None:
    """Into ``v``: every record written once (and held by the primaries, when ``here``), an
    even spread over the primaries in each phase of ``names`` (with its figures), every read a
    hit, the mix 1:1. ``find(name)`` is the phase of that name. That no request failed is the
    scenario's threshold (``thresholds_held``)."""
    write = find("write")
    lo, hi = write.workload["keys"]["range"]
    records = hi - lo + 1
    v.expect(write.totals.ops == records, f"write: {write.totals.ops} SETs for {records} records")
    if here is not None:
        held = sum(dbsize(n) for n in here.cluster.primaries())
        v.expect(held == records, f"the primaries hold {held} keys, not {records}")

    for p in map(find, names):
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

    read = find("read")
    v.expect(read.totals.hits == read.totals.ops, f"read: {read.totals.misses} GETs missed")
    mix = find("mix 1:1")
    sets, gets = mix.commands["SET"].ops, mix.commands["GET"].ops
    v.expect(abs(sets - gets) <= 0.1 * (sets + gets), f"mix 1:1: {sets} SETs vs {gets} GETs")
    v.judge(
        f"write: each of {records:,} records written once; every phase spread over the 3 "
        f"primaries (each over 25%); read: every GET a hit; mix 1:1: {sets:,} SETs, {gets:,} GETs"
    )


def check(report: Report, here: Local | None = None) -> Verdict:
    """The publication's four figures per phase: throughput, latency distribution, failure
    ratio, per-node spread; and latency per concurrency level."""
    v = Verdict(NAME)
    thresholds_held(v, report)
    check_phases(v, lambda name: phase(report, name), [*PHASES, "concurrency"], here)

    steps = phase(report, "concurrency").steps
    v.expect(len(steps) >= 3, f"concurrency: {len(steps)} steps, expected 3")
    v.judge(f"concurrency: {len(steps)} steps")
    v.figures.append(
        "per concurrency "
        + ", ".join(
            f"{s.connections} connections {s.ops_per_sec:,.0f} ops/s p99 {s.latency_ms.p99:.2f} ms"
            for s in steps
        )
    )
    return v
