"""Scenario 4: comparing two instance types (persistence off vs AOF everysec, each run three
times and averaged; fork time under load; replication time under load)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import respload
from respload import Report
from respload.testing import RedisServer, redis_server

from .common import Verdict, dbsize, phase, phases, thresholds_held, wait_in_sync

NAME = "instance-comparison"

#: Published fork times, seconds per GB of memory: (instance type, s/GB).
PUBLISHED_FORK_S_PER_GB = [("first type", 0.01), ("second type", 0.29)]
#: Published replication times for a 0.6 GB RDB (8 GB in memory), seconds.
PUBLISHED_SYNC_S = [("first type", 88.0), ("second type", 78.0)]


@dataclass
class Local:
    """A local primary with one replica."""

    primary: RedisServer
    replica: RedisServer

    @property
    def variables(self) -> dict[str, Any]:
        """The scenario's variables for this pair."""
        return {"url": self.primary.url}


@contextlib.contextmanager
def local() -> Iterator[Local]:
    """Start a primary and its replica, in sync. The primary's backlog is the smallest Redis
    allows, so reattaching a replica after a second of load takes a full sync, as the
    publication's did."""
    primary_args = ["--repl-diskless-sync-delay", "0", "--repl-backlog-size", "16kb"]
    replica_args = ["--replicaof", "127.0.0.1"]
    with (
        redis_server(args=primary_args) as primary,
        redis_server(args=[*replica_args, str(primary.port)]) as replica,
    ):
        wait_in_sync(replica)
        yield Local(primary, replica)


def setting(report: Report, name: str) -> Report:
    """The runs of one setting (phases ``NAME #1`` ... ``NAME #3``) as a report of their own,
    its phases named ``run #1`` ..., so that :func:`respload.compare` lines up run i of one
    setting with run i of the other."""
    d = report.to_dict()
    d["phases"] = [
        {**p, "name": "run" + p["name"][len(name) :]}
        for p in d["phases"]
        if p["name"].startswith(name + " #")
    ]
    return Report.from_dict(d)


def aof_worked(v: Verdict, primary: RedisServer) -> None:
    """AOF everysec was really on: the server rewrote its AOF (when enabled, and for the
    drill) and every write to it succeeded."""
    info = primary.info("persistence")
    rewrites = int(info.get("aof_rewrites", "0"))
    v.expect(rewrites >= 2, f"the server made {rewrites} AOF rewrites, not 2 (enable, drill)")
    status = info.get("aof_last_write_status")
    v.expect(status == "ok", f"aof_last_write_status is {status}")


def check(report: Report, here: Local | None = None) -> Verdict:
    """Persistence off against AOF everysec, fork time, replication time."""
    v = Verdict(NAME)
    # No request failed, CONFIG SET's included (persistence really switched).
    thresholds_held(v, report)
    fill = phase(report, "fill")
    lo, hi = fill.workload["keys"]["range"]
    v.expect(fill.totals.ops == hi - lo + 1, f"fill: {fill.totals.ops} of {hi - lo + 1} objects")
    if here is not None:
        v.expect(dbsize(here.primary) >= hi - lo + 1, "the primary holds fewer keys than filled")

    off, aof = phases(report, "persistence off"), phases(report, "aof everysec")
    v.expect(len(off) == 3 and len(aof) == 3, f"runs: {len(off)} off, {len(aof)} AOF, not 3 each")
    # The two settings compared run by run, with the core's noise rule (a change counts as
    # worse only beyond what each run's timeline spread allows). AOF everysec's cost on a
    # local disk is a few percent: at CI scale on a shared machine it can hide in that noise,
    # so its sign is shown, not asserted (docs/scenarios.md).
    comparison = respload.compare(
        setting(report, "persistence off"),
        setting(report, "aof everysec"),
        labels=["persistence off", "aof everysec"],
    )
    rates = [r for r in comparison.rows if r.command == "ALL" and r.metric == "ops_per_sec"]
    v.expect(len(rates) == 3, f"compared {len(rates)} runs, not 3")
    off_ops = sum(r.values[0] or 0.0 for r in rates) / max(len(rates), 1)
    aof_ops = sum(r.values[1] or 0.0 for r in rates) / max(len(rates), 1)
    v.expect(off_ops > 0 and aof_ops > 0, "a setting ran without throughput")
    v.judge(f"fill wrote all {hi - lo + 1:,} objects; 3 runs of each setting compared")
    slower = sum(1 for r in rates if r.worse[1])
    changes = ", ".join(f"{(r.changes[1] or 0.0) * 100:+.1f}%" for r in rates)
    v.figures.append(
        f"persistence off {off_ops:,.0f} ops/s, AOF everysec {aof_ops:,.0f} ops/s "
        f"(3 runs each, mean; run by run {changes}: slower beyond noise in {slower} of 3)"
    )
    if here is not None:
        aof_worked(v, here.primary)
        v.judge("AOF everysec really on (the server's rewrites, every AOF write ok)")

    fork = phase(report, "fork time")
    if fork.events:
        e = fork.events[0]
        v.expect(e.error is None, f"BGREWRITEAOF failed: {e.error}")
        v.expect(bool(e.fork_usec), "fork time not reported")
        load = v.need(fork.server_load, "fork time: the server's memory")
        memory = load.peak_used_memory if load else 0
        per_gb = (e.fork_usec or 0) / 1e6 / (memory / 2**30) if memory else 0.0
        v.judge(f"fork time reported ({e.fork_usec or 0:,} us)")
        v.figures.append(
            f"fork {e.fork_usec or 0:,} us for {memory / 2**20:.0f} MiB: {per_gb:.3f} s per GB "
            f"(published {PUBLISHED_FORK_S_PER_GB[0][1]} and {PUBLISHED_FORK_S_PER_GB[1][1]})"
        )
    else:
        v.expect(False, "fork time: no drill in the report")

    repl = phase(report, "replication time")
    if repl.events:
        e = repl.events[0]
        v.expect(e.error is None, f"replica-resync failed: {e.error}")
        v.expect(e.sync_s is not None, "replication time not reported")
        v.expect((e.ops_during or 0) > 0, "the load did not go on during the resync")
        kind = "full" if e.full_sync else "partial"
        sync = f"{e.sync_s:.2f} s" if e.sync_s is not None else "never"
        v.judge(f"replica back in sync after {sync} ({kind} sync), the load going on meanwhile")
    else:
        v.expect(False, "replication time: no drill in the report")
    return v
