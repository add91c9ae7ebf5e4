"""The ``respload`` command line from Python: ``python -m respload ...`` and the ``respload``
console script run the very code of the Rust binary (``respload::cli::main`` in the core).

::

    python -m respload run spec.toml --json report.json
    python -m respload redis-benchmark -t set,get -n 100000 -q

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

import contextlib
import sys
from collections.abc import Sequence
from typing import TextIO

from . import _native

__all__ = ["console_main", "main"]

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


def console_main() -> None:
    """Entry point of the ``respload`` console script and ``python -m respload``."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    sys.exit(code)
