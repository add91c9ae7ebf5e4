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
