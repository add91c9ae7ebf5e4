"""Scenario 2 (a first Redis Cluster sizing test, 3 primaries x 2) from several hosts at once,
on a Ray cluster: the publication drove its cluster from 10 to 15 client machines.

Every phase is split into exact shards (``respload.distributed``), each phase started by every
host at one instant once all had finished the one before (``run_phases``): the reads find every
record written, and the connection ramp (``concurrency``) has, at each step, the whole ramp's
connections open across the hosts (dealt out in turn: ``load.connections_ramp.share``). Needs
``pip install 'respload[ray]'``.
"""

from __future__ import annotations

from typing import Any

import respload
from respload import Report

from . import cluster_sizing_3x2 as scenario
from .common import Verdict, spec_path, thresholds_held

NAME = "cluster-sizing-3x2"
#: The phases run from every host: all of the scenario's.
PHASES = [*scenario.PHASES, "concurrency"]


def workload(
    scale: str | None = "ci", variables: dict[str, Any] | None = None
) -> respload.Workload:
    """The scenario file at ``scale``."""
    return respload.Workload.from_file(spec_path(NAME), scale=scale, vars=variables or {})


def check(reports: list[Report], hosts: int, here: scenario.Local | None = None) -> Verdict:
    """What must hold when ``hosts`` hosts ran the scenario together, one merged report per
    phase (``run_phases``: every host finished a phase before any started the next): every
    host took part and finished, a small start skew, and what the single-host replay checks
    (each record written exactly once, no failures, the load spread over the primaries,
    every read a hit, the mix 1:1), with one merged figure line per phase."""
    v = Verdict(f"{NAME} from {hosts} hosts")
    v.expect(
        [r.phases[0].name for r in reports] == PHASES,
        f"phases {[r.phases[0].name for r in reports]}, expected {PHASES}",
    )
    by_name = {r.phases[0].name: r.phases[0] for r in reports}
    for r in reports:
        thresholds_held(v, r)  # the scenario's, judged on the merged report
        shards = [h.shard for h in r.hosts]
        v.expect(shards == list(range(hosts)), f"hosts {shards}, expected 0 to {hosts - 1}")
        v.expect(not any(h.interrupted for h in r.hosts), "a host was interrupted or lost")
    if len(by_name) == len(PHASES):
        scenario.check_phases(v, by_name.__getitem__, PHASES, here)
        # The hosts' steps added: the whole ramp's connections at each step.
        steps = by_name["concurrency"].steps
        conns = [s.connections for s in steps]
        v.expect(
            len(steps) >= 3 and conns == sorted(set(conns)),
            f"concurrency: steps of {conns} connections, expected 3 or more, rising",
        )
        v.figures.append(
            "per concurrency "
            + ", ".join(f"{s.connections} connections {s.ops_per_sec:,.0f} ops/s" for s in steps)
        )
    skew = max(h.start_skew_ms for r in reports for h in r.hosts)
    v.expect(skew < 250, f"start skew {skew:.1f} ms")
    v.judge(f"every host took part and finished, start skew at most {skew:.1f} ms (< 250)")
    return v
