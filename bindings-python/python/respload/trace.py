"""Traces: your own traffic as a file of commands, captured, read, replayed and modelled.

::

    report = Trace.capture("redis://127.0.0.1:6379", out="app.jsonl", duration="60s")
    trace = Trace.open("app.jsonl")
    for rec in trace:                 # TraceRecord(t_us, db, client, args), read in batches
        ...
    trace.frame()                     # a pandas DataFrame, one row per command
    model = trace.model(rate_x=2.0)   # a workload spec fitted to the trace
    respload.run(model.workload())
    respload.replay("app.jsonl", "redis://staging:6379", speed=2.0)

A trace file is respload's JSON lines (``.jsonl``, or ``.jsonl.gz`` compressed), a
``redis-cli MONITOR`` log, or a Twitter cache-trace CSV, told apart by the first line. Each
record's arguments are ``str`` when their bytes are UTF-8, ``bytes`` when they are not, and
:class:`ValueSize` for a value of a known size whose content the trace does not hold (the
Twitter traces give sizes only; replay writes that many bytes of filler).

Reading, capturing and fitting run in the core with the GIL released. A trace is streamed in
batches: iterating, ``frame()``, ``plot()`` and ``malformed`` never hold the file's records
in memory (``frame()`` holds its rows).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, Union

from . import _native
from ._json import dumps as _dumps
from .report import Report, _matplotlib, _pandas
from .runner import ProgressCallback, run
from .workload import Workload

if TYPE_CHECKING:  # optional dependencies, imported when used
    import pandas
    from matplotlib.figure import Figure

__all__ = [
    "Capture",
    "CaptureReport",
    "Malformed",
    "MixShare",
    "Model",
    "ModelFit",
    "NodeCapture",
    "Trace",
    "TraceArg",
    "TraceRecord",
    "ValueSize",
    "replay",
]

_BATCH = 4096
_POLL_S = 0.1
# Commands that write a string value, and the index of the value among their arguments
# (``frame()``'s ``value_size``).
_VALUE_AT = {
    "SET": 2,
    "SETNX": 2,
    "GETSET": 2,
    "APPEND": 2,
    "SETEX": 3,
    "PSETEX": 3,
    "SETRANGE": 3,
}


@dataclass(frozen=True)
class ValueSize:
    """An argument whose content the trace does not hold, only its size: a value of ``size``
    bytes (the Twitter cache traces give sizes, not values). A replay writes that many bytes
    of filler in its place."""

    size: int
    """The value's length in bytes."""

    def __repr__(self) -> str:
        return f"ValueSize({self.size})"


TraceArg = Union[str, bytes, ValueSize]
"""One argument of a traced command: ``str`` when its bytes are UTF-8, ``bytes`` when they are
not, :class:`ValueSize` for a value known by its size only."""


class TraceRecord(NamedTuple):
    """One traced command."""

    t_us: int
    """When the server ran it: microseconds since the UNIX epoch (MONITOR's clock), or on the
    trace's own clock (a Twitter trace's seconds, times a million)."""
    db: int
    """The database it ran on."""
    client: str
    """Who sent it: ``ADDR:PORT``, ``unix:PATH``, ``lua``, or a trace's own client id."""
    args: list[TraceArg]
    """The command name and its arguments, as recorded (any case)."""

    @property
    def command(self) -> str:
        """The command name, upper-cased."""
        return _name(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Malformed:
    """The lines of a trace that could not be read as a command."""

    count: int
    """How many."""
    lines: list[str]
    """The first of them, as ``line N: reason``."""


def _arg(raw: Any) -> TraceArg:
    """An argument from its JSON form: a string, ``{"b64": ...}`` or ``{"size": n}``."""
    if isinstance(raw, str):
        return raw
    if "b64" in raw:
        return base64.b64decode(raw["b64"])
    return ValueSize(int(raw["size"]))


def _record(raw: dict[str, Any]) -> TraceRecord:
    return TraceRecord(
        raw["t_us"],
        raw["db"],
        raw["client"],
        [a if isinstance(a, str) else _arg(a) for a in raw["args"]],
    )


def _name(arg: TraceArg) -> str:
    if isinstance(arg, str):
        return arg.upper()
    if isinstance(arg, bytes):
        return arg.decode("utf-8", "replace").upper()
    return ""


def _byte_len(arg: TraceArg) -> int:
    if isinstance(arg, str):
        return len(arg.encode())
    if isinstance(arg, bytes):
        return len(arg)
    return arg.size


def _target(url: str | None, target: Mapping[str, Any] | None) -> dict[str, Any]:
    """A spec ``target`` from ``url`` and/or a ``target`` table (``url`` wins)."""
    if target is not None and not isinstance(target, Mapping):
        raise TypeError(f"target: expected a dict (a spec's target table), not {target!r}")
    table = dict(target) if target is not None else {}
    if url is not None:
        if not isinstance(url, str):
            raise TypeError(f"url: expected a str, not {type(url).__name__}")
        table["url"] = url
    return table


class Trace:
    """A trace file: iterate over its records, make a DataFrame, a plot or a model of it,
    replay it (:func:`replay`), or capture a new one (:meth:`Trace.capture`).

    ``Trace(path)`` or ``Trace.open(path, format=None)`` opens it and tells its format
    (``respload``, ``monitor`` or ``twitter``, from the first line; give ``format`` when it
    cannot tell), raising :class:`~respload.FileError` when it cannot be read. Each pass
    (iteration, ``frame()``, ``plot()``, ``model()``) reads the file anew, in batches.
    """

    __slots__ = ("_format", "_malformed", "_path")

    def __init__(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        if format is not None and not isinstance(format, str):
            raise TypeError(f"format: expected a str, not {type(format).__name__}")
        self._path = os.fspath(path)
        self._format: str = _native.TraceFile.open(self._path, format).format()
        self._malformed: Malformed | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], format: str | None = None) -> Trace:
        """Open the trace at ``path`` (see :class:`Trace`)."""
        return cls(path, format)

    @property
    def path(self) -> str:
        """The trace file."""
        return self._path

    @property
    def format(self) -> str:
        """Its format: ``respload``, ``monitor`` or ``twitter``."""
        return self._format

    def batches(self, size: int = _BATCH) -> Iterator[list[TraceRecord]]:
        """The records in lists of up to ``size`` (one pass over the file)."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size: expected an int of at least 1, not {size!r}")
        native = _native.TraceFile.open(self._path, self._format)
        while True:
            raw = json.loads(native.next_batch(size))
            if not raw:
                count, lines = native.malformed()
                self._malformed = Malformed(count, lines)
                return
            yield [_record(r) for r in raw]

    def __iter__(self) -> Iterator[TraceRecord]:
        """Every record in file order, read in batches (never the whole file at once)."""
        for batch in self.batches():
            yield from batch

    @property
    def malformed(self) -> Malformed:
        """The lines that could not be read as a command: how many, and the first of them as
        ``line N: reason``. Known after a whole pass over the file (iterating to the end,
        ``frame()``, ``plot()``); read here with one pass when none was made yet."""
        if self._malformed is None:
            native = _native.TraceFile.open(self._path, self._format)
            while native.next_batch(_BATCH) != "[]":
                pass
            count, lines = native.malformed()
            self._malformed = Malformed(count, lines)
        return self._malformed

    def frame(self) -> pandas.DataFrame:
        """The trace as a pandas DataFrame (``respload[pandas]``), one row per command.

        Columns: ``t_us`` (as recorded), ``t_s`` (seconds since the first record), ``db``,
        ``client``, ``command`` (upper case), ``key`` (the first argument, which is the key
        of most commands: ``str`` or ``bytes``; ``None`` when there is none), ``nargs`` (the
        arguments, the name included), ``value_size`` (the length in bytes of the value
        written by SET, SETNX, GETSET, APPEND, SETEX, PSETEX and SETRANGE, or its
        :class:`ValueSize`; missing for other commands)."""
        pd = _pandas()
        t_us: list[int] = []
        db: list[int] = []
        client: list[str] = []
        command: list[str] = []
        key: list[str | bytes | None] = []
        nargs: list[int] = []
        value_size: list[int | None] = []
        for rec in self:
            args = rec.args
            name = _name(args[0]) if args else ""
            t_us.append(rec.t_us)
            db.append(rec.db)
            client.append(rec.client)
            command.append(name)
            first = args[1] if len(args) > 1 else None
            key.append(None if isinstance(first, ValueSize) else first)
            nargs.append(len(args))
            at = _VALUE_AT.get(name)
            value_size.append(_byte_len(args[at]) if at is not None and at < len(args) else None)
        t0 = t_us[0] if t_us else 0
        return pd.DataFrame(
            {
                "t_us": pd.array(t_us, dtype="int64"),
                "t_s": pd.array([(t - t0) / 1e6 for t in t_us], dtype="float64"),
                "db": pd.array(db, dtype="int64"),
                "client": pd.array(client, dtype="object"),
                "command": pd.array(command, dtype="object"),
                "key": pd.array(key, dtype="object"),
                "nargs": pd.array(nargs, dtype="int64"),
                "value_size": pd.array(value_size, dtype="Int64"),
            }
        )

    def plot(self, figure: Figure | None = None) -> Figure:
        """Draw the trace with matplotlib (``respload[plot]``): its commands per second over
        time, and its key popularity (each key's commands against its rank, most popular
        first, log-log: a straight line is a Zipf distribution). The keys are the ``key``
        column of :meth:`frame`. Returns the figure (drawn into ``figure`` when given)."""
        _Figure, _, _ = _matplotlib()
        per_second: Counter[int] = Counter()
        keys: Counter[str | bytes] = Counter()
        for rec in self:
            per_second[rec.t_us // 1_000_000] += 1
            if len(rec.args) > 1:
                first = rec.args[1]
                if not isinstance(first, ValueSize):
                    keys[first] += 1
        fig = figure if figure is not None else _Figure(figsize=(10, 7), layout="constrained")
        rate, popularity = fig.subplots(2, 1)
        if per_second:
            start, end = min(per_second), max(per_second)
            seconds = range(start, end + 1)
            rate.plot([s - start for s in seconds], [per_second[s] for s in seconds])
        rate.set(title="Commands per second", xlabel="time (s)", ylabel="commands/s")
        rate.set_ylim(bottom=0)
        counts = sorted(keys.values(), reverse=True)
        if counts:
            popularity.loglog(range(1, len(counts) + 1), counts, marker=".", linestyle="none")
        popularity.set(
            title=f"Key popularity ({len(counts)} keys)", xlabel="rank", ylabel="commands"
        )
        return fig

    def model(
        self,
        rate_x: float = 1.0,
        keys_x: float = 1.0,
        url: str | None = None,
        top_keys: int = 1000,
    ) -> Model:
        """A workload spec fitted to the trace, in one pass (GIL released): its command mix,
        key popularity (Zipf by maximum likelihood, or hotset or uniform, whichever is
        closest; the top keys' own shares and a fitted tail when none is within 2%), value
        sizes, TTLs and rate. ``rate_x`` and ``keys_x`` multiply the rate
        and the number of keys; ``url`` becomes the spec's ``target.url``; ``top_keys`` is
        how many of the most popular keys the popularity error compares (0: all)."""
        for name, value in (("rate_x", rate_x), ("keys_x", keys_x)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name}: expected a number, not {type(value).__name__}")
        if isinstance(top_keys, bool) or not isinstance(top_keys, int) or top_keys < 0:
            raise ValueError(f"top_keys: expected an int of at least 0, not {top_keys!r}")
        text = _native.fit_trace_model(
            self._path, self._format, float(rate_x), float(keys_x), url, top_keys
        )
        return Model._of(json.loads(text))

    def replay(self, url: str | None = None, **options: Any) -> Report:
        """Replay this trace: :func:`replay` with this file and its format."""
        options.setdefault("format", self._format)
        return replay(self, url, **options)

    @staticmethod
    def start_capture(
        url: str | None = None,
        *,
        out: str | os.PathLike[str],
        duration: str | float | None = None,
        max_commands: int | None = None,
        target: Mapping[str, Any] | None = None,
    ) -> Capture:
        """Start capturing what a server executes (through ``MONITOR``) into ``out``, on a
        thread of the core, and return at once: :meth:`Capture.stop` ends it. The arguments
        are :meth:`capture`'s."""
        spec: dict[str, Any] = {"target": _target(url, target), "out": os.fspath(out)}
        if duration is not None:
            spec["duration"] = duration
        if max_commands is not None:
            spec["max_commands"] = max_commands
        return Capture(_native.Capture.start(_dumps(spec, "")))

    @staticmethod
    def capture(
        url: str | None = None,
        *,
        out: str | os.PathLike[str],
        duration: str | float | None = None,
        max_commands: int | None = None,
        target: Mapping[str, Any] | None = None,
    ) -> CaptureReport:
        """Capture what a server executes into the trace file ``out`` (respload's JSON lines,
        gzip when it ends in ``.gz``), passwords and ACL rules redacted, and return what was
        recorded.

        The server is ``url`` or ``target`` (a spec's target table: ``url``, ``host``,
        ``port``, ``password``, ``tls``, ``cluster``: with ``cluster``, every primary is
        captured into the one file). The capture reads the server's CPU for one second,
        then records through ``MONITOR`` until ``duration`` (``"60s"``, or seconds) or
        ``max_commands`` is reached, or it is interrupted: Ctrl-C (``KeyboardInterrupt``)
        stops it within 100 ms and the report of what was captured is returned, with
        ``interrupted`` set and the file complete; without a duration or count that is how
        a capture ends. The GIL is released while it runs. MONITOR costs the server: the
        report's ``nodes`` give its CPU before and during the capture."""
        return Trace.start_capture(
            url, out=out, duration=duration, max_commands=max_commands, target=target
        ).wait()

    def __repr__(self) -> str:
        return f"<Trace {self._path!r} ({self._format})>"


@dataclass(frozen=True)
class NodeCapture:
    """One server's part of a capture."""

    address: str
    """Its address."""
    commands: int
    """Commands captured from it."""
    cpu_before_percent: float | None
    """Its CPU (percent of one core) over the second before MONITOR started."""
    cpu_during_percent: float | None
    """Its CPU over the capture, MONITOR's cost included."""


@dataclass(frozen=True)
class CaptureReport:
    """What a capture recorded."""

    out: str
    """The trace file written."""
    commands: int
    """Commands written to it."""
    duration_s: float
    """Seconds from MONITOR's start to the capture's end."""
    redacted: int
    """Arguments redacted (passwords and ACL rules)."""
    malformed: int
    """MONITOR lines that could not be read as a command (not written)."""
    interrupted: bool
    """Whether it was stopped (Ctrl-C, ``stop()``) before its duration or command count."""
    nodes: list[NodeCapture] = field(default_factory=list)
    """Each server captured."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CaptureReport:
        """A CaptureReport from its JSON object."""
        return cls(
            out=d["out"],
            commands=d["commands"],
            duration_s=d["duration_s"],
            redacted=d["redacted"],
            malformed=d["malformed"],
            interrupted=d["interrupted"],
            nodes=[NodeCapture(**n) for n in d.get("nodes", [])],
        )

    def trace(self) -> Trace:
        """The trace written: ``Trace(report.out)``."""
        return Trace(self.out)


class Capture:
    """A capture running on a thread of the core, from :meth:`Trace.start_capture`: stop it
    with :meth:`stop`, or :meth:`wait` for its duration or command count. As a context
    manager it stops on exit. A capture dropped while it runs is stopped (its file kept)."""

    __slots__ = ("_error", "_lock", "_native", "_report")

    def __init__(self, native: _native.Capture) -> None:
        self._native = native
        self._report: CaptureReport | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def finished(self) -> bool:
        """Whether the capture has ended."""
        return self._report is not None or self._native.is_finished()

    @property
    def report(self) -> CaptureReport | None:
        """The report, once ``wait()`` or ``stop()`` returned it."""
        return self._report

    @property
    def started(self) -> bool:
        """Whether MONITOR is on at every server captured: each command they run from
        then on is in the trace. It turns true about a second after the start (the
        capture first reads the servers' CPU without MONITOR) and stays true."""
        return self._native.is_started()

    def wait_started(self, timeout: float | None = None) -> bool:
        """Wait until :attr:`started` (True), or until the capture ended without starting
        or ``timeout`` seconds passed (False). Drive the traffic to capture after it:
        commands sent before are not recorded. A capture that failed to start raises
        its error from :meth:`wait` or :meth:`stop`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._native.is_started():
            if self._native.is_finished():
                return self._native.is_started()
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def wait(self) -> CaptureReport:
        """Wait for the capture to end (GIL released) and return its report. Ctrl-C
        (``KeyboardInterrupt``) stops it and returns the report of what was captured
        (``interrupted`` set, the file complete)."""
        try:
            return self._finish()
        except KeyboardInterrupt:
            self._native.request_stop()
            return self._finish()

    def stop(self) -> CaptureReport:
        """Stop now (within 100 ms) and return the report (``interrupted`` is True if the
        capture had not ended yet); calling it again returns the same report."""
        self._native.request_stop()
        return self._finish()

    def _finish(self) -> CaptureReport:
        with self._lock:
            while self._report is None and self._error is None:
                try:
                    text = self._native.wait(_POLL_S)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    self._error = exc
                    break
                if text is not None:
                    self._report = CaptureReport.from_dict(json.loads(text))
            if self._error is not None:
                raise self._error
            assert self._report is not None
            return self._report

    def __enter__(self) -> Capture:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._report is None and self._error is None:
            if exc is None:
                self.stop()
            else:  # keep the caller's exception, not a failure of the capture
                self._native.request_stop()
                with contextlib.suppress(Exception):
                    self._finish()

    def __repr__(self) -> str:
        return f"<Capture {'done' if self._report is not None else 'running'}>"


class MixShare(TypedDict):
    """One command of a model's mix."""

    name: str
    """The command name, upper-cased."""
    trace_share: float
    """Its share of the trace's commands (0 to 1)."""
    model_share: float
    """Its share of the model's picks (0 to 1; 0 when left out)."""
    modelled_as: str
    """What the spec sends for it (``get``, a template, or why it is left out)."""


class KeySpaces(TypedDict):
    """The trace's distinct keys by who touched them (``ModelFit.key_spaces``)."""

    read_only: int
    """Keys only reading commands touched."""
    written_only: int
    """Keys only writing commands touched."""
    read_and_written: int
    """Keys both read and written."""


class ModelFit(TypedDict):
    """How close a model is to its trace (``Model.fit``)."""

    commands: int
    """Commands read."""
    distinct_keys: int
    """Distinct keys the commands touched."""
    duration_s: float
    """From the first command to the last, seconds."""
    mean_rate: float
    """Commands per second over the trace."""
    mix: list[MixShare]
    """The command mix, most frequent first."""
    zipf_exponent: float | None
    """The Zipf exponent fitted to the keys' popularity by maximum likelihood (``None`` with
    fewer than 2 keys)."""
    zipf_reads_writes: tuple[float, float] | None
    """The Zipf exponents of reading and of writing commands' keys, when they differ enough for
    the spec to give each its own."""
    key_spaces: KeySpaces
    """The read and write key spaces: distinct keys only read, only written, and both."""
    popularity_error: float
    """Largest difference between the trace's and the model's cumulative share of accesses over
    the most popular keys, 0 to 1."""
    popularity: str
    """The key distribution chosen: ``zipf``, ``hotset``, ``uniform``, ``empirical`` (the most
    popular keys' own shares and a fitted tail), or ``none``."""
    sizes: list[tuple[int, float]]
    """Value sizes written (bytes, share), at most 16 buckets."""
    ttls: list[tuple[int, float]]
    """TTLs set (seconds, share), at most 16 buckets."""
    rate_profile: list[float]
    """Commands per second, one entry per ``rate_step_s`` seconds of the trace."""
    rate_step_s: int
    """Seconds per entry of ``rate_profile``."""
    notes: list[str]
    """What the spec could not express, one sentence each."""


def _fit(d: dict[str, Any]) -> ModelFit:
    pair = d.get("zipf_reads_writes")
    return ModelFit(
        commands=d["commands"],
        distinct_keys=d["distinct_keys"],
        duration_s=d["duration_s"],
        mean_rate=d["mean_rate"],
        mix=[
            MixShare(
                name=m["name"],
                trace_share=m["trace_share"],
                model_share=m["model_share"],
                modelled_as=m["modelled_as"],
            )
            for m in d["mix"]
        ],
        zipf_exponent=d.get("zipf_exponent"),
        zipf_reads_writes=None if pair is None else (pair[0], pair[1]),
        key_spaces=KeySpaces(
            read_only=d["key_spaces"]["read_only"],
            written_only=d["key_spaces"]["written_only"],
            read_and_written=d["key_spaces"]["read_and_written"],
        ),
        popularity_error=d["popularity_error"],
        popularity=d["popularity"],
        sizes=[(s, p) for s, p in d["sizes"]],
        ttls=[(s, p) for s, p in d["ttls"]],
        rate_profile=list(d["rate_profile"]),
        rate_step_s=d["rate_step_s"],
        notes=list(d["notes"]),
    )


class Model:
    """A workload spec fitted to a trace (:meth:`Trace.model`), and how close it is.

    ``spec`` is a full spec (target, load, keys, values, commands) as a dict: ``run(model.spec)``
    or ``model.workload()`` runs it; ``fit`` says how close it is; ``to_toml()`` gives the spec
    as a TOML file with the fit summarized in comments at the top."""

    __slots__ = ("_summary", "_toml", "fit", "spec")

    _summary: str
    _toml: str
    spec: dict[str, Any]
    """The spec, shaped like a TOML spec file."""
    fit: ModelFit
    """How close the model is to the trace."""

    def __init__(self) -> None:
        raise TypeError("a Model is made by Trace.model()")

    @classmethod
    def _of(cls, data: dict[str, Any]) -> Model:
        self = cls.__new__(cls)
        self.spec = data["spec"]
        self.fit = _fit(data["fit"])
        self._toml = data["toml"]
        self._summary = data["summary"]
        return self

    def to_toml(self) -> str:
        """The spec as TOML, the fit summarized in comments at the top."""
        return self._toml

    def summary(self) -> str:
        """The fit in a few human-readable lines: the mix (trace and model), the key
        popularity, sizes, TTLs, rate, and what the spec could not express."""
        return self._summary

    def workload(self, **overrides: Any) -> Workload:
        """The spec as a :class:`~respload.Workload`, with ``overrides`` applied as
        :meth:`Workload.with_overrides` does (``load={"duration": "5s"}``)."""
        w = Workload.from_dict(self.spec)
        return w.with_overrides(**overrides) if overrides else w

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        f = self.fit
        return (
            f"<Model {f['commands']} commands, {f['distinct_keys']} keys, "
            f"{f['popularity']} popularity, {f['mean_rate']:.1f} ops/s>"
        )


def replay(
    file: str | os.PathLike[str] | Trace,
    url: str | None = None,
    *,
    format: str | None = None,
    speed: float | None = None,
    rate: float | None = None,
    connections: int | None = None,
    key_prefix: str | None = None,
    key_hash: bool = False,
    keep: Sequence[str] | None = None,
    drop: Sequence[str] | None = None,
    loops: int | None = None,
    prefill: bool | None = None,
    prefill_size: int | None = None,
    target: Mapping[str, Any] | None = None,
    on_progress: ProgressCallback | None = None,
    progress: bool | None = None,
    **fields: Any,
) -> Report:
    """Replay a trace against a server and return the report: its commands at their recorded
    instants (open loop), each recorded client's in order; ``report.phases[0].replay`` says
    what was replayed, what was skipped and why, and how well the schedule was kept.

    A run of the spec ``{"target": ..., "replay": {...}}`` (see ``docs/spec.md``), through
    :func:`respload.run`: ``progress``, ``on_progress`` and Ctrl-C behave as there (the
    ``KeyboardInterrupt`` propagates with the partial report as ``exc.report``), and other
    keyword ``fields`` are spec fields (``observe``, ``output``, ``thresholds``, ``name``).

    - ``file``: the trace (a path or a :class:`Trace`); ``format`` when its first line does
      not tell.
    - ``url`` / ``target``: the server (``url`` wins over ``target["url"]``).
    - ``speed``: how much faster than recorded (default 1.0); or ``rate``: the mean rate in
      requests per second (not both).
    - ``connections``: connections to hash the recorded clients onto (default: one per
      recorded client).
    - ``key_prefix``: written before every key; ``key_hash``: every key replaced by a hash.
    - ``keep``: replay only these commands; ``drop``: never these. FLUSHALL, CONFIG, blocking
      commands and others are dropped unless ``keep`` names them.
    - ``loops``: passes over the trace (default 1).
    - ``prefill``: first write the keys the trace reads before writing them (default True),
      ``prefill_size`` bytes each when the trace does not tell (default 64).
    """
    if isinstance(file, Trace):
        if format is None:
            format = file.format
        path = file.path
    else:
        path = os.fspath(file)
    table: dict[str, Any] = {"file": path}
    optional: dict[str, Any] = {
        "format": format,
        "speed": speed,
        "rate": rate,
        "connections": connections,
        "key_prefix": key_prefix,
        "loops": loops,
        "prefill": prefill,
        "prefill_size": prefill_size,
    }
    table.update({k: v for k, v in optional.items() if v is not None})
    if key_hash:
        table["key_hash"] = True
    for name, names in (("keep", keep), ("drop", drop)):
        if names is not None:
            if isinstance(names, (str, bytes)):
                raise TypeError(f"{name}: expected a list of command names, not {names!r}")
            table[name] = list(names)
    spec = {"target": _target(url, target), "replay": table, **fields}
    return run(spec, on_progress=on_progress, progress=progress)
