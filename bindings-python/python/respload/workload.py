"""Workloads: what to send, where, and how much. One schema with TOML files and the CLI."""

from __future__ import annotations

import datetime
import json
import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

from . import _native
from ._json import dumps as _dumps
from ._native import Workload as _NativeWorkload
from .exceptions import SpecError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    # The spec's tables as TypedDicts, generated from the core's schema: type checkers and
    # editors know every field of ``Workload(**fields)`` and ``run(**fields)``.
    from .spec_types import Spec

__all__ = ["Workload", "WorkloadLike"]


class Workload:
    """A validated workload: its target, load, keys, values, command mix and phases.

    Build one from keyword arguments (the spec's top-level tables), a dict, or a TOML/JSON
    file; every field is checked when the object is built, so a
    :class:`~respload.SpecError` comes before any traffic::

        Workload(
            target={"url": "redis://127.0.0.1:6379"},
            load={"connections": 4, "requests": 1000},
            commands=[{"name": "set"}],
        )
    """

    __slots__ = ("_native",)
    _native: _NativeWorkload

    def __init__(self, **fields: Unpack[Spec]) -> None:
        self._native = _NativeWorkload.from_json(_dumps(dict(fields), ""))

    @classmethod
    def _wrap(cls, native: _NativeWorkload) -> Workload:
        self = cls.__new__(cls)
        self._native = native
        return self

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Workload:
        """A workload from a dict shaped like the TOML spec."""
        if not isinstance(spec, Mapping):
            raise SpecError(
                f"invalid spec at ``: {type(spec).__name__}: a workload must be a mapping "
                "of fields",
                reason="a workload must be a mapping of fields",
            )
        return cls._wrap(_NativeWorkload.from_json(_dumps(dict(spec), "")))

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        scale: str | None = None,
        vars: Mapping[str, Any] | None = None,
    ) -> Workload:
        """Read a ``.toml`` or ``.json`` spec file (JSON when the name ends in ``.json``).

        ``scale`` applies the file's ``[scales.NAME]`` values over its ``[vars]``; ``vars``
        then sets single variables the file declares (``{"url": "redis://..."}``).
        """
        if scale is not None and not isinstance(scale, str):
            raise TypeError(
                f"scale: expected the name of one of the file's [scales] (a str), "
                f"not {type(scale).__name__}"
            )
        # Not a mapping: the core says what `vars` must be, as for Node.
        given = dict(vars) if isinstance(vars, Mapping) else vars
        vars_json = None if vars is None else _dumps(given, "vars")
        return cls._wrap(_NativeWorkload.from_file(os.fspath(path), scale, vars_json))

    @classmethod
    def from_toml(cls, text: str) -> Workload:
        """A workload from TOML text."""
        return cls._wrap(_NativeWorkload.from_toml(text))

    @classmethod
    def from_json(cls, text: str) -> Workload:
        """A workload from JSON text."""
        return cls._wrap(_NativeWorkload.from_json(text))

    @classmethod
    def from_redis_benchmark(cls, line: str) -> Workload:
        """A workload from a redis-benchmark command line, unchanged.

        The line is split as a shell would (quotes and backslashes); a leading
        ``redis-benchmark`` is skipped (a leading ``valkey-benchmark`` too, and the line is
        then valkey-benchmark's, with its default tests). Each test of ``-t`` (default: all)
        becomes a measured phase named as redis-benchmark names it (``SET``, ``LRANGE_100
        (first 100 elements)``, ...); a command after the options becomes one phase. Options
        respload cannot honour (``--rdma``, ``--fuzz``) raise :class:`~respload.SpecError`
        with the option as ``path``; so do ``-l``, which only the CLI repeats, and ``-x``
        with a command, whose argument only the CLI reads from standard input. Output
        options (``-q``, ``--csv``, ``--precision``, ``--json``) do not change the workload.
        redis-benchmark's warnings (``-t`` next to a command) are issued as
        :class:`UserWarning`. Every option: ``docs/compat.md``::

            w = Workload.from_redis_benchmark("redis-benchmark -t set,get -n 10000 -r 1000")
        """
        if not isinstance(line, str):
            raise TypeError(f"line: expected a str, not {type(line).__name__}")
        native, notes = _NativeWorkload.from_redis_benchmark(line)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        return cls._wrap(native)

    @classmethod
    def from_memtier(cls, line: str) -> Workload:
        """A workload from a memtier_benchmark command line, unchanged.

        The line is split as a shell would (quotes and backslashes); a leading
        ``memtier_benchmark`` is skipped. ``-t`` threads x ``-c`` clients make the
        connections, ``-n`` counts requests per client (``allkeys``: every key of the range
        once), ``--ratio`` weighs SET and GET, ``--key-pattern`` picks the keys, each
        ``--command`` is a template; ``--run-count=N`` gives measured phases ``run 1`` ...
        ``run N``. Combinations respload cannot run yet (``--client-stats``
        with ``--cluster-mode``, ...), unknown options and bad values raise
        :class:`~respload.SpecError` with the option as ``path``. Output options
        (``--json-out-file``, ``--hide-histogram``, ...) do not change the workload; the
        ``respload memtier`` CLI writes memtier's reports. Every option:
        ``docs/compat.md``::

            w = Workload.from_memtier("memtier_benchmark -n 1000 -c 4 -t 2 --ratio=1:1")
        """
        if not isinstance(line, str):
            raise TypeError(f"line: expected a str, not {type(line).__name__}")
        return cls._wrap(_NativeWorkload.from_memtier(line))

    def with_overrides(self, **fields: Any) -> Workload:
        """A copy with some fields replaced, as the CLI's flags do.

        ``target`` applies to every phase; every other field to the measured phases only, so
        ``w.with_overrides(load={"requests": 1000})`` changes the measurement and not a
        populate phase. Tables merge key by key; lists and values replace. An address in
        ``target`` (``url``, or ``host``/``port``/``unix``) replaces the phase's whichever
        form each uses; a phase ``url`` replaced this way keeps its user, password, database
        and TLS unless ``target`` gives them.
        """
        target = fields.pop("target", None)
        rest = fields or None
        return Workload._wrap(
            self._native.with_overrides(
                None if target is None else _dumps({"target": target}, "target", root=""),
                None if rest is None else _dumps(rest, ""),
            )
        )

    def shard(self, index: int, count: int) -> Workload:
        """Shard ``index`` (0-based) of ``count`` hosts running this workload together: this
        host's share of the connections, the request budgets and the rate (the shares sum to
        the whole), a contiguous part of ``keys.range`` in phases that walk keys in order (so
        the hosts together visit every key once), its own seed; fault drills and server
        observation stay with shard 0. Raises :class:`~respload.SpecError` naming the field
        that cannot be shared (fewer connections or requests than shards, an SLO search); a
        connection ramp is dealt out in turn (``load.connections_ramp.share``)::

            mine = Workload.from_file("spec.toml").shard(1, 3)
        """
        for name, value in (("index", index), ("count", count)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"shard {name}: expected an int, not {type(value).__name__}")
        if not 0 <= index < count <= 2**32 - 1:
            raise ValueError(
                f"shard: {index}/{count}: expected index from 0 to count - 1 (a count of at "
                "least 1)"
            )
        return Workload._wrap(self._native.shard(index, count))

    def starting_at(self, at: StartAt) -> Workload:
        """This workload set to send its first request at ``at``: a ``datetime`` (naive ones
        are local time), UNIX seconds, or RFC 3339 text (``"2026-11-25T20:00:00Z"``). The run
        opens its connections, then waits for that instant, so hosts given the same one start
        together; it raises :class:`~respload.SpecError` before any traffic when the instant
        passed by more than a second."""
        return Workload._wrap(self._native.starting_at(start_instant(at)))

    def with_barrier(
        self,
        url: str,
        *,
        id: str | None = None,
        timeout: float | str | datetime.timedelta | None = None,
    ) -> Workload:
        """This shard (:meth:`shard` first) with its phases in step across its hosts: before
        each phase (the first too, unless :meth:`starting_at` set an instant) every host waits
        on the Redis at ``url`` (any server all hosts reach; the target will do) until every
        shard has arrived, then all start the phase at one instant. ``id`` names the run on
        that server, the same on every host and new for each run (derived from the workload
        and the start instant when left out; needed without one); ``timeout`` is how long a
        host waits for the others (seconds, a ``timedelta`` or ``"5m"``; default 5 minutes).
        A host that never arrives fails the others with :class:`~respload.BarrierError`."""
        return Workload._wrap(
            self._native.with_barrier(url, id, None if timeout is None else _duration(timeout))
        )

    def to_dict(self, *, redact: bool = True) -> dict[str, Any]:
        """The normalized spec (defaults filled in), with passwords replaced by ``"***"``
        unless ``redact=False`` (then ``Workload.from_dict`` of it is this workload)."""
        result: dict[str, Any] = json.loads(self._native.to_json(redact))
        return result

    def __len__(self) -> int:
        """The number of phases."""
        return len(self._native)

    def __repr__(self) -> str:
        return f"Workload({self._native.to_json()})"


StartAt = Union[datetime.datetime, float, int, str]
"""A start instant: a ``datetime``, UNIX seconds, or RFC 3339 text."""


def start_instant(at: StartAt) -> float:
    """A start instant as UNIX seconds."""
    if isinstance(at, datetime.datetime):
        return at.timestamp()
    if isinstance(at, str):
        return _native.parse_start_at(at)
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        raise TypeError(
            f"start_at: expected a datetime, UNIX seconds or RFC 3339 text, not {type(at).__name__}"
        )
    return float(at)


def _duration(value: float | str | datetime.timedelta) -> str:
    """A duration as the core reads it (``"90s"``)."""
    if isinstance(value, datetime.timedelta):
        return f"{value.total_seconds()}s"
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"barrier_timeout: expected seconds, a timedelta or text such as '5m', not "
            f"{type(value).__name__}"
        )
    return f"{value}s"


WorkloadLike = Union[Workload, Mapping[str, Any], str, "os.PathLike[str]"]
"""What ``run()`` and ``Runner()`` accept: a Workload, a dict, or the path of a spec file."""


def to_workload(workload: WorkloadLike | None, fields: dict[str, Any]) -> Workload:
    """Resolve the ``workload`` argument and keyword fields of ``run()`` into a Workload;
    ``shard=(index, count)`` among them runs that shard of it (:meth:`Workload.shard`),
    ``start_at=`` starts it at an instant (:meth:`Workload.starting_at`), ``barrier=``
    (with ``barrier_id=``, ``barrier_timeout=``) runs its phases in step across the hosts
    (:meth:`Workload.with_barrier`)."""
    shard = fields.pop("shard", None)
    start_at = fields.pop("start_at", None)
    barrier = fields.pop("barrier", None)
    barrier_id = fields.pop("barrier_id", None)
    barrier_timeout = fields.pop("barrier_timeout", None)
    resolved = _to_workload(workload, fields)
    if shard is not None:
        if not isinstance(shard, (tuple, list)) or len(shard) != 2:
            raise TypeError(f"shard: expected (index, count), e.g. (0, 3), not {shard!r}")
        resolved = resolved.shard(shard[0], shard[1])
    if start_at is not None:
        resolved = resolved.starting_at(start_at)
    if barrier is not None:
        resolved = resolved.with_barrier(barrier, id=barrier_id, timeout=barrier_timeout)
    elif barrier_id is not None or barrier_timeout is not None:
        raise TypeError("barrier_id and barrier_timeout need barrier= (the barrier's URL)")
    return resolved


def _to_workload(workload: WorkloadLike | None, fields: dict[str, Any]) -> Workload:
    if workload is None:
        return Workload(**fields)
    if isinstance(workload, Workload):
        base = workload
    elif isinstance(workload, Mapping):
        base = Workload.from_dict(workload)
    elif isinstance(workload, (str, os.PathLike)):
        base = Workload.from_file(workload)
    else:
        raise TypeError(
            f"workload: expected a Workload, a dict or a spec file path, not "
            f"{type(workload).__name__}"
        )
    return base.with_overrides(**fields) if fields else base
