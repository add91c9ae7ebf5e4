"""Replay the cluster sizing scenario (3 primaries x 2) from 3 hosts of a Ray cluster and
print one verdict line (``make examples`` runs it at CI scale).

    python examples/python/distributed.py                  # a local 6-node Redis Cluster and
                                                           # a local 3-node Ray cluster
    python examples/python/distributed.py --address auto --hosts 10 --scale full \\
        --var url=redis://node1:6379                       # your Ray cluster, your servers

Without ``--address`` it starts a Ray cluster of ``--hosts`` nodes on this machine
(``respload.testing.ray_cluster``); without ``--var`` it starts the Redis Cluster too. Each host
runs its exact shard of the write, read and 1:1 mix phases, every phase starting at one
instant once all hosts finished the one before (``run_phases``); each phase's merged report is
checked (every record written once, every read a hit, no failures, the load spread over the
primaries) and kept with ``--json DIR``. Needs ``pip install 'respload[ray]'``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import respload.distributed
from replays import cluster_sizing_3x2 as scenario
from replays import distributed
from respload.cli import parse_var
from respload.testing import ray_cluster


def progress(s: respload.Snapshot) -> None:
    """The merged line of every host, once a second."""
    print(
        f"  [{s.phase}] {s.t:5.1f}s {s.ops_per_sec:10,.0f} ops/s p99 {s.latency_ms.p99:.2f} ms "
        f"conns {s.connections}",
        file=sys.stderr,
        flush=True,
    )


@contextlib.contextmanager
def place(args: argparse.Namespace) -> Iterator[tuple[dict[str, Any], Any, str | None]]:
    """The scenario's variables, the local servers (or ``None``) and the Ray address."""
    with contextlib.ExitStack() as stack:
        address = args.address
        if address is None:
            stack.enter_context(ray_cluster(args.hosts))
        if args.var:
            yield dict(args.var), None, address
        else:
            here = stack.enter_context(scenario.local())
            yield here.variables, here, address


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=3, help="how many hosts (default 3)")
    parser.add_argument("--address", help="a running Ray cluster (default: start one here)")
    parser.add_argument("--scale", default="ci", help="ci (default) or full (the published)")
    parser.add_argument("--var", type=parse_var, action="append", default=[], metavar="N=V")
    parser.add_argument("--json", type=Path, metavar="DIR", help="keep each phase's report")
    args = parser.parse_args(argv)
    scale = None if args.scale == "full" else args.scale
    with place(args) as (variables, here, address):
        reports = respload.distributed.run_phases(
            distributed.workload(scale, variables),
            hosts=args.hosts,
            address=address,
            on_progress=progress,
        )
        if args.json is not None:
            args.json.mkdir(parents=True, exist_ok=True)
            for r in reports:
                r.save(args.json / f"{r.phases[0].name.replace(' ', '-')}.json")
        verdict = distributed.check(reports, args.hosts, here)
    print(verdict.line(), flush=True)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
