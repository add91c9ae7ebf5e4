"""Type stubs of the native module ``respload._native`` (built from bindings-python/src).

Workloads go in, snapshots and reports come out, as JSON text: the pure-Python package
wraps them. Errors are raised as the classes of ``respload.exceptions``.
"""

import os
from typing import Any, final

__version__: str
SCHEMA_VERSION: int

def check_report(report_json: str, budget_json: str) -> str | None:
    """The report checked against the budget: ``None`` when every limit holds, otherwise the
    message listing every one missed."""

def hdr_log(report_json: str) -> str:
    """The report's timeline as an HdrHistogram interval log."""

def percentile_distribution(report_json: str, command: str | None = None) -> str:
    """The latency distribution of the report's measured requests (or of one command
    label's) as HdrHistogram's ``.hgrm`` text; empty when none finished."""

def histogram_distribution(histogram: str) -> str:
    """The latency distribution of one encoded histogram as HdrHistogram's ``.hgrm`` text;
    empty when it holds nothing."""

def reports_html(reports_json: list[str], labels: list[str]) -> str:
    """The reports as one self-contained HTML page (the baseline first)."""

def validity_warning(report_json: str) -> str | None:
    """The warning of a report whose validity checks failed; ``None`` when trusted."""

def load_report(path: str | os.PathLike[str]) -> str:
    """A report file as JSON text of the current schema (older versions upgraded)."""

def merge_reports(reports: list[str | os.PathLike[str]]) -> str:
    """One report (JSON text) of the reports of hosts that ran one workload together: each
    given as its JSON text (``str``) or as its file (``os.PathLike``, read in the core)."""

def merge_snapshots(snapshots_json: list[str]) -> str | None:
    """One snapshot of several hosts' snapshots of one wall-clock second."""

def lost_host_report(
    template_json: str, index: int, host: str, snapshots_json: list[str], why: str
) -> str:
    """The report of a host lost mid-run, made of the snapshots it streamed."""

def with_phases_of(report_json: str, template_json: str) -> str:
    """The report with the phases of ``template_json`` it never reached added, empty."""

def join_reports(workload_json: str, reports_json: list[str]) -> str:
    """One run's report (JSON text) of the reports of a workload's phases, each run alone."""

def compare_reports(reports_json: list[str], labels: list[str], limits: list[str]) -> str:
    """The comparison (JSON text) of reports, the baseline first, with limits checked."""

def parse_start_at(text: str) -> float:
    """A start instant (UNIX seconds or RFC 3339 text) as UNIX seconds."""

@final
class Workload:
    """A validated workload (secrets kept inside; ``to_json`` redacts them)."""

    @staticmethod
    def from_json(text: str) -> Workload: ...
    @staticmethod
    def from_toml(text: str) -> Workload: ...
    @staticmethod
    def from_file(
        path: str, scale: str | None = None, vars_json: str | None = None
    ) -> Workload: ...
    @staticmethod
    def from_redis_benchmark(line: str) -> tuple[Workload, list[str]]: ...
    @staticmethod
    def from_memtier(line: str) -> Workload: ...
    def with_overrides(self, target: str | None = None, rest: str | None = None) -> Workload: ...
    def shard(self, index: int, count: int) -> Workload: ...
    def starting_at(self, unix_s: float) -> Workload: ...
    def with_barrier(
        self, url: str, id: str | None = None, timeout: str | None = None
    ) -> Workload: ...
    def to_json(self, redact: bool = True) -> str: ...
    def __len__(self) -> int: ...

@final
class Runner:
    """A run on the core's background thread; blocking calls release the GIL."""

    @staticmethod
    def start(workload: Workload) -> Runner: ...
    def next_snapshot(self, timeout: float) -> str | None: ...
    def is_finished(self) -> bool: ...
    def request_stop(self) -> None: ...
    def stop_requested(self) -> bool: ...
    def stop(self) -> str: ...
    def wait(self) -> str: ...

@final
class TraceFile:
    """An open trace file (respload JSON lines, MONITOR log or Twitter CSV), read in batches
    of records; ``respload.Trace`` wraps it."""

    @staticmethod
    def open(path: str, format: str | None = None) -> TraceFile:
        """Open the trace; ``format`` (``respload``, ``monitor``, ``twitter``) when its first
        line does not tell. Raises ``FileError`` or ``SpecError``."""
    def format(self) -> str:
        """The file's format: ``respload``, ``monitor`` or ``twitter``."""
    def next_batch(self, n: int) -> str:
        """Up to ``n`` more records as JSON text: a list of ``{"t_us", "db", "client",
        "args"}``, each argument a string, ``{"b64": ...}`` or ``{"size": n}``; ``[]`` at the
        end (GIL released)."""
    def malformed(self) -> tuple[int, list[str]]:
        """Malformed lines read so far, and the first of them as ``line N: reason``."""

def fit_trace_model(
    path: str,
    format: str | None = None,
    rate_x: float = 1.0,
    keys_x: float = 1.0,
    url: str | None = None,
    top_keys: int = 1000,
) -> str:
    """A model fitted to the trace at ``path`` in one pass (GIL released), as JSON text
    ``{"spec", "fit", "toml", "summary"}``: the spec, how close it is, the spec as TOML (the
    fit in comments at the top) and the fit in a few lines. Raises ``FileError`` or
    ``SpecError``."""

@final
class Capture:
    """A capture (MONITOR into a trace file) on a thread of its own; ``respload.Capture``
    wraps it. Dropped while it runs, it is stopped."""

    @staticmethod
    def start(spec_json: str) -> Capture:
        """Check the capture spec (JSON text: ``target``, ``out``, ``duration``,
        ``max_commands``) and start capturing. Raises ``SpecError``."""
    def wait(self, timeout: float) -> str | None:
        """The report as JSON text once the capture ended (the same on every call), waiting
        up to ``timeout`` seconds (GIL released); ``None`` on timeout. A failed capture raises
        its error once."""
    def is_finished(self) -> bool:
        """Whether the capture thread has ended."""
    def is_started(self) -> bool:
        """Whether every server acknowledged MONITOR (each command from then on is
        recorded)."""
    def request_stop(self) -> None:
        """Ask the capture to stop (within 100 ms, the file finished and kept)."""

def progress_line(snapshot_json: str) -> str:
    """The CLI's live line of a snapshot (JSON text)."""

@final
class Progress:
    """Every phase's progress of a run (bars, figures, the live line), fed with snapshots;
    each method gives the phases' progress as JSON text (a list)."""

    def __init__(self, workload: Workload) -> None: ...
    def update(self, snapshot_json: str) -> str: ...
    def finish(self) -> str: ...
    def phases(self) -> str: ...

@final
class Cli:
    """The core's command line on a thread of its own, writing to Python text streams."""

    @staticmethod
    def start(
        argv: list[str], stdout: object, stderr: object, stdout_tty: bool, stderr_tty: bool
    ) -> Cli: ...
    def wait(self, timeout: float) -> int | None: ...
    def interrupt(self) -> int: ...
    def abandon(self) -> None: ...

@final
class TestServer:
    """A throwaway redis-server under its watchdog (``respload.testing`` wraps it)."""

    port: int
    """The port clients use: the TLS port when it has TLS (then it has no plain port)."""
    dir: str
    """Its working directory (removed when it stops)."""
    certs_dir: str | None
    """Its certificates' directory, when it has TLS."""
    def running(self) -> bool:
        """Whether the server process runs."""
    def kill(self) -> None:
        """Kill it (SIGKILL), as a crash would; its directory stays until ``stop()``."""
    def stop(self) -> None:
        """Stop it and remove its directory (idempotent)."""

def start_servers(
    *,
    cluster: tuple[int, int] | None = None,
    password: str | None = None,
    args: list[str] = ...,
    tls: bool = False,
    tls_auth_clients: bool = False,
    redis_server: str | None = None,
    start_timeout: float | None = None,
    port: int | None = None,
) -> list[TestServer]:
    """Start a redis-server on a free 127.0.0.1 port (or on ``port``), or with ``cluster``
    (``(primaries, replicas)``) a Redis Cluster, primaries first; ``FileNotFoundError`` when a
    binary is missing, ``ValueError`` for bad options, ``RuntimeError`` when they do not
    start."""

@final
class TestClient:
    """The helper's connection of ``respload.testing.RedisServer``: connected at the first
    call, again after one that failed."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        tls: bool = False,
        ca_file: str | None = None,
        cert: str | None = None,
        key: str | None = None,
        user: str | None = None,
        password: str | None = None,
        db: int = 0,
        timeout: float = 10.0,
    ) -> None: ...
    def call(self, args: list[bytes]) -> Any:
        """One command's reply (an error reply returned as ``ReplyError``); raises
        ``ConnectionError`` when the connection fails, ``ReplyError`` when AUTH or SELECT is
        refused."""
    def close(self) -> None:
        """Close the connection."""
