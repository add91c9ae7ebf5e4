"""The ``respload`` command line from Python: ``python -m respload ...`` and the ``respload``
console script run the very code of the Rust binary (``respload::cli::main`` in the core).

::

    python -m respload run spec.toml --json report.json
    python -m respload redis-benchmark -t set,get -n 100000 -q
    respload distributed spec.toml --hosts 3 --address auto --json all.json

``distributed`` is this package's own (Python, on a Ray cluster: :mod:`respload.distributed`);
every other command is the binary's.

From Python, :func:`main` takes the arguments and the streams to write to and returns the exit
code, without exiting::

    code = respload.cli.main(["check", "spec.toml"], stdout=io.StringIO())

Ctrl-C: the command runs on a native thread while this thread waits with the GIL released,
in slices of 100 ms, so a ``KeyboardInterrupt`` is seen at once. The first one is passed on
to the command, as the binary's Ctrl-C handler does: the run stops, its partial report is
printed and ``main`` returns normally (0). A second one gives up: the command's remaining
output is dropped and the ``KeyboardInterrupt`` propagates (the console script then exits
with 130, as the binary does). No signal handler is installed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import TextIO

from . import _native

__all__ = ["console_main", "distributed_main", "main", "parse_var"]

_POLL_S = 0.1


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a real file
        return False


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    prog: str = "respload",
) -> int:
    """Run the respload command line on ``argv`` (default ``sys.argv[1:]``), writing to
    ``stdout`` / ``stderr`` (default ``sys.stdout`` / ``sys.stderr``), and return its exit
    code: 0 on success (an interrupted run included), 1 when a ``--check`` budget was not
    met, 2 on errors (the message on stderr).
    ``prog`` is the name shown in usage lines."""
    args = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    if args[:1] == ["distributed"]:
        return distributed_main(args[1:], stdout=out, stderr=err, prog=prog)
    command = _native.Cli.start([prog, *args], out, err, _is_tty(out), _is_tty(err))
    while True:
        try:
            code = command.wait(_POLL_S)
        except KeyboardInterrupt:
            if command.interrupt() > 1:
                command.abandon()
                raise
            continue
        if code is not None:
            return code


def parse_var(text: str) -> tuple[str, int | float | bool | str]:
    """``NAME=VALUE`` as the binary's ``--var`` reads it: an integer, a float, true/false,
    else the text."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"`{text}`: expected NAME=VALUE")
    for cast in (int, float):
        with contextlib.suppress(ValueError):
            return name, cast(value)
    if value in ("true", "false"):
        return name, value == "true"
    return name, value


def _distributed_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{prog} distributed",
        description="Run one workload from N hosts of a Ray cluster (one actor each, started "
        "at one instant) and print the merged report, as `run` prints one. Needs "
        "pip install 'respload[ray]'.",
    )
    parser.add_argument("spec", metavar="SPEC", help="the workload's spec file (TOML or JSON)")
    parser.add_argument("--hosts", type=int, required=True, metavar="N", help="how many hosts")
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="the Ray cluster (ray://HEAD:10001, auto); default: $RAY_ADDRESS, a local "
        "`ray start`, else a cluster started on this machine for the run",
    )
    parser.add_argument(
        "--placement",
        choices=["strict_spread", "spread", "pack"],
        default="strict_spread",
        help="strict_spread (default): one host per node; spread or pack: several on one",
    )
    parser.add_argument(
        "--cpus-per-host",
        type=float,
        default=1.0,
        metavar="CPUS",
        help="Ray CPUs reserved per host (default 1; 0.5 to fit 3 hosts on 2 cores)",
    )
    parser.add_argument("--scale", metavar="NAME", help="apply the file's [scales.NAME]")
    parser.add_argument(
        "--var", type=parse_var, action="append", default=[], metavar="NAME=VALUE", help="set a var"
    )
    parser.add_argument("--json", metavar="FILE", help="write the merged report as JSON")
    parser.add_argument(
        "--hosts-json", metavar="DIR", help="also write each host's own report: DIR/hostI.json"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no live progress line")
    return parser


def distributed_main(
    argv: Sequence[str],
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    prog: str = "respload",
) -> int:
    """``respload distributed SPEC --hosts N [--address ADDR]``: run the spec from N hosts of
    a Ray cluster (:func:`respload.distributed.run_hosts`), print one merged progress line per
    second on ``stderr``, then the merged report on ``stdout`` as ``respload merge`` prints
    it. Returns 0 (an interrupted run included: the first Ctrl-C stops every host and prints
    the partial report), 2 on errors."""
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    parser = _distributed_parser(prog)
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit:  # argparse printed the usage (or --help)
        return 0 if exit.code in (0, None) else 2
    from . import distributed
    from .exceptions import RespLoadError
    from .report import Snapshot
    from .workload import Workload

    def progress(s: Snapshot) -> None:
        if not args.quiet:
            lat = s.latency_ms
            print(
                f"[{s.phase}] {s.t:6.1f}s {s.ops_per_sec:12.0f} ops/s  p50 {lat.p50:.3f} ms  "
                f"p99 {lat.p99:.3f} ms  max {lat.max:.3f} ms  errors {s.errors}  "
                f"conns {s.connections}",
                file=err,
                flush=True,
            )

    try:
        workload = Workload.from_file(args.spec, scale=args.scale, vars=dict(args.var))
        try:
            done = distributed.run_hosts(
                workload,
                hosts=args.hosts,
                address=args.address,
                placement=args.placement,
                cpus_per_host=args.cpus_per_host,
                on_progress=progress,
            )
            own = done.host_reports
        except KeyboardInterrupt as interrupt:
            partial = getattr(interrupt, "host_reports", None)
            if partial is None:
                raise
            own = partial
            print("interrupted: every host stopped; the partial report follows", file=err)
    except (RespLoadError, ImportError, ValueError, OSError) as e:
        print(f"error: {e}", file=err)
        return 2
    with tempfile.TemporaryDirectory(prefix="respload-distributed-") as tmp:
        paths = []
        for i, report in enumerate(own):
            path = os.path.join(args.hosts_json or tmp, f"host{i}.json")
            if args.hosts_json:
                os.makedirs(args.hosts_json, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(report, f)
            paths.append(path)
        merge = ["merge", *paths, *(["--json", args.json] if args.json else [])]
        return main(merge, stdout=out, stderr=err, prog=prog)


def console_main() -> None:
    """Entry point of the ``respload`` console script and ``python -m respload``."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    sys.exit(code)
