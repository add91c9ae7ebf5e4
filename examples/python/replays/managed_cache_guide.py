"""Scenario 1: the managed-cache performance testing guide (redis-benchmark lines, TLS,
cluster, a failover with the server's CPU in view)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from respload import Report
from respload.testing import RedisCluster, RedisServer, free_port, redis_cluster, redis_server

from .common import Verdict, dbsize, phase, thresholds_held

NAME = "managed-cache-guide"

#: The guide's published GET/s with 1 KB values: (tier, vCPUs, GET/s, GET/s over TLS).
TIERS: list[tuple[str, int, int, int]] = [
    ("C1 (1 GB)", 1, 38_000, 20_720),
    ("C3 (6 GB)", 4, 100_000, 90_000),
    ("C6 (53 GB)", 8, 126_000, 120_000),
    ("P1 (6 GB)", 2, 180_000, 172_000),
    ("P4 (53 GB)", 8, 400_000, 373_000),
    ("E10, OSS cluster policy", 4, 1_400_000, 1_000_000),
    ("E100, OSS cluster policy", 16, 3_000_000, 2_500_000),
]


def nearest_tier(get_per_sec: float) -> str:
    """The published tier whose GET/s (without TLS) is closest to ``get_per_sec``."""
    return min(TIERS, key=lambda t: abs(t[2] - get_per_sec))[0]


@dataclass
class Local:
    """The local stand-ins: one server with a plain and a TLS port, and a 6-node cluster."""

    server: RedisServer
    plain_port: int
    cluster: RedisCluster

    @property
    def variables(self) -> dict[str, Any]:
        """The scenario's variables for these servers."""
        assert self.server.tls is not None
        return {
            "url": f"redis://127.0.0.1:{self.plain_port}",
            "tls_url": self.server.url,
            "tls": self.server.tls.target_tls(),
            "cluster_url": self.cluster.url,
            "enterprise_url": f"redis://127.0.0.1:{self.plain_port}",
            # These servers are ours and thrown away: the failover stops a primary for good.
            "failover_mode": "kill",
        }


@contextlib.contextmanager
def local() -> Iterator[Local]:
    """Start the servers the guide's endpoints stand for (the cache's plain port 6379 and TLS
    port 6380 are one server, as in the guide; the cluster endpoint a 6-node cluster)."""
    plain = free_port()
    with (
        redis_server(tls=True, args=["--port", str(plain)]) as server,
        redis_cluster(primaries=3, replicas=1) as cluster,
    ):
        yield Local(server, plain, cluster)


def check(report: Report, here: Local | None = None) -> Verdict:
    """The guide's figures: GET/s plain, TLS and clustered, latency, the failover and the CPU."""
    v = Verdict(NAME)
    thresholds_held(v, report)  # no GET failed but in the failover phase
    pre = phase(report, "pre-test")
    lo, hi = pre.workload["keys"]["range"]
    v.expect(pre.totals.ops == hi - lo + 1, f"pre-test wrote {pre.totals.ops} of {hi - lo + 1}")
    if here is not None:
        held = dbsize(here.server)
        v.expect(held == hi - lo + 1, f"the server holds {held} keys, not {hi - lo + 1}")

    for name in ("latency", "throughput", "tls", "cluster", "enterprise"):
        p = phase(report, name)
        asked = p.workload["load"]["requests"]
        v.expect(p.totals.ops == asked, f"{name}: {p.totals.ops} of {asked} requests")
        v.expect(p.totals.hits == p.totals.ops, f"{name}: {p.totals.misses} GETs missed")

    lat = phase(report, "latency").totals.latency_ms
    plain = phase(report, "throughput").totals.ops_per_sec
    tls = phase(report, "tls").totals.ops_per_sec
    clustered = phase(report, "cluster")
    v.expect(
        len(clustered.nodes) == 3 and all(s.ops > 0 for s in clustered.nodes.values()),
        f"cluster: GETs reached {len(clustered.nodes)} nodes, not the 3 primaries",
    )

    fo = phase(report, "failover")
    v.expect(len(fo.events) == 1, "failover: no drill in the report")
    figures_failover = "failover: no drill"
    if fo.events:
        e = fo.events[0]
        v.expect(e.error is None, f"failover drill failed: {e.error}")
        v.expect(e.finished_s is not None, "failover: the replica was never promoted")
        if fo.workload["events"][0].get("mode") == "kill":
            v.expect(
                (e.errors_during or 0) > 0, "failover: a primary stopped but no request failed"
            )
        v.expect(e.recovered_after_s is not None, "failover: throughput never came back to 80%")
        back = f"{e.recovered_after_s:.1f} s" if e.recovered_after_s is not None else "never"
        figures_failover = (
            f"failover: {e.errors_during:,} failed requests, longest gap "
            f"{e.longest_gap_ms:.0f} ms, throughput back after {back}"
        )
    # The guide watches the server's CPU through the failover: a run without it shows
    # nothing of what the guide asks to see.
    cpu = v.need(fo.server_load, "failover: the server's CPU")
    v.judge(
        f"pre-test wrote all {hi - lo + 1:,} keys; every GET of the five tests answered and hit; "
        f"the cluster test reached all 3 primaries"
    )
    v.judge(figures_failover + " (the drill ran, the replica was promoted, throughput came back)")
    v.figures += [
        f"latency test p50 {lat.p50:.3f} ms p99 {lat.p99:.3f} ms",
        f"GET/s 1 KB {plain:,.0f}, TLS {tls:,.0f} ({tls / plain:.2f}x), "
        f"cluster {clustered.totals.ops_per_sec:,.0f}",
        f"closest published tier {nearest_tier(plain)}",
    ]
    if cpu is not None:
        line = "over" if cpu.cpu_over_limit else "under"
        v.figures.append(f"peak server CPU {cpu.peak_cpu_percent:.0f}% ({line} the 80% line)")
    return v
