"""Replay the published benchmark procedures of ``examples/scenarios/`` and print one verdict
line per scenario (``make examples`` runs this at CI scale).

    python examples/python/replay.py                      # every scenario, CI scale, local servers
    python examples/python/replay.py ram-flash-tiering    # one of them
    python examples/python/replay.py ram-flash-tiering --scale full \\
        --var url=redis://your-endpoint:6379              # the published scale, your servers

Without ``--var``, each scenario starts the servers it needs on this machine (standalone,
TLS, a 6-node cluster, a primary with a replica) through ``respload.testing``. With
``--var``, nothing is started and only the report is checked. ``--json DIR`` keeps each
report as ``DIR/NAME.json``. A drill that stops a server for good (a ``kill`` failover:
``--var failover_mode=kill`` in managed-cache-guide) against a server that is not on this
machine (not a loopback address) is refused before any traffic unless
``--allow-destructive`` is given.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replays import REPLAYS, DestructiveDrillError, Verdict, run_scenario
from respload.cli import parse_var


@contextlib.contextmanager
def servers(name: str, given: dict[str, Any]) -> Iterator[tuple[dict[str, Any], Any]]:
    """The variables to run ``name`` with, and the local servers (``None`` when given)."""
    if given:
        yield given, None
        return
    with REPLAYS[name].local() as here:
        yield here.variables, here


def replay(
    name: str,
    scale: str | None,
    given: dict[str, Any],
    json_dir: Path | None,
    allow_destructive: bool = False,
) -> Verdict:
    """Run one scenario and check it."""
    with servers(name, given) as (variables, here):
        report = run_scenario(name, scale, variables, allow_destructive=allow_destructive)
        if json_dir is not None:
            json_dir.mkdir(parents=True, exist_ok=True)
            (json_dir / f"{name}.json").write_text(report.to_json())
        verdict: Verdict = REPLAYS[name].check(report, here)
        return verdict


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="SCENARIO", help=", ".join(REPLAYS))
    parser.add_argument("--scale", default="ci", help="ci (default) or full (the published)")
    parser.add_argument("--var", type=parse_var, action="append", default=[], metavar="N=V")
    parser.add_argument("--json", type=Path, metavar="DIR", help="keep each report here")
    parser.add_argument(
        "--allow-destructive",
        action="store_true",
        help="let a drill stop a server for good (a kill failover) on a server that is not on "
        "this machine; without it, such a scenario is refused before any traffic",
    )
    args = parser.parse_args(argv)
    scale = None if args.scale == "full" else args.scale
    unknown = [n for n in args.names if n not in REPLAYS]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}: choose from {', '.join(REPLAYS)}")
    failed = 0
    for name in args.names or list(REPLAYS):
        try:
            verdict = replay(name, scale, dict(args.var), args.json, args.allow_destructive)
        except DestructiveDrillError as e:
            print(f"REFUSED {e}", file=sys.stderr, flush=True)
            failed += 1
            continue
        print(verdict.line(), flush=True)
        failed += not verdict.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
