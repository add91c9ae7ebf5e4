"""The report of a run, with typed attribute access mirroring its JSON schema.

``report.to_dict()`` and ``report.to_json()`` give exactly the core's JSON (the CLI's
``--json`` file). Latencies are milliseconds where the key says ``_ms``; encoded histograms
(``histogram`` fields) are HdrHistogram V2 compressed, base64, values in nanoseconds.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from . import _native
from ._json import dumps as _dumps
from .exceptions import UntrustedReportWarning

if TYPE_CHECKING:  # optional dependencies, imported when used
    import pandas
    from hdrh.histogram import HdrHistogram
    from matplotlib.figure import Figure
    from typing_extensions import Unpack

    from ._limits import Limits

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
_T = TypeVar("_T")


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


_TICKS = [0.0, 0.9, 0.99, 0.999, 0.9999, 0.99999]


def _percentile_curve(
    report_json: str, command: str | None = None
) -> tuple[list[float], list[float]]:
    """The whole latency distribution of a report's measured requests (or of one ``command``
    label's) on HdrHistogram's percentile axis: x is 1/(1-p), y the value at p in ms. The
    points are the core's percentile distribution (the ``.hgrm`` rows of
    :meth:`Report.percentile_distribution`), so plotting needs no ``hdrhistogram`` package.
    Empty when no request finished."""
    return _hgrm_points(_native.percentile_distribution(report_json, command))


def _histogram_curve(histogram: str) -> tuple[list[float], list[float]]:
    """:func:`_percentile_curve` of one encoded histogram (a phase's, a command's)."""
    return _hgrm_points(_native.histogram_distribution(histogram))


def _hgrm_points(hgrm: str) -> tuple[list[float], list[float]]:
    """The (1/(1-p), ms) points of the core's ``.hgrm`` text; the last row (p = 1, where
    1/(1-p) is infinite) is left out, as HdrHistogram's plotter does."""
    xs: list[float] = []
    ys: list[float] = []
    for line in hgrm.splitlines():
        fields = line.split()
        if len(fields) != 4 or fields[0].startswith("#"):
            continue  # the header, the blank line, the last row, the summary lines
        try:
            value, _p, _count, inverse = (float(f) for f in fields)
        except ValueError:
            continue  # the column names
        xs.append(inverse)
        ys.append(value)
    return xs, ys


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


# generated: Latency (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Latency:
    """Latency summary in milliseconds, from exact sums (mean, stddev, min, max) and the histogram
    (percentiles: the highest value equivalent to the recorded ones, within 0.1%)."""

    mean: float
    """Mean."""
    stddev: float
    """Standard deviation."""
    min: float
    """Smallest."""
    p50: float
    """Median."""
    p90: float
    """90th percentile."""
    p95: float
    """95th percentile."""
    p99: float
    """99th percentile."""
    p99_9: float
    """99.9th percentile."""
    p99_99: float
    """99.99th percentile."""
    max: float
    """Largest."""

    @classmethod
    def from_dict(cls, d: _Json) -> Latency:
        """A Latency from its JSON object."""
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

    # end generated: Latency


# generated: Stats (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Stats:
    """Counts and latency of one command, or of all (``totals``)."""

    ops: int
    """Requests finished (replies received plus requests failed without a reply)."""
    ops_per_sec: float
    """``ops`` per second of measured time."""
    hits: int
    """Replies carrying a value, for reading commands."""
    misses: int
    """Nil or empty replies, for reading commands."""
    errors: int
    """Failed requests: error replies, lost connections, timeouts."""
    error_rate: float
    """``errors / ops`` (0 when no ops)."""
    errors_by_kind: dict[str, int]
    """Errors by kind: the first word of an error reply (``WRONGTYPE``, ``ERR``, ...), or
    ``CONNECTION`` (connection lost with the request in flight), ``TIMEOUT`` (no reply within
    ``load.timeout``), ``ABORTED`` (cut off by a stop), ``PROTOCOL`` (an invalid reply stream),
    ``INTERNAL`` (a bug in respload ended a connection's task); kinds past the first 32 are counted
    together as ``OTHER``."""
    bytes_sent: int
    """Request bytes written."""
    bytes_received: int
    """Reply bytes read."""
    latency_ms: Latency
    """Latency of replies received (error replies included), to the read that completed the reply
    from the write that carried the request (closed loop) or from the request's intended send time
    (open loop: corrected for coordinated omission)."""
    histogram: str = field(repr=False)
    """The latency histogram in HdrHistogram's V2 compressed encoding, base64; values are
    nanoseconds."""
    first_errors: dict[str, str] = field(default_factory=dict)
    """The first error reply of each kind that is a reply (``WRONGTYPE Operation against a key
    holding the wrong kind of value``), without its ``-``, up to 512 bytes: what redis-benchmark
    ``-e`` shows. Left out when there was none."""
    service_ms: Latency | None = None
    """Open loop only: service time, from the actual write to the reply."""
    service_histogram: str | None = field(default=None, repr=False)
    """Open loop only: the service-time histogram, encoded like ``histogram``."""
    send_lag_ms: Latency | None = None
    """Open loop only: send lag, from the request's intended send time to the write that carried it:
    the client's own lateness, which ``latency_ms`` includes and ``service_ms`` does not (in cluster
    mode, of the request's last try)."""
    send_lag_histogram: str | None = field(default=None, repr=False)
    """Open loop only: the send-lag histogram, encoded like ``histogram``."""
    redirects: int = 0
    """Cluster mode: redirections followed (MOVED, ASK) and retries after TRYAGAIN or CLUSTERDOWN.
    They are not errors: a request that succeeds after them is a success. Per node, they count on
    the node that answered MOVED, ASK, TRYAGAIN or CLUSTERDOWN."""
    retries: int = 0
    """With ``load.retry``: resends of requests that failed (an error reply of a kind it retries, or
    a lost connection). A resent request counts once in ``ops``, its latency from its first send to
    its last reply; ``errors`` counts those that failed for good."""

    @classmethod
    def from_dict(cls, d: _Json) -> Stats:
        """A Stats from its JSON object."""
        return cls(
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            hits=d["hits"],
            misses=d["misses"],
            errors=d["errors"],
            error_rate=d["error_rate"],
            errors_by_kind=dict(d["errors_by_kind"]),
            first_errors=dict(d.get("first_errors", {})),
            bytes_sent=d["bytes_sent"],
            bytes_received=d["bytes_received"],
            latency_ms=Latency.from_dict(d["latency_ms"]),
            histogram=d["histogram"],
            service_ms=_maybe(Latency.from_dict, d.get("service_ms")),
            service_histogram=d.get("service_histogram"),
            send_lag_ms=_maybe(Latency.from_dict, d.get("send_lag_ms")),
            send_lag_histogram=d.get("send_lag_histogram"),
            redirects=d.get("redirects", 0),
            retries=d.get("retries", 0),
        )

    # end generated: Stats

    def decode_histogram(self) -> HdrHistogram:
        """The latency histogram, decoded with the ``hdrhistogram`` package (values in ns)."""
        return decode_histogram(self.histogram)

    def decode_send_lag_histogram(self) -> HdrHistogram:
        """Open loop only: the send-lag histogram, decoded (values in ns); ``ValueError``
        in closed loop, which has none."""
        if self.send_lag_histogram is None:
            raise ValueError("no send-lag histogram: send lag is measured in open loop only")
        return decode_histogram(self.send_lag_histogram)


# generated: IntervalLatency (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class IntervalLatency:
    """Latency of one interval, in milliseconds."""

    mean: float
    """Mean."""
    p50: float
    """Median."""
    p99: float
    """99th percentile."""
    max: float
    """Largest."""

    @classmethod
    def from_dict(cls, d: _Json) -> IntervalLatency:
        """A IntervalLatency from its JSON object."""
        return cls(
            mean=d["mean"],
            p50=d["p50"],
            p99=d["p99"],
            max=d["max"],
        )

    # end generated: IntervalLatency


# generated: TimelineRow (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class TimelineRow:
    """One row of the per-interval timeline."""

    t: float
    """Seconds since the measurement began, at the end of this interval."""
    interval_s: float
    """Length of this interval in seconds (1, shorter for the last)."""
    ops: int
    """Requests finished in this interval."""
    ops_per_sec: float
    """``ops / interval_s``."""
    errors: int
    """Failed requests in this interval."""
    latency_ms: IntervalLatency
    """Latency in this interval (ms)."""
    connections: int
    """Most connections open at once during this interval."""
    histogram: str = field(repr=False)
    """This interval's latency histogram (all commands), encoded like ``Stats.histogram``; empty
    unless the phase's ``output.interval_histograms`` is true (interval snapshots always carry
    it)."""
    unix_s: float = 0.0
    """The end of the interval in UNIX seconds (wall clock): rows of several hosts line up by it."""
    service_ms: IntervalLatency | None = None
    """Open loop only: service time in this interval (ms)."""
    send_lag_ms: IntervalLatency | None = None
    """Open loop only: send lag of the requests answered in this interval (ms)."""
    reconnects: int | None = None
    """Reconnections after lost connections in this interval (those of the warm-up count in the
    first row); the rows add up to ``client.reconnects``. Left out in reports written before it was
    kept."""
    target_rate: float | None = None
    """Open loop: the total rate asked for in this interval (requests per second), which follows
    ``load.rate_ramp`` step by step; compare with ``ops_per_sec``."""
    waiting: int | None = None
    """Open loop: the most requests waiting to be sent at once in this interval: due by their
    intended send time but not yet written (a full pipeline, a connection down or reconnecting, a
    busy client), as seen by each worker's 20 ms check and summed over the workers. Counted from
    each connection's schedule: exact for even arrivals, the expected number for Poisson ones."""
    behind_ms: float | None = None
    """Open loop: the longest a request due had waited to be written in this interval (ms), seen at
    the same checks: how far the client ran behind its schedule (requests never written included,
    which ``send_lag_ms`` cannot count)."""
    server_cpu_percent: float | None = None
    """The server's CPU in this interval, in percent of one core: the ``cpu_percent`` of the
    ``server_timeline`` sample taken at this row's end; in cluster mode the busiest node's (of the
    nodes sampled then). Left out when no sample was taken then (``observe.info = false``, an INFO
    that failed). Joined when the phase ends: interval snapshots do not carry it."""
    partial: bool = False
    """A last interval shorter than half the others (the replies that came in after the measured
    time ended, often over a few milliseconds): its ``ops_per_sec`` is not the rate the run held.
    Plots and frames leave it out; its requests count everywhere."""

    @classmethod
    def from_dict(cls, d: _Json) -> TimelineRow:
        """A TimelineRow from its JSON object."""
        return cls(
            t=d["t"],
            unix_s=d.get("unix_s", 0.0),
            interval_s=d["interval_s"],
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            errors=d["errors"],
            latency_ms=IntervalLatency.from_dict(d["latency_ms"]),
            service_ms=_maybe(IntervalLatency.from_dict, d.get("service_ms")),
            send_lag_ms=_maybe(IntervalLatency.from_dict, d.get("send_lag_ms")),
            connections=d["connections"],
            reconnects=d.get("reconnects"),
            target_rate=d.get("target_rate"),
            waiting=d.get("waiting"),
            behind_ms=d.get("behind_ms"),
            server_cpu_percent=d.get("server_cpu_percent"),
            partial=d.get("partial", False),
            histogram=d["histogram"],
        )

    # end generated: TimelineRow


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


# generated: Snapshot (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Snapshot:
    """One interval's figures, streamed while a run goes on (the runner's progress)."""

    phase: str
    """Name of the phase running."""
    measured: bool
    """Whether that phase is measured."""
    t: float
    """Seconds since the measurement began, at the end of this interval."""
    interval_s: float
    """Length of this interval in seconds (1, shorter for the last)."""
    ops: int
    """Requests finished in this interval."""
    ops_per_sec: float
    """``ops / interval_s``."""
    errors: int
    """Failed requests in this interval."""
    latency_ms: IntervalLatency
    """Latency in this interval (ms)."""
    connections: int
    """Most connections open at once during this interval."""
    histogram: str = field(repr=False)
    """This interval's latency histogram (all commands), encoded like ``Stats.histogram``; empty
    unless the phase's ``output.interval_histograms`` is true (interval snapshots always carry
    it)."""
    unix_s: float = 0.0
    """The end of the interval in UNIX seconds (wall clock): rows of several hosts line up by it."""
    service_ms: IntervalLatency | None = None
    """Open loop only: service time in this interval (ms)."""
    send_lag_ms: IntervalLatency | None = None
    """Open loop only: send lag of the requests answered in this interval (ms)."""
    reconnects: int | None = None
    """Reconnections after lost connections in this interval (those of the warm-up count in the
    first row); the rows add up to ``client.reconnects``. Left out in reports written before it was
    kept."""
    target_rate: float | None = None
    """Open loop: the total rate asked for in this interval (requests per second), which follows
    ``load.rate_ramp`` step by step; compare with ``ops_per_sec``."""
    waiting: int | None = None
    """Open loop: the most requests waiting to be sent at once in this interval: due by their
    intended send time but not yet written (a full pipeline, a connection down or reconnecting, a
    busy client), as seen by each worker's 20 ms check and summed over the workers. Counted from
    each connection's schedule: exact for even arrivals, the expected number for Poisson ones."""
    behind_ms: float | None = None
    """Open loop: the longest a request due had waited to be written in this interval (ms), seen at
    the same checks: how far the client ran behind its schedule (requests never written included,
    which ``send_lag_ms`` cannot count)."""
    server_cpu_percent: float | None = None
    """The server's CPU in this interval, in percent of one core: the ``cpu_percent`` of the
    ``server_timeline`` sample taken at this row's end; in cluster mode the busiest node's (of the
    nodes sampled then). Left out when no sample was taken then (``observe.info = false``, an INFO
    that failed). Joined when the phase ends: interval snapshots do not carry it."""
    partial: bool = False
    """A last interval shorter than half the others (the replies that came in after the measured
    time ended, often over a few milliseconds): its ``ops_per_sec`` is not the rate the run held.
    Plots and frames leave it out; its requests count everywhere."""

    @classmethod
    def from_dict(cls, d: _Json) -> Snapshot:
        """A Snapshot from its JSON object."""
        return cls(
            phase=d["phase"],
            measured=d["measured"],
            t=d["t"],
            unix_s=d.get("unix_s", 0.0),
            interval_s=d["interval_s"],
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            errors=d["errors"],
            latency_ms=IntervalLatency.from_dict(d["latency_ms"]),
            service_ms=_maybe(IntervalLatency.from_dict, d.get("service_ms")),
            send_lag_ms=_maybe(IntervalLatency.from_dict, d.get("send_lag_ms")),
            connections=d["connections"],
            reconnects=d.get("reconnects"),
            target_rate=d.get("target_rate"),
            waiting=d.get("waiting"),
            behind_ms=d.get("behind_ms"),
            server_cpu_percent=d.get("server_cpu_percent"),
            partial=d.get("partial", False),
            histogram=d["histogram"],
        )

    # end generated: Snapshot

    @classmethod
    def from_json(cls, text: str) -> Snapshot:
        return cls.from_dict(json.loads(text))


# generated: ClientStats (from core/src/report/stats.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ClientStats:
    """What the load generator itself cost, so a client bottleneck shows."""

    threads: int
    """Worker threads."""
    connections: int
    """Connections."""
    cpu_user_s: float
    """User CPU seconds of the worker threads."""
    cpu_sys_s: float
    """System CPU seconds of the worker threads."""
    cpu_s_per_million: float
    """(user + system) CPU seconds per million finished requests."""
    loop_lag_ms_max: float
    """Worst lateness of a worker's 20 ms housekeeping tick (ms): a busy client shows here."""
    reconnects: int
    """Reconnections after lost connections."""
    waiting_max: int | None = None
    """Open loop: the most requests waiting to be sent at once (as ``timeline[].waiting``), in the
    phase, or in the report over every phase (measured or not, as the CPU figures)."""
    behind_ms_max: float | None = None
    """Open loop: the longest a due request waited to be written (ms; as ``timeline[].behind_ms``),
    in the phase, or over every phase."""
    busy_max: float = 0.0
    """The busiest worker thread's CPU time over the time it ran (0 to 1), in the phase, or the
    highest of every phase: near 1, the client itself limits the load and delays requests (add
    ``load.threads``). With ``load.pacing = "spin"`` it includes the spinning."""
    io: str = "epoll"
    """The transport the load connections ran on (``load.io``): ``epoll`` or ``uring``; ``mixed`` in
    a report whose phases (or merged hosts) ran on both. A report written before it was kept reads
    as ``epoll``, the default (an io_uring run's report of then too)."""

    @classmethod
    def from_dict(cls, d: _Json) -> ClientStats:
        """A ClientStats from its JSON object."""
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
            io=d.get("io", "epoll"),
        )

    # end generated: ClientStats


# generated: ServerFacts (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ServerFacts:
    """Facts about the server, read once before the run (fields it refuses stay empty)."""

    address: str
    """The address."""
    version: str
    """``redis_version`` from ``INFO server`` (empty when the server does not give it)."""
    mode: str
    """``redis_mode``: standalone, cluster, sentinel."""
    os: str
    """``os``."""
    config: dict[str, str]
    """Relevant configuration: save, appendonly, appendfsync, maxmemory, maxmemory-policy,
    io-threads."""

    @classmethod
    def from_dict(cls, d: _Json) -> ServerFacts:
        """A ServerFacts from its JSON object."""
        return cls(
            address=d["address"],
            version=d["version"],
            mode=d["mode"],
            os=d["os"],
            config=dict(d["config"]),
        )

    # end generated: ServerFacts


# generated: ServerSample (from core/src/report/server.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ServerSample:
    """One interval of the server's own figures, from ``INFO``."""

    t: float
    """Seconds since the measurement began, at the end of this interval (as the timeline's
    ``t``)."""
    cpu_percent: float
    """Server CPU over the interval, user + system, in percent of one core (Redis executes commands
    on one thread: 100 is that thread saturated)."""
    used_memory: int
    """``used_memory``, bytes."""
    ops_per_sec: float
    """Commands processed per second over the interval (the observer's own INFO included)."""
    connected_clients: int
    """``connected_clients``."""
    keyspace_hits: int
    """Keyspace hits in the interval."""
    keyspace_misses: int
    """Keyspace misses in the interval."""
    evicted_keys: int
    """Keys evicted in the interval."""
    latest_fork_usec: int
    """``latest_fork_usec``: duration of the latest fork (BGSAVE, AOF rewrite, full sync)."""
    rdb_bgsave_in_progress: bool
    """An RDB save is running."""
    aof_rewrite_in_progress: bool
    """An AOF rewrite is running."""
    role: str
    """``role``: master or slave."""
    master_link_status: str
    """``master_link_status`` on a replica (``up``/``down``), empty on a primary."""
    connected_slaves: int
    """``connected_slaves``."""
    info_ms: float
    """How long this INFO took to come back (ms): the observer's own cost."""

    @classmethod
    def from_dict(cls, d: _Json) -> ServerSample:
        """A ServerSample from its JSON object."""
        return cls(
            t=d["t"],
            cpu_percent=d["cpu_percent"],
            used_memory=d["used_memory"],
            ops_per_sec=d["ops_per_sec"],
            connected_clients=d["connected_clients"],
            keyspace_hits=d["keyspace_hits"],
            keyspace_misses=d["keyspace_misses"],
            evicted_keys=d["evicted_keys"],
            latest_fork_usec=d["latest_fork_usec"],
            rdb_bgsave_in_progress=d["rdb_bgsave_in_progress"],
            aof_rewrite_in_progress=d["aof_rewrite_in_progress"],
            role=d["role"],
            master_link_status=d["master_link_status"],
            connected_slaves=d["connected_slaves"],
            info_ms=d["info_ms"],
        )

    # end generated: ServerSample


# generated: ServerLoad (from core/src/report/server.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ServerLoad:
    """A summary of the server samples of a phase or a run."""

    peak_cpu_percent: float
    """Highest ``cpu_percent`` of an interval."""
    mean_cpu_percent: float
    """Mean ``cpu_percent`` over the intervals."""
    cpu_limit_percent: float
    """The CPU line capacity guides advise to stay under: 80 (% of a core)."""
    cpu_over_limit: bool
    """Whether any interval went over ``cpu_limit_percent``."""
    peak_used_memory: int
    """Highest ``used_memory``, bytes."""
    samples: int
    """Samples taken."""
    observer_info_ms: float
    """Mean INFO round trip (ms), one per interval on one extra connection."""
    peak_node: str | None = None
    """Cluster mode, in the summary over all nodes: the node (``host:port``) with the highest
    ``cpu_percent`` of an interval."""

    @classmethod
    def from_dict(cls, d: _Json) -> ServerLoad:
        """A ServerLoad from its JSON object."""
        return cls(
            peak_cpu_percent=d["peak_cpu_percent"],
            mean_cpu_percent=d["mean_cpu_percent"],
            cpu_limit_percent=d["cpu_limit_percent"],
            cpu_over_limit=d["cpu_over_limit"],
            peak_used_memory=d["peak_used_memory"],
            samples=d["samples"],
            observer_info_ms=d["observer_info_ms"],
            peak_node=d.get("peak_node"),
        )

    # end generated: ServerLoad


# generated: NodeServer (from core/src/report/server.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class NodeServer:
    """Cluster mode: one node's server figures."""

    server_timeline: list[ServerSample]
    """The node's samples, aligned with the timeline like the standalone ``server_timeline``."""
    server_load: ServerLoad | None = None
    """Their summary."""

    @classmethod
    def from_dict(cls, d: _Json) -> NodeServer:
        """A NodeServer from its JSON object."""
        return cls(
            server_timeline=_each(ServerSample.from_dict, d["server_timeline"]),
            server_load=_maybe(ServerLoad.from_dict, d.get("server_load")),
        )

    # end generated: NodeServer


# generated: Availability (from core/src/report/availability.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Availability:
    """Availability of a phase (or of the measured phases together)."""

    longest_gap_ms: float
    """The longest stretch of measured time without any successful reply (ms), over all connections:
    from one successful reply to the next, or from the start of measurement to the first, or from
    the last to the end of measurement."""
    longest_gap_at_s: float
    """When that stretch began, in seconds since the start of measurement (as timeline ``t``)."""

    @classmethod
    def from_dict(cls, d: _Json) -> Availability:
        """A Availability from its JSON object."""
        return cls(
            longest_gap_ms=d["longest_gap_ms"],
            longest_gap_at_s=d["longest_gap_at_s"],
        )

    # end generated: Availability


# generated: Unsent (from core/src/report/validity.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Unsent:
    """Measured requests due but never sent when a phase stopped."""

    requests: int
    """How many."""
    waited_ms: Latency
    """How long each had been due when the phase stopped: a lower bound of the latency each would
    have had (ms)."""

    @classmethod
    def from_dict(cls, d: _Json) -> Unsent:
        """A Unsent from its JSON object."""
        return cls(
            requests=d["requests"],
            waited_ms=Latency.from_dict(d["waited_ms"]),
        )

    # end generated: Unsent


# generated: ValidityCheck (from core/src/report/validity.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ValidityCheck:
    """One check of a run's own accuracy."""

    check: str
    """``client_lag`` (open loop: the p99 of the client's own lateness, ``client_lag_ms``, against
    the larger of 10% of latency p50 and 0.05 ms), ``arrivals`` (Poisson arrivals: the
    Anderson-Darling statistic of a sample of the gaps between sends against the exponential, at the
    1% level), ``rate`` (open loop: the achieved rate's relative error, within 1%, or three standard
    deviations of a Poisson count when fewer than 90,000 requests were due) or ``client_busy`` (the
    busiest worker thread's CPU share, at most 0.8)."""
    phase: str
    """The phase checked."""
    passed: bool
    """Whether the value is within the limit."""
    value: float
    """What was measured (ms for ``client_lag``, A*² for ``arrivals``, a relative error for
    ``rate``, a share of one core for ``client_busy``)."""
    limit: float
    """The largest value that passes."""
    detail: str
    """One sentence saying what the value means."""

    @classmethod
    def from_dict(cls, d: _Json) -> ValidityCheck:
        """A ValidityCheck from its JSON object."""
        return cls(
            check=d["check"],
            phase=d["phase"],
            passed=d["passed"],
            value=d["value"],
            limit=d["limit"],
            detail=d["detail"],
        )

    # end generated: ValidityCheck

    def __str__(self) -> str:
        """``check (phase): detail``, as the core lists a failed check."""
        return f"{self.check} ({self.phase}): {self.detail}"


# generated: Threshold (from core/src/report/thresholds.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Threshold:
    """One limit of a spec's ``[thresholds]``, and how the run did against it."""

    name: str
    """Its name: the limit, after the phase (``phases.NAME.``) and command (``commands.LABEL.``) it
    applies to, e.g. ``p99_ms``, ``commands.GET.p99_ms``, ``phases.load.error_rate``."""
    metric: str
    """The limit: ``ops_per_sec`` (at least), ``p50_ms``, ``p90_ms``, ``p99_ms``, ``p99_9_ms``,
    ``max_ms`` or ``error_rate`` (at most)."""
    limit: float
    """Its value (ms, a rate from 0 to 1, or requests per second)."""
    passed: bool
    """Whether the figure kept within the limit."""
    phase: str | None = None
    """The phase whose results it bounds; absent for the run's (the measured phases together:
    ``totals`` and ``commands``)."""
    command: str | None = None
    """The command label whose results it bounds; absent for all commands together."""
    value: float | None = None
    """The figure it was checked against; absent when there was none (no requests, a phase that did
    not run, a command not in the results)."""
    stopped_run: bool = False
    """Whether it stopped the run (``abort_on_fail``): its figure crossed the limit while the run
    went on, after the grace period."""

    @classmethod
    def from_dict(cls, d: _Json) -> Threshold:
        """A Threshold from its JSON object."""
        return cls(
            name=d["name"],
            phase=d.get("phase"),
            command=d.get("command"),
            metric=d["metric"],
            limit=d["limit"],
            value=d.get("value"),
            passed=d["passed"],
            stopped_run=d.get("stopped_run", False),
        )

    # end generated: Threshold


# generated: Validity (from core/src/report/validity.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class Validity:
    """Whether to trust a run (or a phase), check by check."""

    trusted: bool
    """Whether every check passed."""
    checks: list[ValidityCheck]
    """The checks made, in order; measured phases only."""

    @classmethod
    def from_dict(cls, d: _Json) -> Validity:
        """A Validity from its JSON object."""
        return cls(
            trusted=d["trusted"],
            checks=_each(ValidityCheck.from_dict, d["checks"]),
        )

    # end generated: Validity

    @property
    def failed(self) -> list[ValidityCheck]:
        """The checks that did not pass."""
        return [c for c in self.checks if not c.passed]


# generated: EventReport (from core/src/report/availability.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class EventReport:
    """What one fault drill did, and what it did to the load. Times are seconds since the start of
    measurement of the phase (as timeline ``t``); a figure that does not apply, or could not be
    measured, is ``null``."""

    drill: str
    """The drill (``bgsave``, ``bgrewriteaof``, ``pause``, ``failover``, ``replica-resync``)."""
    mode: str | None
    """``pause`` and ``failover``: how it was done (``client-pause``, ``debug-sleep``,
    ``cluster-failover``, ``kill``)."""
    node: str
    """The node the drill acted on (``host:port``): the server saved, paused, failed over, or the
    primary of the resynced replica."""
    replica: str | None
    """``failover`` and ``replica-resync``: the replica involved (``host:port``)."""
    at_s: float
    """When it was planned (``at``)."""
    started_s: float | None
    """When its first command was sent; ``null`` when the phase ended first."""
    finished_s: float | None
    """When the drill's own check said the server was back: the save or rewrite ended, the pause
    ended, the replica was promoted (and, in a cluster, says ``cluster_state:ok``), the replica was
    back in sync. ``null`` if that did not happen before the phase ended."""
    recovery_s: float | None
    """``finished_s - started_s``."""
    fork_usec: int | None
    """``bgsave``, ``bgrewriteaof``: the fork's duration (``latest_fork_usec`` after the drill)."""
    sync_s: float | None
    """``replica-resync``: from the reattaching ``REPLICAOF`` until the replica reported
    ``master_link_status:up`` with no sync in progress."""
    full_sync: bool | None
    """``replica-resync``: whether the primary made a full sync for it (its ``sync_full`` grew);
    false means a partial resync from the backlog."""
    error: str | None
    """The server refused the drill, or its connection failed: the message. The load figures are
    still given."""
    ops_during: int | None
    """Requests finished during the drill: from ``started_s`` until 100 ms after ``finished_s`` (or
    after it failed, or until the end of the phase), to the housekeeping tick (20 ms)."""
    errors_during: int | None
    """Failed requests among them."""
    p99_during_ms: float | None
    """p99 latency (ms) of the replies received during the drill."""
    p99_before_ms: float | None
    """p99 latency (ms) over the full timeline intervals before ``started_s`` (at most 5)."""
    throughput_before: float | None
    """Successful requests per second over those intervals."""
    recovered_after_s: float | None
    """Time from ``started_s`` until the start of the first timeline interval whose successful
    requests per second are back at 80% or more of ``throughput_before``, after one that fell below
    it. 0 when no interval fell below it; ``null`` when none came back before the phase ended (or
    there is no "before")."""
    longest_gap_ms: float | None
    """The longest stretch without a successful reply that overlaps the drill (ms), when 10 ms or
    longer; 0 when there was none that long."""

    @classmethod
    def from_dict(cls, d: _Json) -> EventReport:
        """A EventReport from its JSON object."""
        return cls(
            drill=d["drill"],
            mode=d.get("mode"),
            node=d["node"],
            replica=d.get("replica"),
            at_s=d["at_s"],
            started_s=d.get("started_s"),
            finished_s=d.get("finished_s"),
            recovery_s=d.get("recovery_s"),
            fork_usec=d.get("fork_usec"),
            sync_s=d.get("sync_s"),
            full_sync=d.get("full_sync"),
            error=d.get("error"),
            ops_during=d.get("ops_during"),
            errors_during=d.get("errors_during"),
            p99_during_ms=d.get("p99_during_ms"),
            p99_before_ms=d.get("p99_before_ms"),
            throughput_before=d.get("throughput_before"),
            recovered_after_s=d.get("recovered_after_s"),
            longest_gap_ms=d.get("longest_gap_ms"),
        )

    # end generated: EventReport


# generated: RampStep (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class RampStep:
    """One step of a ramp: its part of the timeline, summarized."""

    start_s: float
    """Seconds since the phase's measurement began, at the step's start."""
    duration_s: float
    """Measured seconds in the step (shorter for a step the run cut short; the last step runs to the
    end of the phase)."""
    connections: int
    """Most connections open at once in the step."""
    ops: int
    """Requests finished in the step."""
    ops_per_sec: float
    """``ops / duration_s``: the rate achieved."""
    errors: int
    """Failed requests in the step."""
    error_rate: float
    """``errors / ops``."""
    latency_ms: Latency
    """Latency of the step's replies (ms)."""
    target_rate: float | None = None
    """Open loop: the total rate asked for in the step."""
    service_ms: Latency | None = None
    """Open loop only: service time of the step's replies (ms)."""

    @classmethod
    def from_dict(cls, d: _Json) -> RampStep:
        """A RampStep from its JSON object."""
        return cls(
            start_s=d["start_s"],
            duration_s=d["duration_s"],
            target_rate=d.get("target_rate"),
            connections=d["connections"],
            ops=d["ops"],
            ops_per_sec=d["ops_per_sec"],
            errors=d["errors"],
            error_rate=d["error_rate"],
            latency_ms=Latency.from_dict(d["latency_ms"]),
            service_ms=_maybe(Latency.from_dict, d.get("service_ms")),
        )

    # end generated: RampStep


# generated: SloPoint (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class SloPoint:
    """One rate tried by an SLO search."""

    run: int
    """Order in which the rates were tried (0 first)."""
    rate: float
    """The total rate asked for (requests per second)."""
    achieved_rate: float
    """The rate achieved: requests finished per measured second."""
    duration_s: float
    """Measured seconds."""
    ops: int
    """Requests finished."""
    errors: int
    """Failed requests."""
    error_rate: float
    """``errors / ops``."""
    percentile_ms: float
    """The searched percentile's latency (ms), from intended send times."""
    latency_ms: Latency
    """Latency summary (ms), from intended send times."""
    met: bool
    """Whether the step met the percentile budget, the error bound and the achieved-rate bound."""
    service_ms: Latency | None = None
    """Service time summary (ms), from the actual writes."""

    @classmethod
    def from_dict(cls, d: _Json) -> SloPoint:
        """A SloPoint from its JSON object."""
        return cls(
            run=d["run"],
            rate=d["rate"],
            achieved_rate=d["achieved_rate"],
            duration_s=d["duration_s"],
            ops=d["ops"],
            errors=d["errors"],
            error_rate=d["error_rate"],
            percentile_ms=d["percentile_ms"],
            latency_ms=Latency.from_dict(d["latency_ms"]),
            service_ms=_maybe(Latency.from_dict, d.get("service_ms")),
            met=d["met"],
        )

    # end generated: SloPoint


# generated: SloResult (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class SloResult:
    """The outcome of an SLO search."""

    percentile: float
    """The percentile held to the budget (99: p99)."""
    budget_ms: float
    """The latency budget for it (ms)."""
    max_error_rate: float
    """The highest error rate allowed."""
    min_achieved: float
    """The lowest achieved rate allowed, as a fraction of the rate asked for."""
    best_rate: float | None
    """The highest rate asked for that met every condition; ``null`` when none did."""
    curve: list[SloPoint]
    """Every rate tried, sorted by rate: plot ``achieved_rate`` against ``latency_ms.p99`` (or
    ``percentile_ms``) for the latency-versus-throughput curve."""

    @classmethod
    def from_dict(cls, d: _Json) -> SloResult:
        """A SloResult from its JSON object."""
        return cls(
            percentile=d["percentile"],
            budget_ms=d["budget_ms"],
            max_error_rate=d["max_error_rate"],
            min_achieved=d["min_achieved"],
            best_rate=d.get("best_rate"),
            curve=_each(SloPoint.from_dict, d["curve"]),
        )

    # end generated: SloResult


# generated: PrefillReport (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class PrefillReport:
    """The prefill of a replay: keys the trace reads before writing them, written first."""

    keys: int
    """Keys written (with SET)."""
    errors: int
    """SETs the server refused (error replies)."""
    duration_s: float
    """Seconds the prefill took."""
    not_prefilled: dict[str, int] = field(default_factory=dict)
    """Keys read first by commands of other types (not strings), not prefilled: by command."""

    @classmethod
    def from_dict(cls, d: _Json) -> PrefillReport:
        """A PrefillReport from its JSON object."""
        return cls(
            keys=d["keys"],
            errors=d["errors"],
            duration_s=d["duration_s"],
            not_prefilled=dict(d.get("not_prefilled", {})),
        )

    # end generated: PrefillReport


# generated: ReplayFidelity (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ReplayFidelity:
    """How faithfully a trace was replayed (a phase's ``replay``)."""

    file: str
    """The trace file."""
    format: str
    """Its format: ``respload``, ``monitor`` or ``twitter``."""
    traced: int
    """Commands the trace holds (malformed lines not counted)."""
    planned: int
    """Requests the replay was to send: the trace's commands not skipped (and a ``SELECT`` before a
    command on another database than its connection's), every pass."""
    replayed: int
    """Requests sent and answered (or failed) in the measured replay."""
    skipped: dict[str, int]
    """Commands of the trace not replayed, by reason (``dropped: FLUSHALL``: dropped by default or
    by ``replay.drop``/``keep``), per pass."""
    malformed: int
    """Malformed lines of the trace (not replayed)."""
    speed: float
    """The speed (recorded offsets divided by it)."""
    trace_rate: float
    """The trace's own mean rate (requests per second over its span)."""
    rate: float
    """The mean rate replayed at (the trace's times the speed)."""
    loops: int
    """Passes over the trace."""
    connections: int
    """Connections: one per recorded client, or ``replay.connections``."""
    per_client: bool
    """Whether each recorded client had a connection of its own."""
    schedule_ms: Latency | None
    """How the recorded schedule was kept: the send lag (ms) from each request's recorded instant
    (scaled by the speed) to its write."""
    malformed_lines: list[str] = field(default_factory=list)
    """The first malformed lines: ``line N: reason``."""
    hosts: int | None = None
    """With the trace's clients split over hosts (``replay.share``, ``--shard``): how many hosts
    shared it."""
    others: int = 0
    """Commands of the trace the other hosts replayed, per pass (0 when one host replayed it all, or
    in a report merged from every host)."""
    prefill: PrefillReport | None = None
    """The keys written before the replay (read by the trace before it wrote them)."""

    @classmethod
    def from_dict(cls, d: _Json) -> ReplayFidelity:
        """A ReplayFidelity from its JSON object."""
        return cls(
            file=d["file"],
            format=d["format"],
            traced=d["traced"],
            planned=d["planned"],
            replayed=d["replayed"],
            skipped=dict(d["skipped"]),
            malformed=d["malformed"],
            malformed_lines=list(d.get("malformed_lines", [])),
            speed=d["speed"],
            trace_rate=d["trace_rate"],
            rate=d["rate"],
            loops=d["loops"],
            connections=d["connections"],
            per_client=d["per_client"],
            hosts=d.get("hosts"),
            others=d.get("others", 0),
            schedule_ms=_maybe(Latency.from_dict, d.get("schedule_ms")),
            prefill=_maybe(PrefillReport.from_dict, d.get("prefill")),
        )

    # end generated: ReplayFidelity


def _maybe(make: Callable[[Any], _T], value: Any) -> _T | None:
    """``make(value)``, or ``None`` for a key the JSON left out or wrote as null."""
    return None if value is None else make(value)


def _each(make: Callable[[Any], _T], values: Iterable[Any]) -> list[_T]:
    return [make(v) for v in values]


def _by_key(make: Callable[[Any], _T], values: Mapping[str, Any]) -> dict[str, _T]:
    return {k: make(v) for k, v in values.items()}


def _validity(d: _Json) -> Validity:
    """A report's or a phase's ``validity``; trusted with no checks when absent (as the core
    reads a report written before schema 2)."""
    return Validity.from_dict(d["validity"]) if "validity" in d else Validity(True, [])


def _availability(d: _Json) -> Availability:
    """A report's or a phase's ``availability``; no gap when absent (as serde defaults it)."""
    return Availability.from_dict(d["availability"]) if "availability" in d else Availability(0, 0)


def _phase_names(report: Report) -> list[str | None]:
    """The phase of each row of a run's timeline: the measured phases' rows, one phase after
    the other (as the core builds it); None for every row of a timeline that does not add up
    so (none the core writes)."""
    names = [p.name for p in report.phases if p.measured for _ in p.timeline]
    return list(names) if len(names) == len(report.timeline) else [None] * len(report.timeline)


_TIMELINE_COLUMNS = [
    "phase",
    "t",
    "unix_s",
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
_OPEN_LOOP_COLUMNS = [
    "target_rate",
    "service_ms_p50",
    "service_ms_p99",
    "send_lag_ms_p50",
    "send_lag_ms_p99",
    "waiting",
    "behind_ms",
]


def _timeline_frame(rows: list[tuple[str | None, TimelineRow]]) -> pandas.DataFrame:
    """The timeline frame of ``(phase name, row)`` pairs (``Report.timeline_frame``'s
    columns), the ``partial`` rows left out."""
    pd = _pandas()
    records = [
        {
            "phase": phase,
            "t": r.t,
            # 0: a report written before `unix_s` was kept, which has no wall clock.
            "unix_s": r.unix_s or None,
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
        for phase, r in rows
        if not r.partial
    ]
    columns = list(_TIMELINE_COLUMNS)
    if any(r.reconnects is not None for _, r in rows):
        columns.append("reconnects")
    if any(r.server_cpu_percent is not None for _, r in rows):
        columns.append("server_cpu_percent")
    if any(r.target_rate is not None or r.service_ms is not None for _, r in rows):
        columns += _OPEN_LOOP_COLUMNS
    return pd.DataFrame(records, columns=columns)


def _latency_frame(commands: Mapping[str, Stats], totals: Stats) -> pandas.DataFrame:
    """One row per command label and a last ``"total"``, indexed by ``command``."""
    pd = _pandas()
    items = [*commands.items(), ("total", totals)]
    rows = [
        {
            "command": label,
            "ops": s.ops,
            "ops_per_sec": s.ops_per_sec,
            "hits": s.hits,
            "misses": s.misses,
            "errors": s.errors,
            "error_rate": s.error_rate,
            **{name: getattr(s.latency_ms, name) for name in _LATENCY_COLUMNS},
        }
        for label, s in items
    ]
    return pd.DataFrame(rows).set_index("command")


_LATENCY_COLUMNS = ("mean", "stddev", "min", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "max")


def _plot(
    figure: Figure | None,
    timeline: list[TimelineRow],
    curves: list[tuple[str, tuple[list[float], list[float]]]],
    phase_starts: list[float],
) -> Figure:
    """Throughput and p50/p99 over time (``partial`` rows left out), then the latency
    distributions ``curves`` (label, points) on the percentile axis; a dotted line at each
    of ``phase_starts`` (seconds on the timeline)."""
    _Figure, FixedLocator, NullLocator = _matplotlib()
    fig = figure if figure is not None else _Figure(figsize=(10, 9), layout="constrained")
    throughput, latency, dist = fig.subplots(3, 1)
    # A partial last row (the replies after the measured time, over a few milliseconds)
    # would draw, as a rate, a drop that never happened.
    rows = [r for r in timeline if not r.partial]
    t = [r.t for r in rows]
    throughput.plot(t, [r.ops_per_sec for r in rows], marker=".", label="ops/s")
    throughput.set(title="Throughput", xlabel="time (s)", ylabel="ops/s")
    throughput.set_ylim(bottom=0)
    latency.plot(t, [r.latency_ms.p50 for r in rows], marker=".", label="p50")
    latency.plot(t, [r.latency_ms.p99 for r in rows], marker=".", label="p99")
    latency.set(title="Latency per interval", xlabel="time (s)", ylabel="ms")
    latency.set_ylim(bottom=0)
    latency.legend()
    for start in phase_starts:
        for ax in (throughput, latency):
            ax.axvline(start, color="grey", linestyle=":", linewidth=1)
    for label, points in curves:
        dist.plot(*points, label=label)
    _percentile_axis(dist, FixedLocator, NullLocator)
    dist.set(title="Latency by percentile", xlabel="percentile", ylabel="ms")
    dist.set_ylim(bottom=0)
    dist.legend()
    return fig


# generated: PhaseReport (from core/src/report/phase.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class PhaseReport:
    """Results of one phase."""

    name: str
    """Phase name."""
    measured: bool
    """Whether it counts in the report's totals."""
    duration_s: float
    """Measured seconds (after warm-up, until the last reply)."""
    interrupted: bool
    """Whether the phase was stopped before its end."""
    totals: Stats
    """All commands together."""
    commands: dict[str, Stats]
    """Per command label (``GET``, ``SET``, ...)."""
    timeline: list[TimelineRow]
    """One row per interval."""
    client: ClientStats
    """The client's own cost."""
    validity: Validity
    """Whether to trust this phase's figures, check by check (its own checks only; a phase not
    measured has none)."""
    workload: dict[str, Any] = field(repr=False)
    """The normalized settings of this phase, secrets redacted."""
    started_at: float = 0.0
    """When its measurement began (the end of its warm-up), UNIX seconds: timeline ``t`` 0."""
    barrier_wait_s: float | None = None
    """With ``--barrier`` (phases in step across hosts): seconds this host waited for the others
    before the phase, from its arrival to the barrier's opening (the phase then starts half a second
    later, every host at once); not in ``duration_s``. A merged report keeps the longest wait of its
    hosts. Left out without a barrier, and for a first phase started at ``start_at``."""
    server_timeline: list[ServerSample] = field(default_factory=list, repr=False)
    """The server's own figures per interval (INFO sampled on a side connection), aligned with
    ``timeline``; empty when ``observe.info`` is off or INFO is refused."""
    server_load: ServerLoad | None = None
    """Summary of ``server_timeline`` (in cluster mode, of ``server_nodes``): peak and mean CPU, the
    80% line, peak memory."""
    server_nodes: dict[str, NodeServer] = field(default_factory=dict, repr=False)
    """Cluster mode: the server samples of each node (``host:port``) instead of ``server_timeline``;
    left out when not a cluster run."""
    target_rate: float | None = None
    """Open loop: the rate asked for (requests per second); compare with ``totals.ops_per_sec`` and
    the timeline's ``ops_per_sec`` for the rate achieved."""
    nodes: dict[str, Stats] = field(default_factory=dict, repr=False)
    """Cluster mode: per node (``host:port``), the requests it answered (the last node a redirected
    request went to) or failed on, and the redirects it answered; left out when not a cluster
    run."""
    availability: Availability = field(default_factory=lambda: Availability(0.0, 0.0))
    """The longest stretch without a successful reply."""
    events: list[EventReport] = field(default_factory=list)
    """The fault drills of the phase, in spec order; left out when it has none."""
    steps: list[RampStep] = field(default_factory=list, repr=False)
    """With ``load.rate_ramp`` or ``load.connections_ramp``: one summary per ramp step (the rate
    ramp's steps when both are given); left out otherwise."""
    slo: SloResult | None = None
    """With ``slo``: the search's result and its latency-versus-throughput curve."""
    output_error: str | None = None
    """A file of the phase's ``output`` that could not be written when the phase ended: the path and
    the operating system's error (the report is kept); left out otherwise."""
    server: ServerFacts | None = None
    """Facts about this phase's server, read before the run like the report's ``server``, when the
    phase's target is not the first phase's; left out otherwise."""
    unsent: Unsent | None = None
    """Open loop: measured requests due but never sent when the phase stopped (the server or the
    client fell behind); left out when every request due was sent."""
    client_lag_ms: Latency | None = None
    """Open loop: the client's own part of the send lag (ms): from the moment a request could be
    written (its intended send time, or later, when its connection's pipeline had room again or the
    connection was back after a failure) to its write. A slow server fills pipelines and raises
    ``send_lag_ms``, not this. Cluster mode: its send lag."""
    replay: ReplayFidelity | None = None
    """A trace replay (``replay``): what was replayed, what was skipped and why, and how well the
    recorded schedule was kept; left out otherwise."""

    @classmethod
    def from_dict(cls, d: _Json) -> PhaseReport:
        """A PhaseReport from its JSON object."""
        return cls(
            name=d["name"],
            started_at=d.get("started_at", 0.0),
            measured=d["measured"],
            barrier_wait_s=d.get("barrier_wait_s"),
            duration_s=d["duration_s"],
            interrupted=d["interrupted"],
            totals=Stats.from_dict(d["totals"]),
            commands=_by_key(Stats.from_dict, d["commands"]),
            timeline=_each(TimelineRow.from_dict, d["timeline"]),
            client=ClientStats.from_dict(d["client"]),
            server_timeline=_each(ServerSample.from_dict, d.get("server_timeline", [])),
            server_load=_maybe(ServerLoad.from_dict, d.get("server_load")),
            server_nodes=_by_key(NodeServer.from_dict, d.get("server_nodes", {})),
            target_rate=d.get("target_rate"),
            nodes=_by_key(Stats.from_dict, d.get("nodes", {})),
            availability=_availability(d),
            events=_each(EventReport.from_dict, d.get("events", [])),
            steps=_each(RampStep.from_dict, d.get("steps", [])),
            slo=_maybe(SloResult.from_dict, d.get("slo")),
            output_error=d.get("output_error"),
            server=_maybe(ServerFacts.from_dict, d.get("server")),
            unsent=_maybe(Unsent.from_dict, d.get("unsent")),
            client_lag_ms=_maybe(Latency.from_dict, d.get("client_lag_ms")),
            validity=_validity(d),
            replay=_maybe(ReplayFidelity.from_dict, d.get("replay")),
            workload=d["workload"],
        )

    # end generated: PhaseReport

    def timeline_frame(self) -> pandas.DataFrame:
        """This phase's timeline as a pandas DataFrame, one row per interval: the columns of
        :meth:`Report.timeline_frame`, ``phase`` this phase's name and ``t`` the seconds
        since this phase's measurement began."""
        return _timeline_frame([(self.name, r) for r in self.timeline])

    def latency_frame(self) -> pandas.DataFrame:
        """This phase's results per command as a pandas DataFrame (the columns of
        :meth:`Report.latency_frame`): one row per command label and a last ``"total"``."""
        return _latency_frame(self.commands, self.totals)

    def plot(self, figure: Figure | None = None) -> Figure:
        """Draw this phase as :meth:`Report.plot` draws a run: throughput and latency over
        the phase's time, and its latency distribution per command (from the core's
        percentile distribution of its histograms). Returns the figure."""
        curves = [(c, _histogram_curve(s.histogram)) for c, s in self.commands.items()]
        curves.append(("all", _histogram_curve(self.totals.histogram)))
        return _plot(figure, self.timeline, curves, [])


# generated: ShardOf (from core/src/report/merge.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ShardOf:
    """Which share of which workload a shard is (``Workload.shard``): what its report carries so
    that ``merge_reports()`` can check that it merges the shares of one workload, and all of
    them."""

    index: int
    """This shard, from 0."""
    count: int
    """How many shards the workload was split into."""
    workload: dict[str, Any] = field(repr=False)
    """The whole workload, normalized, secrets redacted."""

    @classmethod
    def from_dict(cls, d: _Json) -> ShardOf:
        """A ShardOf from its JSON object."""
        return cls(
            index=d["index"],
            count=d["count"],
            workload=d["workload"],
        )

    # end generated: ShardOf


# generated: HostRow (from core/src/report/merge.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class HostRow:
    """One second of one host's part (``hosts[].timeline``)."""

    t: float
    """Seconds since its measurement began, at the end of the row (its report's ``t``)."""
    ops_per_sec: float
    """Requests per second it finished in the row."""
    p99_ms: float
    """Its 99th percentile latency in the row (ms)."""
    errors: int
    """Its failed requests in the row."""

    @classmethod
    def from_dict(cls, d: _Json) -> HostRow:
        """A HostRow from its JSON object."""
        return cls(
            t=d["t"],
            ops_per_sec=d["ops_per_sec"],
            p99_ms=d["p99_ms"],
            errors=d["errors"],
        )

    # end generated: HostRow


# generated: HostReport (from core/src/report/merge.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class HostReport:
    """One host's part of a merged report."""

    name: str
    """The host's name (its report's ``host``), or ``host-N`` when it had none."""
    started_at: float
    """When its run started, UNIX seconds."""
    start_skew_ms: float
    """How late its first request went out: after ``start_at`` when one was set, else after the
    earliest host's (ms)."""
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
    seed: int | None = None
    """The seed its run used (its report's ``seed``): a shard's own, derived from the workload's
    ``seed`` or drawn by the host when the workload has none, so that each host's part can be run
    again. Absent for a host lost mid-run, and in reports merged before it was recorded."""
    error: str | None = None
    """Its run's error, if a phase failed."""
    timeline: list[HostRow] = field(default_factory=list)
    """Its measured seconds, one row per timeline row of its own report (``t`` from its own
    measurement start): what each host did over the run, to set side by side. Empty in reports
    merged before it was recorded."""

    @classmethod
    def from_dict(cls, d: _Json) -> HostReport:
        """A HostReport from its JSON object."""
        return cls(
            name=d["name"],
            shard=d.get("shard"),
            seed=d.get("seed"),
            started_at=d["started_at"],
            start_skew_ms=d["start_skew_ms"],
            ops=d["ops"],
            errors=d["errors"],
            interrupted=d["interrupted"],
            error=d.get("error"),
            client=ClientStats.from_dict(d["client"]),
            timeline=_each(HostRow.from_dict, d.get("timeline", [])),
        )

    # end generated: HostReport


_DISPLAY: dict[str, str] = {"mode": "table"}


def set_display(mode: Literal["table", "interactive"]) -> None:
    """How a :class:`Report` shows as a notebook cell's value: ``"table"`` (the default, a
    compact summary table) or ``"interactive"`` (the HTML report inline: verdict, timeline,
    percentiles, zoomable charts)."""
    if mode not in ("table", "interactive"):
        raise ValueError(f"set_display: expected 'table' or 'interactive', not {mode!r}")
    _DISPLAY["mode"] = mode


class HtmlPage:
    """A self-contained HTML page shown inline in a notebook (in a frame, so its scripts and
    styles stay its own); ``str(page)`` is the page."""

    def __init__(self, page: str, height: int = 900) -> None:
        self.page = page
        self.height = height

    def __str__(self) -> str:
        return self.page

    def _repr_html_(self) -> str:
        from html import escape

        return (
            f'<iframe srcdoc="{escape(self.page, quote=True)}" '
            f'style="width: 100%; height: {self.height}px; border: 0"></iframe>'
        )


# generated: Report (from core/src/report/mod.rs by scripts/gen_reference.py)
@dataclass(frozen=True, repr=False)
class Report:
    """The result of a run."""

    schema_version: int
    """``SCHEMA_VERSION``."""
    respload_version: str
    """The respload version that ran it."""
    started_at: float
    """Start of the run, seconds since the Unix epoch."""
    duration_s: float
    """Measured seconds, summed over measured phases."""
    interrupted: bool
    """Whether the run was stopped early (Ctrl-C, ``stop()``, an abort signal, or a phase that
    failed: see ``error``)."""
    seed: int
    """The seed of the request stream (given, or drawn and recorded here to reproduce it)."""
    totals: Stats
    """Measured phases together."""
    commands: dict[str, Stats]
    """Measured phases together, per command label."""
    timeline: list[TimelineRow]
    """Measured phases' timelines, one after the other (``t`` keeps counting)."""
    client: ClientStats
    """The client's own cost over all phases."""
    server: ServerFacts
    """Facts about the server."""
    workload: dict[str, Any]
    """The normalized workload, secrets redacted."""
    phases: list[PhaseReport]
    """Every phase, measured or not, in order."""
    validity: Validity
    """Whether to trust the report: every measured phase's checks (``phases[].validity``)."""
    _json: str = field(compare=False)
    error: str | None = None
    """Why the run stopped before its last phase: a phase after the first failed, in practice
    because it could not start (its server went away after the earlier phases ran; their report is
    kept), with the phase's name and the error. Left out otherwise."""
    passed: bool = True
    """Every threshold held (``thresholds``) and the run was complete: not interrupted, no phase
    failed, not stopped by a threshold (``Report::verdict``). True for a complete run without
    thresholds."""
    thresholds: list[Threshold] = field(default_factory=list)
    """The spec's ``[thresholds]`` (the run's, then each phase's), each with the figure it was
    checked against and its verdict; left out when the spec has none."""
    stopped_by: str | None = None
    """Why a threshold with ``abort_on_fail`` stopped the run early: its name, figure and limit, and
    when. The phases after it did not run. Left out otherwise."""
    nodes: dict[str, Stats] = field(default_factory=dict, repr=False)
    """Cluster mode: measured phases together, per node (``host:port``); left out when not a cluster
    run."""
    server_timeline: list[ServerSample] = field(default_factory=list, repr=False)
    """Measured phases' server samples, one after the other (``t`` keeps counting)."""
    server_load: ServerLoad | None = None
    """Summary of ``server_timeline`` (in cluster mode, of ``server_nodes``)."""
    availability: Availability = field(default_factory=lambda: Availability(0.0, 0.0))
    """Measured phases: the longest stretch without a successful reply in any of them
    (``longest_gap_at_s`` on the run's timeline, as ``timeline[].t``)."""
    server_nodes: dict[str, NodeServer] = field(default_factory=dict, repr=False)
    """Cluster mode: measured phases' server samples per node (``t`` keeps counting)."""
    slo: SloResult | None = None
    """The SLO search's result (of the last phase that searched); left out without one."""
    unsent: Unsent | None = None
    """Measured phases: requests due but never sent (as ``phases[].unsent``), together."""
    client_lag_ms: Latency | None = None
    """Measured phases: the client's own part of the send lag (as ``phases[].client_lag_ms``)."""
    host: str = ""
    """The machine that ran it (its host name); empty in a merged report."""
    shard: ShardOf | None = None
    """A shard's report (``--shard I/N``): which share of which workload it ran."""
    start_at: float | None = None
    """The instant the run was asked to start at (``--start-at``), UNIX seconds."""
    start_skew_ms: float | None = None
    """How late the first request went out after ``start_at`` (ms; negative if early)."""
    hosts: list[HostReport] = field(default_factory=list)
    """A merged report (``merge_reports()``): the hosts whose reports it merged, in order."""
    # end generated: Report

    @classmethod
    def from_json(cls, text: str) -> Report:
        """A report from the core's JSON (a ``respload --json`` file, or ``to_json()``)."""
        d = json.loads(text)
        phases = _each(PhaseReport.from_dict, d["phases"])
        return cls(
            schema_version=d["schema_version"],
            respload_version=d["respload_version"],
            started_at=d["started_at"],
            duration_s=d["duration_s"],
            interrupted=d["interrupted"],
            seed=d["seed"],
            totals=Stats.from_dict(d["totals"]),
            commands=_by_key(Stats.from_dict, d["commands"]),
            timeline=_run_rows(d["timeline"], d["phases"], phases),
            client=ClientStats.from_dict(d["client"]),
            server=ServerFacts.from_dict(d["server"]),
            workload=d["workload"],
            phases=phases,
            validity=_validity(d),
            _json=text,
            nodes=_by_key(Stats.from_dict, d.get("nodes", {})),
            server_timeline=_each(ServerSample.from_dict, d.get("server_timeline", [])),
            server_load=_maybe(ServerLoad.from_dict, d.get("server_load")),
            server_nodes=_by_key(NodeServer.from_dict, d.get("server_nodes", {})),
            availability=_availability(d),
            slo=_maybe(SloResult.from_dict, d.get("slo")),
            error=d.get("error"),
            unsent=_maybe(Unsent.from_dict, d.get("unsent")),
            client_lag_ms=_maybe(Latency.from_dict, d.get("client_lag_ms")),
            host=d.get("host", ""),
            shard=_maybe(ShardOf.from_dict, d.get("shard")),
            start_at=d.get("start_at"),
            start_skew_ms=d.get("start_skew_ms"),
            hosts=_each(HostReport.from_dict, d.get("hosts", [])),
            # A report written before `passed` had no thresholds: complete is passed.
            passed=d.get("passed", not d["interrupted"] and d.get("error") is None),
            thresholds=_each(Threshold.from_dict, d.get("thresholds", [])),
            stopped_by=d.get("stopped_by"),
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

    def interactive(self, height: int = 900) -> HtmlPage:
        """The page of :meth:`to_html` for a notebook: displayed (as a cell's last value, or
        with ``IPython.display.display``) it shows inline in a frame ``height`` pixels high,
        charts zoomable."""
        return HtmlPage(self.to_html(), height)

    def to_html(self) -> str:
        """The report as one self-contained HTML page (what ``respload run --html`` writes):
        the verdict, the timeline, the latency percentiles per phase and command, the
        commands, hosts and workload; scripts and data inlined, so it opens with no network."""
        return _native.reports_html([self._json], [])

    def write_html(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_html` to ``path``."""
        Path(path).write_text(self.to_html(), encoding="utf-8")

    def histogram(self, command: str | None = None) -> HdrHistogram:
        """The latency histogram of all measured requests, or of one ``command`` label,
        decoded with the ``hdrhistogram`` package. Values are nanoseconds."""
        stats = self.totals if command is None else self.commands[command]
        return stats.decode_histogram()

    def timeline_frame(self) -> pandas.DataFrame:
        """The timeline as a pandas DataFrame, one row per interval of the measured phases,
        one after the other (:meth:`PhaseReport.timeline_frame` for one phase's).

        Columns: ``phase`` (the name of the phase the interval belongs to), ``t`` (seconds
        since the measurement began, counting on across phases), ``unix_s`` (the interval's
        end in UNIX seconds, the wall clock: ``pd.to_datetime(df.unix_s, unit="s")`` for
        timestamps; None in reports written before it was kept), ``interval_s``, ``ops``,
        ``ops_per_sec``, ``errors``, ``latency_ms_mean``, ``latency_ms_p50``,
        ``latency_ms_p99``, ``latency_ms_max``, ``connections``, ``reconnects`` (in reports
        that keep it), ``server_cpu_percent`` (when the server was sampled: its CPU in the
        interval, in cluster mode the busiest node's); in open loop also ``target_rate``
        (the rate asked for, beside ``ops_per_sec``), ``service_ms_p50``,
        ``service_ms_p99`` (None in closed loop, and where an interval has no service
        time), ``send_lag_ms_p50``, ``send_lag_ms_p99`` (the send lag: how late the client
        wrote the interval's requests), ``waiting`` and ``behind_ms`` (the requests due but
        not yet sent, and the longest such wait, at the workers' 20 ms checks). A last row
        shorter than half the others (``partial``) is left out: its rate is not one the run
        held."""
        return _timeline_frame(list(zip(_phase_names(self), self.timeline)))

    def latency_frame(self) -> pandas.DataFrame:
        """Per-command results as a pandas DataFrame: one row per command label plus a last
        row ``"total"``, indexed by ``command``; latency columns are milliseconds."""
        return _latency_frame(self.commands, self.totals)

    def plot(self, figure: Figure | None = None) -> Figure:
        """Draw the run with matplotlib: throughput over time, p50/p99 latency over time,
        and the whole latency distribution per command, from the core's percentile
        distribution (:meth:`percentile_distribution`), on HdrHistogram's percentile axis
        (log scale of 1/(1-p), ticks at 90%, 99%, 99.9%, ...; matplotlib is the only package
        it needs). With several measured phases, a dotted line marks where each begins
        (:meth:`PhaseReport.plot` draws one phase). A ``partial`` last timeline row (the
        replies that came in after the measured time) is left out of the time plots. Returns
        the figure (drawn into ``figure`` when given)."""
        curves = [(c, _percentile_curve(self._json, c)) for c in self.commands]
        curves.append(("all", _percentile_curve(self._json)))
        starts: list[float] = []
        offset = 0.0
        for p in self.phases:
            if p.measured:
                starts.append(offset)
                offset += p.duration_s
        return _plot(figure, self.timeline, curves, starts[1:] if len(starts) > 1 else [])

    def check(
        self,
        *,
        commands: Mapping[str, Limits] | None = None,
        **limits: Unpack[Limits],
    ) -> Report:
        """Assert service levels, for test suites: raise ``AssertionError`` naming every
        limit that was missed, return the report if all hold. Limits on the totals: p50, p90,
        p99, p99.9 and max latency in ms at most ``p50_ms``, ``p90_ms``, ``p99_ms``,
        ``p99_9_ms``, ``max_ms``; error rate
        at most ``error_rate`` (0 to 1); throughput at least ``ops_per_sec``. The same
        limits per command label under ``commands`` (``{"GET": {"p99_ms": 2}}``). An
        interrupted run, or one with no requests, fails any check. The rules and the
        message are the core's (the same as Node's ``report.check()``); a bad limit raises
        ``SpecError`` naming it (``check.commands.GET.p99_ms``).

        A report whose ``validity.trusted`` is false also warns
        (:class:`UntrustedReportWarning`, a ``RuntimeWarning``) naming each failed validity
        check, its phase and its detail; the warning alone does not fail the check."""
        # The limit names are the core's (an unknown one is a SpecError naming it); the
        # type checker knows them from _limits.pyi, generated from the core's list.
        budget: dict[str, Any] = {k: v for k, v in limits.items() if v is not None}
        if commands is not None:
            budget["commands"] = commands
        message = _native.check_report(self._json, _dumps(budget, "check"))
        untrusted = _native.validity_warning(self._json)
        if untrusted is not None:
            # The core's text (Node's report.check() and the CLI's --check give the same).
            warnings.warn(UntrustedReportWarning(untrusted, self.validity.failed), stacklevel=2)
        if message is not None:
            raise AssertionError(message)
        return self

    def _repr_html_(self) -> str:
        """A compact summary for Jupyter; after ``respload.set_display("interactive")``, the
        interactive page of :meth:`to_html` inline (:meth:`interactive` for one report)."""
        from html import escape

        if _DISPLAY["mode"] == "interactive":
            return self.interactive()._repr_html_()

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
            op = ">=" if t.metric == "ops_per_sec" else "<="
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
