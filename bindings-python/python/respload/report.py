"""The report of a run, with typed attribute access mirroring its JSON schema.

``report.to_dict()`` and ``report.to_json()`` give exactly the core's JSON (the CLI's
``--json`` file). Latencies are milliseconds where the key says ``_ms``; encoded histograms
(``histogram`` fields) are HdrHistogram V2 compressed, base64, values in nanoseconds.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _native
from ._json import dumps as _dumps
from .exceptions import UntrustedReportWarning

if TYPE_CHECKING:  # optional dependencies, imported when used
    import pandas
    from hdrh.histogram import HdrHistogram
    from matplotlib.figure import Figure

__all__ = [
    "ClientStats",
    "IntervalLatency",
    "Latency",
    "PhaseReport",
    "Report",
    "ServerFacts",
    "ServerLoad",
    "ServerSample",
    "Snapshot",
    "Stats",
    "Threshold",
    "TimelineRow",
    "Unsent",
    "Validity",
    "ValidityCheck",
    "decode_histogram",
]

_Json = dict[str, Any]


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "this needs pandas: pip install 'respload[pandas]' (or pip install pandas)"
        ) from None
    return pandas


def _matplotlib() -> tuple[Any, Any, Any]:
    """matplotlib's Figure, FixedLocator and NullLocator, or an ImportError saying how to
    install it."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError:
        raise ImportError(
            "plot() needs matplotlib: pip install 'respload[plot]' (or pip install matplotlib)"
        ) from None
    return Figure, FixedLocator, NullLocator


# Percentiles drawn from a decoded histogram: 0 to 99.999, denser in the tail.
_CURVE = [q / 100 for q in range(0, 90, 5)] + [1 - 10 ** (-k / 8) for k in range(8, 41)]
_TICKS = [0.0, 0.9, 0.99, 0.999, 0.9999, 0.99999]


def _percentile_curve(encoded: str) -> tuple[list[float], list[float]]:
    """The whole latency distribution of an encoded histogram on HdrHistogram's percentile
    axis: x is 1/(1-p), y the value at p in ms."""
    h = decode_histogram(encoded)
    return [1 / (1 - q) for q in _CURVE], [h.get_value_at_percentile(q * 100) / 1e6 for q in _CURVE]


def _percentile_axis(ax: Any, fixed_locator: Any, null_locator: Any) -> None:
    """A log axis of 1/(1-p) ticked at 0%, 90%, 99%, 99.9%, ... (HdrHistogram's plots)."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(fixed_locator([1 / (1 - q) for q in _TICKS]))
    ax.xaxis.set_minor_locator(null_locator())
    ax.set_xticklabels([f"{q * 100:g}%" for q in _TICKS])


def decode_histogram(encoded: str) -> HdrHistogram:
    """Decode a report's ``histogram`` field with the ``hdrhistogram`` package.

    Values are nanoseconds: ``h.get_value_at_percentile(99) / 1e6`` is a p99 in ms.
    """
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        raise ImportError(
            "decoding histograms needs the hdrhistogram package: "
            "pip install 'respload[hdrhistogram]' (or pip install hdrhistogram)"
        ) from None
    if not encoded:
        raise ValueError(
            "this histogram is empty: no replies were recorded, or it is a timeline row's "
            "and the spec's output.interval_histograms is false (the default)"
        )
    return HdrHistogram.decode(encoded)


@dataclass(frozen=True)
class Latency:
    """Latency summary in milliseconds."""

    mean: float
    stddev: float
    min: float
    p50: float
    p90: float
    p95: float
    p99: float
    p99_9: float
    p99_99: float
    max: float

    @classmethod
    def from_dict(cls, d: _Json) -> Latency:
        return cls(
            mean=d["mean"],
            stddev=d["stddev"],
            min=d["min"],
            p50=d["p50"],
            p90=d["p90"],
            p95=d["p95"],
            p99=d["p99"],
            p99_9=d["p99_9"],
            p99_99=d["p99_99"],
            max=d["max"],
        )


@dataclass(frozen=True)
class Stats:
    """Counts and latency of one command, or of all of them (``totals``)."""

    ops: int
    ops_per_sec: float
    hits: int
    misses: int
    errors: int
    error_rate: float
    errors_by_kind: dict[str, int]
    bytes_sent: int
    bytes_received: int
    latency_ms: Latency
    histogram: str = field(repr=False)
    service_ms: Latency | None = None
    """Open loop only: service time, from the actual write (``latency_ms`` counts from the
    intended send time)."""
    service_histogram: str | None = field(default=None, repr=False)
    redirects: int = 0
    """Cluster mode: redirections followed (MOVED, ASK) and retries after TRYAGAIN or
    CLUSTERDOWN; not errors (0, and absent from the JSON, otherwise)."""
    send_lag_ms: Latency | None = None
    """Open loop only: send lag, the clock just before the write that carried a request
    minus its intended send time: how late the client itself sent. Large next to
    ``latency_ms`` means the client, not the server, is in the figures (see
    ``Report.validity``)."""
    send_lag_histogram: str | None = field(default=None, repr=False)
    """Open loop only: the send-lag histogram, encoded like ``histogram`` (ns)."""

    @classmethod
    def from_dict(cls, d: _Json) -> Stats:
        return cls(
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            hits=d["hits"],
            misses=d["misses"],
            errors=d["errors"],
            error_rate=d["error_rate"],
            errors_by_kind=dict(d["errors_by_kind"]),
            bytes_sent=d["bytes_sent"],
            bytes_received=d["bytes_received"],
            latency_ms=Latency.from_dict(d["latency_ms"]),
            histogram=d["histogram"],
            service_ms=Latency.from_dict(d["service_ms"]) if "service_ms" in d else None,
            service_histogram=d.get("service_histogram"),
            redirects=d.get("redirects", 0),
            send_lag_ms=Latency.from_dict(d["send_lag_ms"]) if "send_lag_ms" in d else None,
            send_lag_histogram=d.get("send_lag_histogram"),
        )

    def decode_histogram(self) -> HdrHistogram:
        """The latency histogram, decoded with the ``hdrhistogram`` package (values in ns)."""
        return decode_histogram(self.histogram)

    def decode_send_lag_histogram(self) -> HdrHistogram:
        """Open loop only: the send-lag histogram, decoded (values in ns); ``ValueError``
        in closed loop, which has none."""
        if self.send_lag_histogram is None:
            raise ValueError("no send-lag histogram: send lag is measured in open loop only")
        return decode_histogram(self.send_lag_histogram)


@dataclass(frozen=True)
class IntervalLatency:
    """Latency of one interval, in milliseconds."""

    mean: float
    p50: float
    p99: float
    max: float

    @classmethod
    def from_dict(cls, d: _Json) -> IntervalLatency:
        return cls(mean=d["mean"], p50=d["p50"], p99=d["p99"], max=d["max"])


@dataclass(frozen=True)
class TimelineRow:
    """One interval (normally a second) of a run."""

    t: float
    """Seconds since the measurement began, at the end of this interval."""
    interval_s: float
    ops: int
    ops_per_sec: float
    errors: int
    latency_ms: IntervalLatency
    connections: int
    histogram: str = field(repr=False)
    """This interval's histogram, encoded; empty unless ``output.interval_histograms`` is
    true (snapshots always carry it)."""
    service_ms: IntervalLatency | None = None
    """Open loop only: service time in this interval."""
    target_rate: float | None = None
    """Open loop only: the rate asked for during this interval (a ramp's step rate)."""
    waiting: int | None = None
    """Open loop only: the most requests due but not yet written at once in this interval
    (a full pipeline, a connection down, a busy client)."""
    send_lag_ms: IntervalLatency | None = None
    """Open loop only: the send lag of this interval's requests (ms): the clock just before
    the write that carried each minus its intended send time."""
    behind_ms: float | None = None
    """Open loop only: the longest a due request had waited to be written at the workers'
    20 ms checks (ms): how far the client ran behind its schedule."""
    server_cpu_percent: float | None = None
    """The server's CPU in this interval (% of one core; in cluster mode the busiest node's),
    from the ``server_timeline`` sample taken at its end; None when none was taken."""
    reconnects: int | None = None
    """Reconnections after lost connections in this interval (the warm-up's count in the
    first); the rows add up to ``client.reconnects``. None in reports written before."""
    unix_s: float = 0.0
    """The end of the interval in UNIX seconds (wall clock): rows of several hosts line up
    by it."""
    partial: bool = False
    """A last interval shorter than half the others (the replies that came in after the
    measured time ended): its ``ops_per_sec`` is not the rate the run held.
    ``timeline_frame()`` and ``plot()`` leave it out."""

    @classmethod
    def from_dict(cls, d: _Json) -> TimelineRow:
        # Joined when the phase ends: snapshots do not have it.
        return cls(**_row_fields(d), server_cpu_percent=d.get("server_cpu_percent"))


def _run_rows(
    rows: list[_Json], phase_dicts: list[_Json], phases: list[PhaseReport]
) -> list[TimelineRow]:
    """The run's timeline rows, each the phase's own row where a phase holds the same one (a
    one-phase run's timeline is its phase's): a one-hour merged report builds 3,600 rows, not
    7,200. Rows are frozen, so sharing one is safe."""
    built: dict[tuple[Any, Any], tuple[_Json, TimelineRow]] = {}
    for pd, phase in zip(phase_dicts, phases):
        for rd, row in zip(pd["timeline"], phase.timeline):
            built[(rd["t"], rd.get("unix_s"))] = (rd, row)
    out = []
    for rd in rows:
        seen = built.get((rd["t"], rd.get("unix_s")))
        out.append(seen[1] if seen is not None and seen[0] == rd else TimelineRow.from_dict(rd))
    return out


def _row_fields(d: _Json) -> dict[str, Any]:
    return {
        "t": d["t"],
        "unix_s": d.get("unix_s", 0.0),
        "interval_s": d["interval_s"],
        "ops": d["ops"],
        "ops_per_sec": d["ops_per_sec"],
        "errors": d["errors"],
        "latency_ms": IntervalLatency.from_dict(d["latency_ms"]),
        "connections": d["connections"],
        "histogram": d["histogram"],
        "service_ms": (IntervalLatency.from_dict(d["service_ms"]) if d.get("service_ms") else None),
        "target_rate": d.get("target_rate"),
        "waiting": d.get("waiting"),
        "send_lag_ms": (
            IntervalLatency.from_dict(d["send_lag_ms"]) if d.get("send_lag_ms") else None
        ),
        "behind_ms": d.get("behind_ms"),
        "reconnects": d.get("reconnects"),
        "partial": d.get("partial", False),
    }


@dataclass(frozen=True)
class Snapshot:
    """One interval's figures, streamed while a run goes on (``Runner`` iteration and the
    ``on_progress`` callback)."""

    phase: str
    """The phase running."""
    measured: bool
    """Whether that phase counts in the report's totals."""
    t: float
    """Seconds since the phase's measurement began (negative during its warm-up)."""
    interval_s: float
    ops: int
    ops_per_sec: float
    errors: int
    latency_ms: IntervalLatency
    connections: int
    histogram: str = field(repr=False)
    """This interval's histogram, encoded; empty unless ``output.interval_histograms`` is
    true (snapshots always carry it)."""
    service_ms: IntervalLatency | None = None
    """Open loop only: service time in this interval."""
    target_rate: float | None = None
    """Open loop only: the rate asked for during this interval (a ramp's step rate)."""
    waiting: int | None = None
    """Open loop only: the most requests due but not yet written at once in this interval
    (a full pipeline, a connection down, a busy client)."""
    send_lag_ms: IntervalLatency | None = None
    """Open loop only: the send lag of this interval's requests (ms): the clock just before
    the write that carried each minus its intended send time."""
    behind_ms: float | None = None
    """Open loop only: the longest a due request had waited to be written at the workers'
    20 ms checks (ms): how far the client ran behind its schedule."""
    reconnects: int | None = None
    """Reconnections after lost connections in this interval (the warm-up's count in the
    first); the rows add up to ``client.reconnects``. None in reports written before."""
    unix_s: float = 0.0
    """The end of the interval in UNIX seconds (wall clock)."""
    partial: bool = False
    """The run's last interval, shorter than half the others."""

    @classmethod
    def from_dict(cls, d: _Json) -> Snapshot:
        return cls(phase=d["phase"], measured=d["measured"], **_row_fields(d))

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class ClientStats:
    """What the load generator itself cost, so a client bottleneck shows."""

    threads: int
    connections: int
    cpu_user_s: float
    cpu_sys_s: float
    cpu_s_per_million: float
    loop_lag_ms_max: float
    reconnects: int
    busy_max: float
    """The busiest worker thread's CPU time over the time it ran (0 to 1): near 1, the client
    itself limits the load and delays requests (the ``client_busy`` validity check)."""
    waiting_max: int | None = None
    """Open loop only: the most requests waiting to be sent at once (``timeline[].waiting``)."""
    behind_ms_max: float | None = None
    """Open loop only: the longest a due request waited to be written, at the workers' 20 ms
    checks (ms; ``timeline[].behind_ms``)."""

    @classmethod
    def from_dict(cls, d: _Json) -> ClientStats:
        return cls(
            threads=d["threads"],
            connections=d["connections"],
            cpu_user_s=d["cpu_user_s"],
            cpu_sys_s=d["cpu_sys_s"],
            cpu_s_per_million=d["cpu_s_per_million"],
            loop_lag_ms_max=d["loop_lag_ms_max"],
            reconnects=d["reconnects"],
            waiting_max=d.get("waiting_max"),
            behind_ms_max=d.get("behind_ms_max"),
            busy_max=d.get("busy_max", 0.0),
        )


@dataclass(frozen=True)
class ServerFacts:
    """Facts about the server, read once before the run."""

    address: str
    version: str
    mode: str
    os: str
    config: dict[str, str]

    @classmethod
    def from_dict(cls, d: _Json) -> ServerFacts:
        return cls(
            address=d["address"],
            version=d["version"],
            mode=d["mode"],
            os=d["os"],
            config=dict(d["config"]),
        )


@dataclass(frozen=True)
class ServerSample:
    """One interval of the server's own figures, from ``INFO`` on a side connection."""

    t: float
    cpu_percent: float
    """User + system CPU of the server over the interval, in percent of one core."""
    used_memory: int
    ops_per_sec: float
    connected_clients: int
    keyspace_hits: int
    keyspace_misses: int
    evicted_keys: int
    latest_fork_usec: int
    rdb_bgsave_in_progress: bool
    aof_rewrite_in_progress: bool
    role: str
    master_link_status: str
    connected_slaves: int
    info_ms: float
    """The INFO's round trip: the observer's own cost."""

    @classmethod
    def from_dict(cls, d: _Json) -> ServerSample:
        return cls(**{f: d[f] for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class ServerLoad:
    """Summary of the server samples: CPU against the 80% line, peak memory."""

    peak_cpu_percent: float
    mean_cpu_percent: float
    cpu_limit_percent: float
    cpu_over_limit: bool
    peak_used_memory: int
    samples: int
    observer_info_ms: float
    peak_node: str | None = None
    """Cluster mode, in the summary over every node: the node with the peak CPU."""

    @classmethod
    def from_dict(cls, d: _Json) -> ServerLoad:
        fields: dict[str, Any] = {f: d.get(f) for f in cls.__dataclass_fields__}
        return cls(**fields)


@dataclass(frozen=True)
class NodeServer:
    """Cluster mode: one node's server samples and their summary."""

    server_timeline: list[ServerSample]
    server_load: ServerLoad | None = None

    @classmethod
    def from_dict(cls, d: _Json) -> NodeServer:
        load = d.get("server_load")
        return cls(
            server_timeline=[ServerSample.from_dict(x) for x in d.get("server_timeline", [])],
            server_load=ServerLoad.from_dict(load) if load else None,
        )


@dataclass(frozen=True)
class Availability:
    """The longest stretch without a successful reply, and when it began."""

    longest_gap_ms: float
    longest_gap_at_s: float

    @classmethod
    def from_dict(cls, d: _Json) -> Availability:
        return cls(longest_gap_ms=d["longest_gap_ms"], longest_gap_at_s=d["longest_gap_at_s"])


@dataclass(frozen=True)
class Unsent:
    """Open loop: requests that were due when a phase ended but never sent (the client
    could not keep up, or a connection was down). Their latency is unknown; ``waited_ms`` is
    a lower bound of it."""

    requests: int
    waited_ms: Latency
    """Per unsent request, the phase's end minus its intended send time (ms)."""

    @classmethod
    def from_dict(cls, d: _Json) -> Unsent:
        return cls(requests=d["requests"], waited_ms=Latency.from_dict(d["waited_ms"]))


@dataclass(frozen=True)
class ValidityCheck:
    """One of the run's checks on itself: whether its figures describe the server."""

    check: str
    """``"client_lag"`` (open loop: the p99 of ``client_lag_ms``, the client's own lateness,
    against the larger of 10% of the latency p50 and 0.05 ms), ``"arrivals"`` (poisson
    arrivals: the Anderson-Darling statistic of the gaps between sends against the
    exponential, at the 1% level), ``"rate"`` (open loop: the achieved rate's relative error)
    or ``"client_busy"`` (``client.busy_max``, at most 0.8)."""
    phase: str
    """The phase it checked."""
    passed: bool
    value: float
    """What was measured, in the check's unit (ms, a statistic, a relative error, a share)."""
    limit: float
    """The largest ``value`` that passes."""
    detail: str
    """One sentence saying what was found."""

    @classmethod
    def from_dict(cls, d: _Json) -> ValidityCheck:
        return cls(
            check=d["check"],
            phase=d["phase"],
            passed=d["passed"],
            value=d["value"],
            limit=d["limit"],
            detail=d["detail"],
        )

    def __str__(self) -> str:
        """``check (phase): detail``, as the core lists a failed check."""
        return f"{self.check} ({self.phase}): {self.detail}"


@dataclass(frozen=True)
class Threshold:
    """One limit of the spec's ``thresholds``, and how the run did against it."""

    name: str
    """The limit after its phase and command: ``p99_ms``, ``commands.GET.p99_ms``,
    ``phases.load.error_rate``."""
    metric: str
    """``p50_ms``, ``p90_ms``, ``p99_ms``, ``p99_9_ms``, ``max_ms``, ``error_rate`` (at
    most) or ``min_ops_per_sec`` (at least)."""
    limit: float
    passed: bool
    phase: str | None = None
    """The phase whose results it bounds; ``None`` for the run's (the measured phases)."""
    command: str | None = None
    """The command label whose results it bounds; ``None`` for all commands."""
    value: float | None = None
    """The figure it was judged on; ``None`` when there was none (no requests, a phase that
    did not run)."""
    stopped_run: bool = False
    """Whether it stopped the run (``abort_on_fail``)."""

    @classmethod
    def from_dict(cls, d: _Json) -> Threshold:
        return cls(
            name=d["name"],
            metric=d["metric"],
            limit=d["limit"],
            passed=d["passed"],
            phase=d.get("phase"),
            command=d.get("command"),
            value=d.get("value"),
            stopped_run=d.get("stopped_run", False),
        )


@dataclass(frozen=True)
class Validity:
    """Whether a run's figures can be trusted as the server's, and why not."""

    trusted: bool
    """True when every check passed."""
    checks: list[ValidityCheck]

    @property
    def failed(self) -> list[ValidityCheck]:
        """The checks that did not pass."""
        return [c for c in self.checks if not c.passed]

    @classmethod
    def from_dict(cls, d: _Json) -> Validity:
        return cls(trusted=d["trusted"], checks=[ValidityCheck.from_dict(c) for c in d["checks"]])


@dataclass(frozen=True)
class EventReport:
    """One fault drill of a phase and what it cost (see docs/report.md)."""

    drill: str
    mode: str | None
    node: str
    replica: str | None
    at_s: float
    started_s: float | None
    finished_s: float | None
    recovery_s: float | None
    fork_usec: int | None
    sync_s: float | None
    full_sync: bool | None
    error: str | None
    ops_during: int | None
    errors_during: int | None
    p99_during_ms: float | None
    p99_before_ms: float | None
    throughput_before: float | None
    recovered_after_s: float | None
    longest_gap_ms: float | None

    @classmethod
    def from_dict(cls, d: _Json) -> EventReport:
        fields: dict[str, Any] = {f: d.get(f) for f in cls.__dataclass_fields__}
        return cls(**fields)


@dataclass(frozen=True)
class RampStep:
    """One step of a rate or connection ramp."""

    start_s: float
    duration_s: float
    connections: int
    ops: int
    ops_per_sec: float
    errors: int
    error_rate: float
    latency_ms: Latency
    target_rate: float | None = None
    service_ms: Latency | None = None

    @classmethod
    def from_dict(cls, d: _Json) -> RampStep:
        service = d.get("service_ms")
        return cls(
            start_s=d["start_s"],
            duration_s=d["duration_s"],
            connections=d["connections"],
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            errors=d["errors"],
            error_rate=d["error_rate"],
            latency_ms=Latency.from_dict(d["latency_ms"]),
            target_rate=d.get("target_rate"),
            service_ms=Latency.from_dict(service) if service else None,
        )


@dataclass(frozen=True)
class SloPoint:
    """One step of an SLO search: a point of the latency-versus-throughput curve."""

    run: int
    rate: float
    achieved_rate: float
    duration_s: float
    ops: int
    errors: int
    error_rate: float
    percentile_ms: float
    latency_ms: Latency
    met: bool
    service_ms: Latency | None = None

    @classmethod
    def from_dict(cls, d: _Json) -> SloPoint:
        service = d.get("service_ms")
        fields = {
            f: d[f] for f in cls.__dataclass_fields__ if f not in ("latency_ms", "service_ms")
        }
        return cls(
            **fields,
            latency_ms=Latency.from_dict(d["latency_ms"]),
            service_ms=Latency.from_dict(service) if service else None,
        )


@dataclass(frozen=True)
class SloResult:
    """The result of an SLO search: the best rate meeting the budget (``None`` if none did)."""

    percentile: float
    budget_ms: float
    max_error_rate: float
    min_achieved: float
    best_rate: float | None
    curve: list[SloPoint]

    @classmethod
    def from_dict(cls, d: _Json) -> SloResult:
        return cls(
            percentile=d["percentile"],
            budget_ms=d["budget_ms"],
            max_error_rate=d["max_error_rate"],
            min_achieved=d["min_achieved"],
            best_rate=d.get("best_rate"),
            curve=[SloPoint.from_dict(p) for p in d["curve"]],
        )


def _server(d: _Json) -> dict[str, Any]:
    load = d.get("server_load")
    slo = d.get("slo")
    return {
        "server_timeline": [ServerSample.from_dict(x) for x in d.get("server_timeline", [])],
        "server_load": ServerLoad.from_dict(load) if load else None,
        "server_nodes": {k: NodeServer.from_dict(v) for k, v in d.get("server_nodes", {}).items()},
        "availability": Availability.from_dict(d["availability"]),
        "slo": SloResult.from_dict(slo) if slo else None,
    }


def _latency_or_none(d: _Json | None) -> Latency | None:
    return Latency.from_dict(d) if d is not None else None


def _validity(d: _Json) -> Validity:
    """A report's or a phase's ``validity``; trusted with no checks when absent (as the core
    reads a report written before schema 2)."""
    return Validity.from_dict(d["validity"]) if "validity" in d else Validity(True, [])


def _commands(d: _Json) -> dict[str, Stats]:
    return {label: Stats.from_dict(s) for label, s in d.items()}


@dataclass(frozen=True)
class PhaseReport:
    """The results of one phase."""

    name: str
    measured: bool
    duration_s: float
    interrupted: bool
    totals: Stats
    commands: dict[str, Stats]
    timeline: list[TimelineRow]
    client: ClientStats
    validity: Validity
    """The phase's own checks (empty when not measured)."""
    workload: dict[str, Any] = field(repr=False)
    target_rate: float | None = None
    """Open loop only: the rate asked for, in requests per second."""
    server_timeline: list[ServerSample] = field(default_factory=list, repr=False)
    """The server's figures per interval (empty when ``observe.info`` is off)."""
    server_load: ServerLoad | None = None
    nodes: dict[str, Stats] = field(default_factory=dict, repr=False)
    """Cluster mode: per node (``host:port``), the requests it answered or failed on;
    empty when not a cluster run."""
    server_nodes: dict[str, NodeServer] = field(default_factory=dict, repr=False)
    """Cluster mode: each node's server samples."""
    availability: Availability = field(default_factory=lambda: Availability(0.0, 0.0))
    """The longest stretch without a successful reply."""
    events: list[EventReport] = field(default_factory=list)
    """The phase's fault drills (``events`` in the spec)."""
    steps: list[RampStep] = field(default_factory=list, repr=False)
    """With a rate or connection ramp: one summary per step."""
    slo: SloResult | None = None
    """An SLO search: the curve and the best rate."""
    output_error: str | None = None
    """A file of the phase's ``output`` that could not be written when it ended (the path
    and the OS error)."""
    server: ServerFacts | None = None
    """Facts about this phase's server when its target is not the first phase's (the
    report's ``server``); ``None`` otherwise."""
    unsent: Unsent | None = None
    """Open loop: the requests due but never sent when the phase ended; ``None`` when there
    were none."""
    client_lag_ms: Latency | None = None
    """Open loop: the client's own part of the send lag (ms), from when a request could be
    written (its intended time, or when its connection had room again) to its write; ``None``
    in closed loop."""
    started_at: float = 0.0
    """When its measurement began (the end of its warm-up), UNIX seconds: timeline ``t`` 0."""

    @classmethod
    def from_dict(cls, d: _Json) -> PhaseReport:
        return cls(
            name=d["name"],
            measured=d["measured"],
            duration_s=d["duration_s"],
            interrupted=d["interrupted"],
            totals=Stats.from_dict(d["totals"]),
            commands=_commands(d["commands"]),
            timeline=[TimelineRow.from_dict(r) for r in d["timeline"]],
            client=ClientStats.from_dict(d["client"]),
            validity=_validity(d),
            workload=d["workload"],
            target_rate=d.get("target_rate"),
            nodes=_commands(d.get("nodes", {})),
            events=[EventReport.from_dict(e) for e in d.get("events", [])],
            steps=[RampStep.from_dict(x) for x in d.get("steps", [])],
            output_error=d.get("output_error"),
            server=ServerFacts.from_dict(d["server"]) if d.get("server") else None,
            unsent=Unsent.from_dict(d["unsent"]) if d.get("unsent") else None,
            client_lag_ms=_latency_or_none(d.get("client_lag_ms")),
            started_at=d.get("started_at", 0.0),
            **_server(d),
        )


@dataclass(frozen=True)
class ShardOf:
    """Which share of which workload a shard's report ran (``run(..., shard=(i, n))``)."""

    index: int
    """This shard, from 0."""
    count: int
    """How many shards the workload was split into."""
    workload: dict[str, Any] = field(repr=False)
    """The whole workload, normalized, secrets redacted."""

    @classmethod
    def from_dict(cls, d: _Json) -> ShardOf:
        return cls(index=d["index"], count=d["count"], workload=d["workload"])


@dataclass(frozen=True)
class HostReport:
    """One host's part of a merged report (:func:`merge_reports`)."""

    name: str
    """The host's name (its report's ``host``), or ``host-N`` when it had none."""
    started_at: float
    """When its run started, UNIX seconds."""
    start_skew_ms: float
    """How late its first request went out: after ``start_at`` when one was set, else after
    the earliest host's (ms)."""
    ops: int
    """Its measured requests."""
    errors: int
    """Its measured failed requests."""
    interrupted: bool
    """Whether its run was stopped early or failed."""
    client: ClientStats = field(repr=False)
    """What the load generator cost on that host."""
    shard: int | None = None
    """Its shard, when the reports were shards."""
    error: str | None = None
    """Its run's error, if a phase failed."""
    seed: int | None = None
    """The seed its run used (its report's ``seed``): a shard's own, derived from the
    workload's ``seed`` or drawn by the host when the workload has none, so that each host's
    part can be run again. ``None`` in reports merged before it was recorded."""

    @classmethod
    def from_dict(cls, d: _Json) -> HostReport:
        return cls(
            name=d["name"],
            started_at=d["started_at"],
            start_skew_ms=d["start_skew_ms"],
            ops=d["ops"],
            errors=d["errors"],
            interrupted=d["interrupted"],
            client=ClientStats.from_dict(d["client"]),
            shard=d.get("shard"),
            error=d.get("error"),
            seed=d.get("seed"),
        )


@dataclass(frozen=True, repr=False)
class Report:
    """The result of a run: ``totals``, per-command ``commands``, the per-second
    ``timeline``, every phase, the client's own cost, server facts and the normalized
    workload (secrets redacted)."""

    schema_version: int
    respload_version: str
    started_at: float
    duration_s: float
    interrupted: bool
    seed: int
    totals: Stats
    commands: dict[str, Stats]
    timeline: list[TimelineRow]
    client: ClientStats
    server: ServerFacts
    workload: dict[str, Any]
    phases: list[PhaseReport]
    validity: Validity
    """Can the run's figures be trusted as the server's: every measured phase's checks
    (send lag, arrivals, rate, client CPU), ``trusted`` when all passed. ``check()`` warns
    (:class:`UntrustedReportWarning`) when not."""
    _json: str = field(compare=False)
    server_timeline: list[ServerSample] = field(default_factory=list, repr=False)
    """Measured phases' server samples, ``t`` counting on."""
    server_load: ServerLoad | None = None
    nodes: dict[str, Stats] = field(default_factory=dict, repr=False)
    """Cluster mode: measured phases together, per node (``host:port``); empty when not a
    cluster run."""
    server_nodes: dict[str, NodeServer] = field(default_factory=dict, repr=False)
    """Cluster mode: each node's server samples over the measured phases."""
    availability: Availability = field(default_factory=lambda: Availability(0.0, 0.0))
    """The longest stretch without a successful reply over the measured phases."""
    slo: SloResult | None = None
    """An SLO search: the result of the last phase that searched."""
    error: str | None = None
    """Why the run stopped before its last phase: a later phase failed, in practice because
    it could not start (its server went away after the earlier phases ran, whose results
    are kept); ``None`` otherwise. The report is then marked interrupted."""
    unsent: Unsent | None = None
    """Open loop: the requests due but never sent when the measured phases ended; ``None``
    when there were none."""
    client_lag_ms: Latency | None = None
    """Open loop: the client's own part of the send lag over the measured phases (as
    ``PhaseReport.client_lag_ms``); ``None`` in closed loop."""
    host: str = ""
    """The machine that ran it (its host name); empty in a merged report."""
    shard: ShardOf | None = None
    """A shard's report (``shard=(i, n)``): which share of which workload it ran."""
    start_at: float | None = None
    """The instant the run was asked to start at (``start_at=``), UNIX seconds."""
    start_skew_ms: float | None = None
    """How late the first request went out after ``start_at`` (ms)."""
    hosts: list[HostReport] = field(default_factory=list)
    """A merged report (:func:`merge_reports`): the hosts whose reports it merged."""
    passed: bool = True
    """Every threshold held and the run was complete (not interrupted, no phase failed, not
    stopped by a threshold); true for a complete run without thresholds."""
    thresholds: list[Threshold] = field(default_factory=list)
    """The spec's ``thresholds`` (the run's, then each phase's), each judged."""
    stopped_by: str | None = None
    """Why a threshold with ``abort_on_fail`` stopped the run early; ``None`` otherwise."""

    @classmethod
    def from_json(cls, text: str) -> Report:
        """A report from the core's JSON (a ``respload --json`` file, or ``to_json()``)."""
        d = json.loads(text)
        phases = [PhaseReport.from_dict(p) for p in d["phases"]]
        return cls(
            schema_version=d["schema_version"],
            respload_version=d["respload_version"],
            started_at=d["started_at"],
            duration_s=d["duration_s"],
            interrupted=d["interrupted"],
            seed=d["seed"],
            totals=Stats.from_dict(d["totals"]),
            commands=_commands(d["commands"]),
            timeline=_run_rows(d["timeline"], d["phases"], phases),
            client=ClientStats.from_dict(d["client"]),
            server=ServerFacts.from_dict(d["server"]),
            workload=d["workload"],
            phases=phases,
            validity=_validity(d),
            _json=text,
            nodes=_commands(d.get("nodes", {})),
            error=d.get("error"),
            unsent=Unsent.from_dict(d["unsent"]) if d.get("unsent") else None,
            client_lag_ms=_latency_or_none(d.get("client_lag_ms")),
            host=d.get("host", ""),
            shard=ShardOf.from_dict(d["shard"]) if d.get("shard") else None,
            start_at=d.get("start_at"),
            start_skew_ms=d.get("start_skew_ms"),
            hosts=[HostReport.from_dict(h) for h in d.get("hosts", [])],
            # A report written before `passed` had no thresholds: complete is passed.
            passed=d.get("passed", not d["interrupted"] and d.get("error") is None),
            thresholds=[Threshold.from_dict(t) for t in d.get("thresholds", [])],
            stopped_by=d.get("stopped_by"),
            **_server(d),
        )

    @classmethod
    def from_dict(cls, d: _Json) -> Report:
        return cls.from_json(json.dumps(d))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Report:
        """Read a report written by ``respload run --json`` or :meth:`save`. A report of an
        older schema version is upgraded; one of a newer version (from a newer respload)
        raises :class:`~respload.SpecError` naming its version; a missing file raises
        :class:`~respload.FileError`."""
        return cls.from_json(_native.load_report(os.fspath(path)))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the report as the core's JSON (what ``respload run --json`` writes), for
        :meth:`load` later."""
        Path(path).write_text(self._json, encoding="utf-8")

    def phase(self, name: str) -> PhaseReport:
        """The phase named ``name``; ``KeyError`` (naming the phases there are) otherwise."""
        for p in self.phases:
            if p.name == name:
                return p
        names = ", ".join(repr(p.name) for p in self.phases) or "none"
        raise KeyError(f"no phase {name!r} in this report (phases: {names})")

    def to_json(self) -> str:
        """The report as the core writes it (the CLI's ``--json``)."""
        return self._json

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON data (``json.loads(report.to_json())``)."""
        result: dict[str, Any] = json.loads(self._json)
        return result

    def hdr_log(self) -> str:
        """The timeline as an HdrHistogram interval log (what ``respload run --hdr-log``
        writes), for HistogramLogAnalyzer or ``hdrh.log.HistogramLogReader``: one interval
        histogram per timeline row, values in nanoseconds. The run needs
        ``output={"interval_histograms": True}``, else ``SpecError`` names that option."""
        return _native.hdr_log(self._json)

    def percentile_distribution(self, command: str | None = None) -> str:
        """The latency distribution of the measured requests (or of one ``command``
        label's) as HdrHistogram's percentile distribution, the ``.hgrm`` text its plotter
        and HistogramLogAnalyzer draw (what ``respload compare --hgrm`` writes): value in
        ms, percentile, count, 1/(1-percentile). Empty when no request finished; an unknown
        label raises :class:`~respload.SpecError`."""
        return _native.percentile_distribution(self._json, command)

    def write_hdr_log(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`hdr_log` to ``path``."""
        Path(path).write_text(self.hdr_log(), encoding="ascii")

    def histogram(self, command: str | None = None) -> HdrHistogram:
        """The latency histogram of all measured requests, or of one ``command`` label,
        decoded with the ``hdrhistogram`` package. Values are nanoseconds."""
        stats = self.totals if command is None else self.commands[command]
        return stats.decode_histogram()

    def timeline_frame(self) -> pandas.DataFrame:
        """The timeline as a pandas DataFrame, one row per interval.

        Columns: ``t``, ``interval_s``, ``ops``, ``ops_per_sec``, ``errors``,
        ``latency_ms_mean``, ``latency_ms_p50``, ``latency_ms_p99``, ``latency_ms_max``,
        ``connections``, ``reconnects`` (in reports that keep it), ``server_cpu_percent``
        (when the server was sampled: its CPU in the interval, in cluster mode the busiest
        node's); in open loop also
        ``target_rate`` (the rate asked for, beside ``ops_per_sec``), ``service_ms_p50``,
        ``service_ms_p99`` (None in closed loop, and where an interval has no service
        time), ``send_lag_ms_p50``, ``send_lag_ms_p99`` (the send lag: how late the client
        wrote the interval's requests), ``waiting`` and ``behind_ms`` (the requests due but
        not yet sent, and the longest such wait, at the workers' 20 ms checks). A last row
        shorter than half the others (``partial``) is left out: its rate is not one the run
        held."""
        pd = _pandas()
        rows = [
            {
                "t": r.t,
                "interval_s": r.interval_s,
                "ops": r.ops,
                "ops_per_sec": r.ops_per_sec,
                "errors": r.errors,
                "latency_ms_mean": r.latency_ms.mean,
                "latency_ms_p50": r.latency_ms.p50,
                "latency_ms_p99": r.latency_ms.p99,
                "latency_ms_max": r.latency_ms.max,
                "connections": r.connections,
                "reconnects": r.reconnects,
                "server_cpu_percent": r.server_cpu_percent,
                "target_rate": r.target_rate,
                "service_ms_p50": r.service_ms.p50 if r.service_ms else None,
                "service_ms_p99": r.service_ms.p99 if r.service_ms else None,
                "send_lag_ms_p50": r.send_lag_ms.p50 if r.send_lag_ms else None,
                "send_lag_ms_p99": r.send_lag_ms.p99 if r.send_lag_ms else None,
                "waiting": r.waiting,
                "behind_ms": r.behind_ms,
            }
            for r in self.timeline
            if not r.partial
        ]
        columns = [
            "t",
            "interval_s",
            "ops",
            "ops_per_sec",
            "errors",
            "latency_ms_mean",
            "latency_ms_p50",
            "latency_ms_p99",
            "latency_ms_max",
            "connections",
        ]
        if any(r.reconnects is not None for r in self.timeline):
            columns.append("reconnects")
        if any(r.server_cpu_percent is not None for r in self.timeline):
            columns.append("server_cpu_percent")
        if any(r.target_rate is not None or r.service_ms is not None for r in self.timeline):
            columns += [
                "target_rate",
                "service_ms_p50",
                "service_ms_p99",
                "send_lag_ms_p50",
                "send_lag_ms_p99",
                "waiting",
                "behind_ms",
            ]
        return pd.DataFrame(rows, columns=columns)

    def latency_frame(self) -> pandas.DataFrame:
        """Per-command results as a pandas DataFrame: one row per command label plus a last
        row ``"total"``, indexed by ``command``; latency columns are milliseconds."""
        pd = _pandas()
        items = [*self.commands.items(), ("total", self.totals)]
        rows = [
            {
                "command": label,
                "ops": s.ops,
                "ops_per_sec": s.ops_per_sec,
                "hits": s.hits,
                "misses": s.misses,
                "errors": s.errors,
                "error_rate": s.error_rate,
                **{
                    name: getattr(s.latency_ms, name)
                    for name in (
                        "mean",
                        "stddev",
                        "min",
                        "p50",
                        "p90",
                        "p95",
                        "p99",
                        "p99_9",
                        "p99_99",
                        "max",
                    )
                },
            }
            for label, s in items
        ]
        return pd.DataFrame(rows).set_index("command")

    def plot(self, figure: Figure | None = None) -> Figure:
        """Draw the run with matplotlib: throughput over time, p50/p99 latency over time,
        and the whole latency distribution per command, decoded from its histogram, on
        HdrHistogram's percentile axis (log scale of 1/(1-p), ticks at 90%, 99%, 99.9%, ...;
        needs the ``hdrhistogram`` package). A ``partial`` last timeline row (the replies
        that came in after the measured time) is left out of the time plots. Returns the
        figure (drawn into ``figure`` when given)."""
        _Figure, FixedLocator, NullLocator = _matplotlib()
        fig = figure if figure is not None else _Figure(figsize=(10, 9), layout="constrained")
        throughput, latency, dist = fig.subplots(3, 1)
        # A partial last row (the replies after the measured time, over a few milliseconds)
        # would draw, as a rate, a drop that never happened.
        rows = [r for r in self.timeline if not r.partial]
        t = [r.t for r in rows]
        throughput.plot(t, [r.ops_per_sec for r in rows], marker=".", label="ops/s")
        throughput.set(title="Throughput", xlabel="time (s)", ylabel="ops/s")
        throughput.set_ylim(bottom=0)
        latency.plot(t, [r.latency_ms.p50 for r in rows], marker=".", label="p50")
        latency.plot(t, [r.latency_ms.p99 for r in rows], marker=".", label="p99")
        latency.set(title="Latency per interval", xlabel="time (s)", ylabel="ms")
        latency.set_ylim(bottom=0)
        latency.legend()
        for label, s in [*self.commands.items(), ("all", self.totals)]:
            dist.plot(*_percentile_curve(s.histogram), label=label)
        _percentile_axis(dist, FixedLocator, NullLocator)
        dist.set(title="Latency by percentile", xlabel="percentile", ylabel="ms")
        dist.set_ylim(bottom=0)
        dist.legend()
        return fig

    def check(
        self,
        *,
        p50_ms: float | None = None,
        p90_ms: float | None = None,
        p99_ms: float | None = None,
        p99_9_ms: float | None = None,
        max_ms: float | None = None,
        error_rate: float | None = None,
        min_ops_per_sec: float | None = None,
        commands: Mapping[str, Mapping[str, float]] | None = None,
    ) -> Report:
        """Assert service levels, for test suites: raise ``AssertionError`` naming every
        limit that was missed, return the report if all hold. Limits on the totals: p50, p90,
        p99, p99.9 and max latency in ms at most ``p50_ms``, ``p90_ms``, ``p99_ms``,
        ``p99_9_ms``, ``max_ms``; error rate
        at most ``error_rate`` (0 to 1); throughput at least ``min_ops_per_sec``. The same
        limits per command label under ``commands`` (``{"GET": {"p99_ms": 2}}``). An
        interrupted run, or one with no requests, fails any check. The rules and the
        message are the core's (the same as Node's ``report.check()``); a bad limit raises
        ``SpecError`` naming it (``check.commands.GET.p99_ms``).

        A report whose ``validity.trusted`` is false also warns
        (:class:`UntrustedReportWarning`, a ``RuntimeWarning``) naming each failed validity
        check, its phase and its detail; the warning alone does not fail the check."""
        limits = {
            "p50_ms": p50_ms,
            "p90_ms": p90_ms,
            "p99_ms": p99_ms,
            "p99_9_ms": p99_9_ms,
            "max_ms": max_ms,
            "error_rate": error_rate,
            "min_ops_per_sec": min_ops_per_sec,
            "commands": commands,
        }
        budget = {k: v for k, v in limits.items() if v is not None}
        message = _native.check_report(self._json, _dumps(budget, "check"))
        untrusted = _native.validity_warning(self._json)
        if untrusted is not None:
            # The core's text (Node's report.check() and the CLI's --check give the same).
            warnings.warn(UntrustedReportWarning(untrusted, self.validity.failed), stacklevel=2)
        if message is not None:
            raise AssertionError(message)
        return self

    def _repr_html_(self) -> str:
        """A compact summary for Jupyter."""
        from html import escape

        def row(label: str, s: Stats) -> str:
            lat = s.latency_ms
            cells = [
                escape(label),
                f"{s.ops:,}",
                f"{s.ops_per_sec:,.0f}",
                f"{lat.p50:.3f}",
                f"{lat.p99:.3f}",
                f"{lat.p99_9:.3f}",
                f"{lat.max:.3f}",
                f"{s.errors:,}",
            ]
            return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"

        head = "".join(
            f"<th>{h}</th>"
            for h in ["", "ops", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors"]
        )
        rows = "".join(row(k, v) for k, v in self.commands.items()) + row("total", self.totals)
        state = " <b>(interrupted)</b>" if self.interrupted else ""
        return (
            f"<div><p>respload {escape(self.respload_version)}: {self.duration_s:.2f} s "
            f"against {escape(self.server.address)} ({escape(self.server.version)}){state}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            f"{self._thresholds_html()}</div>"
        )

    def _thresholds_html(self) -> str:
        """The thresholds, one row each with its verdict; empty without thresholds."""
        from html import escape

        if not self.thresholds:
            return ""
        rows = []
        for t in self.thresholds:
            op = ">=" if t.metric == "min_ops_per_sec" else "<="
            value = "-" if t.value is None else f"{t.value:.3f}"
            verdict = "ok" if t.passed else "<b>FAIL</b>"
            if t.stopped_run:
                verdict += " (stopped the run)"
            cells = [escape(t.name), f"{op} {t.limit:g}", value, verdict]
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        failed = sum(not t.passed for t in self.thresholds)
        title = f"{failed} of {len(self.thresholds)} FAILED" if failed else "all passed"
        stopped = f"<p>Stopped early: {escape(self.stopped_by)}</p>" if self.stopped_by else ""
        return (
            f"<p>Thresholds: {title}</p><table><thead><tr><th>threshold</th><th>limit</th>"
            f"<th>value</th><th>verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"{stopped}"
        )

    def __repr__(self) -> str:
        t = self.totals
        state = ", interrupted" if self.interrupted else ""
        if self.thresholds:
            state += ", thresholds passed" if self.passed else ", thresholds FAILED"
        return (
            f"<Report {t.ops} ops in {self.duration_s:.2f}s: {t.ops_per_sec:,.0f} ops/s, "
            f"p50 {t.latency_ms.p50:.3f} ms, p99 {t.latency_ms.p99:.3f} ms, "
            f"errors {t.errors}{state}>"
        )


def merge_reports(reports: Iterable[Report | str | os.PathLike[str]]) -> Report:
    """One report of the reports of hosts that ran one workload together: the shards of
    ``run(..., shard=(i, n))``, each once, or several runs of one workload. ``reports`` are
    :class:`Report` objects or report files. The percentiles are those of one histogram
    holding every host's latencies; counts, rates and errors are summed; timeline rows line
    up by wall-clock second; ``hosts`` lists each host. Raises :class:`~respload.SpecError`
    naming what makes them not one workload's (``reports[i]...``)."""
    # A file goes to the core as a path (a str would be taken for JSON text): it is read
    # there once, on the core's threads, not loaded into Python and parsed twice.
    given: list[str | os.PathLike[str]] = [
        r.to_json() if isinstance(r, Report) else Path(os.fspath(r)) for r in reports
    ]
    return Report.from_json(_native.merge_reports(given))
