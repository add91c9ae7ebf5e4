"""Running workloads: ``run()``, ``run_async()`` and the ``Runner`` behind them.

The traffic runs on the core's own threads. Waiting for it happens with the GIL released,
in slices of 100 ms, so other Python threads keep running, and Ctrl-C (``KeyboardInterrupt``)
is seen within 100 ms: the run is then stopped (in-flight requests get 300 ms to finish) and
the partial report is attached to the exception as ``exc.report``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

from . import _native
from ._progress import LiveProgress, progress_mode
from .report import Report, Snapshot
from .workload import Workload, WorkloadLike, to_workload

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .spec_types import Spec
    from .workload import StartAt

    class RunFields(Spec, total=False):
        """The keyword fields of ``run()`` and ``Runner()``: the spec's (generated from the
        core's schema), and the two run options taken out before it is read."""

        shard: tuple[int, int]
        """Run shard ``(index, count)`` of the workload (:meth:`Workload.shard`)."""
        start_at: StartAt
        """Start at this instant (:meth:`Workload.starting_at`)."""


__all__ = ["ProgressCallback", "Runner", "run", "run_async"]

ProgressCallback = Callable[[Snapshot], Optional[bool]]
"""Called with each interval's :class:`Snapshot`; returning ``False`` stops the run early
(the report is then partial, with ``interrupted`` set)."""

_POLL_S = 0.1


def _check_progress(on_progress: object) -> None:
    """Refuse an ``on_progress`` that cannot be called, before any traffic."""
    if on_progress is not None and not callable(on_progress):
        raise TypeError(
            "on_progress must be a function taking a Snapshot (or None), "
            f"got {type(on_progress).__name__}: {on_progress!r}"
        )


class Runner:
    """A run you can watch and stop: ``start()``, iterate over the per-second snapshots,
    then ``wait()`` (or ``stop()`` early) for the report.

    ::

        runner = Runner(workload).start()
        for snapshot in runner:          # one per interval, until the run ends
            print(snapshot.ops_per_sec)
        report = runner.wait()

    ``async for snapshot in runner`` does the same for asyncio, waiting on a worker thread
    so the event loop keeps running.

    As a context manager it starts on entry and, if the run is still going on exit, stops
    it: nothing keeps sending after the ``with`` block.
    """

    def __init__(
        self, workload: WorkloadLike | None = None, /, **fields: Unpack[RunFields]
    ) -> None:
        self._workload = to_workload(workload, dict(fields))
        self._native: _native.Runner | None = None
        self._report: Report | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def workload(self) -> Workload:
        """The workload this runner runs."""
        return self._workload

    @property
    def started(self) -> bool:
        """Whether ``start()`` was called."""
        return self._native is not None

    @property
    def finished(self) -> bool:
        """Whether the run is over and every snapshot was taken."""
        return self._native is not None and self._native.is_finished()

    @property
    def report(self) -> Report | None:
        """The report, once ``wait()`` or ``stop()`` returned it."""
        return self._report

    def start(self) -> Runner:
        """Start the traffic (in the background) and return this runner."""
        if self._native is not None:
            raise RuntimeError("this Runner was already started: make a new one")
        self._native = _native.Runner.start(self._workload._native)
        return self

    def _started(self) -> _native.Runner:
        if self._native is None:
            raise RuntimeError("this Runner was not started: call start() first")
        return self._native

    def __iter__(self) -> Iterator[Snapshot]:
        """The snapshots of the run, one per interval, until it ends (starts it if needed).

        A ``KeyboardInterrupt`` while waiting stops the run and carries the partial report
        as ``exc.report``.
        """
        if self._native is None:
            self.start()
        native = self._started()
        try:
            while True:
                text = native.next_snapshot(_POLL_S)
                if text is not None:
                    yield Snapshot.from_json(text)
                elif native.is_finished():
                    return
        except KeyboardInterrupt as exc:
            native.request_stop()
            self._attach_partial(exc)
            raise

    def __aiter__(self) -> AsyncIterator[Snapshot]:
        """``async for snapshot in runner``: the snapshots as iteration gives them, each
        awaited on a worker thread so the event loop keeps running (starts the run if
        needed). As with ``for``, leaving the loop early leaves the run going (``stop()``
        ends it); cancelling the task waiting for a snapshot stops the run."""
        if self._native is None:
            self.start()
        return _Snapshots(self._started())

    def wait(
        self, on_progress: ProgressCallback | None = None, *, progress: bool | None = False
    ) -> Report:
        """Wait for the run to end and return its report (GIL released while waiting).

        ``progress`` shows the run live (see :func:`run`; here off unless asked, ``None``
        meaning on in a Jupyter kernel). ``on_progress`` is called with each snapshot not
        yet taken by iteration. A
        ``KeyboardInterrupt`` stops the run and carries the partial report as
        ``exc.report``; another exception (from ``on_progress``) stops the run and
        propagates.
        """
        _check_progress(on_progress)
        native = self._started()
        mode = progress_mode(progress)
        live = None if mode is None else LiveProgress(self._workload._native, mode)
        try:
            while True:
                text = native.next_snapshot(_POLL_S)
                if text is not None:
                    if live is not None:
                        live.update(text)
                    if on_progress is not None and on_progress(Snapshot.from_json(text)) is False:
                        native.request_stop()
                elif native.is_finished():
                    break
        except BaseException as exc:
            native.request_stop()
            if isinstance(exc, KeyboardInterrupt):
                self._attach_partial(exc)
            raise
        finally:
            if live is not None:
                live.finish()
        return self._finish()

    def stop(self) -> Report:
        """Stop now and return the partial report (``interrupted`` is True if the run had
        not ended yet). In-flight requests get up to 300 ms to finish."""
        native = self._started()
        native.request_stop()
        return self._finish()

    def _finish(self) -> Report:
        native = self._started()
        with self._lock:
            if self._report is None and self._error is None:
                try:
                    self._report = Report.from_json(native.wait())
                except BaseException as exc:
                    self._error = exc
            if self._error is not None:
                raise self._error
            assert self._report is not None
            return self._report

    def _attach_partial(self, exc: BaseException) -> None:
        try:
            exc.report = self._finish()  # type: ignore[attr-defined]
        except Exception:  # the run failed: the interrupt is what the caller sees
            exc.report = None  # type: ignore[attr-defined]

    def __enter__(self) -> Runner:
        if self._native is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._native is not None and self._report is None and self._error is None:
            self._native.request_stop()
            if exc is None:
                self._finish()
            else:  # keep the caller's exception, not a failure of the run
                with contextlib.suppress(Exception):
                    self._finish()

    def __repr__(self) -> str:
        state = (
            "not started"
            if self._native is None
            else "done"
            if self._report is not None
            else "running"
        )
        return f"<Runner {state}>"


class _Snapshots:
    """The asynchronous iterator of a run's snapshots."""

    def __init__(self, native: _native.Runner) -> None:
        self._native = native

    def __aiter__(self) -> _Snapshots:
        return self

    async def __anext__(self) -> Snapshot:
        loop = asyncio.get_running_loop()
        native = self._native
        while True:
            try:
                text = await loop.run_in_executor(None, native.next_snapshot, _POLL_S)
            except asyncio.CancelledError:
                native.request_stop()
                raise
            if text is not None:
                return Snapshot.from_json(text)
            if native.is_finished():
                raise StopAsyncIteration


def run(
    workload: WorkloadLike | None = None,
    /,
    *,
    on_progress: ProgressCallback | None = None,
    progress: bool | None = None,
    **fields: Unpack[RunFields],
) -> Report:
    """Run a workload to its end and return the report.

    ``workload`` is a :class:`Workload`, a dict, or the path of a TOML/JSON spec file; keyword
    ``fields`` build one (``run(target={...}, load={...})``) or override the given one
    (``target`` in every phase, the rest in the measured phases). The GIL is released while
    the traffic runs. ``on_progress(snapshot)`` is called once per interval on this thread;
    returning ``False`` stops the run early.

    ``progress`` shows the run live: in a Jupyter kernel one display updated each interval
    (a bar per phase for its requests or duration, ops/s, p50/p99, errors); elsewhere the
    CLI's live line on stderr when it is a terminal, nothing when it is not. The default
    (``None``) is on in a Jupyter kernel, off elsewhere.

    Raises :class:`SpecError` before any traffic, :class:`ConnectError` /
    :class:`AuthError` if the server cannot be used. On Ctrl-C the traffic stops within a
    second and the ``KeyboardInterrupt`` propagates with the partial report as
    ``exc.report``.
    """
    _check_progress(on_progress)
    return Runner(workload, **fields).start().wait(on_progress, progress=progress)


async def run_async(
    workload: WorkloadLike | None = None,
    /,
    *,
    on_progress: ProgressCallback | None = None,
    progress: bool | None = None,
    **fields: Unpack[RunFields],
) -> Report:
    """``run()`` for asyncio: the waiting happens on a worker thread, so the event loop keeps
    running. ``on_progress`` is called on the event loop's thread; an exception from it stops
    the run and propagates, as in ``run()``. Cancelling the task stops the traffic before the
    cancellation propagates."""
    _check_progress(on_progress)
    runner = Runner(workload, **fields).start()
    native = runner._started()

    def wait(callback: ProgressCallback | None) -> Report:
        return runner.wait(callback, progress=progress)

    return await on_a_thread(wait, native.request_stop, on_progress)


T = TypeVar("T")


async def on_a_thread(
    blocking: Callable[[ProgressCallback | None], T],
    stop: Callable[[], None],
    on_progress: ProgressCallback | None,
) -> T:
    """``blocking(progress)`` on a worker thread, for asyncio: ``on_progress`` is called on
    the event loop's thread with what ``blocking`` passes to ``progress``; returning
    ``False`` calls ``stop()``, and so does an exception from it, which then propagates once
    ``blocking`` returned. Cancelling the task calls ``stop()`` and waits for ``blocking``
    to return before the cancellation propagates."""
    loop = asyncio.get_running_loop()
    # The first exception of on_progress: the loop would only log it.
    failure: list[Exception] = []

    def progress(snapshot: Snapshot) -> None:
        def deliver() -> None:
            if failure or on_progress is None:
                return
            try:
                if on_progress(snapshot) is False:
                    stop()
            except Exception as exc:
                failure.append(exc)
                stop()

        loop.call_soon_threadsafe(deliver)

    future = loop.run_in_executor(None, blocking, progress if on_progress else None)
    try:
        result = await asyncio.shield(future)
    except asyncio.CancelledError:
        stop()
        with contextlib.suppress(BaseException):  # the cancellation is what the caller sees
            await future
        raise
    # Deliveries scheduled before the run ended have run by now: the loop runs callbacks in
    # the order they were scheduled, and the waiting thread scheduled them before returning.
    if failure:
        raise failure[0]
    return result
