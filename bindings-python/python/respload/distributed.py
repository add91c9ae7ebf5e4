"""One workload from many hosts on a Ray cluster, merged into one exact report.

::

    import respload.distributed

    report = respload.distributed.run("spec.toml", hosts=3, address="ray://head:10001")
    print(report.totals.ops_per_sec, [h.name for h in report.hosts])

Needs the ``ray`` extra (``pip install 'respload[ray]'``) on the driver and on every node of
the cluster. One generator actor per host runs its shard of the workload
(:meth:`Workload.shard`) in a placement group (``placement="strict_spread"``: no two shards
on one machine; ``"spread"`` or ``"pack"`` to run several on one). Before any traffic every
actor checks that it can reach the target's addresses (a host that cannot fails the run,
which names every such host); then the driver sets a start instant a couple of seconds ahead
(:meth:`Workload.starting_at`), every actor opens its connections and waits for it, and the
driver streams every host's per-second snapshots into one merged :class:`Snapshot` per
second (``on_progress``) until the end, and returns :func:`merge_reports` of the hosts'
reports.

A host lost mid-run (its node or actor died) is kept in the merged report with what it had
streamed: its ``hosts`` entry is ``interrupted`` with an ``error`` saying it was lost, its
ops and latencies are those of the snapshots it sent (not split by command), and the merged
``validity`` is not trusted. The other hosts' results are kept whole. A ``KeyboardInterrupt``
(Ctrl-C) on the driver stops every host within a second and propagates with the partial
merged report as ``exc.report``, as :func:`respload.run` does.

Each phase boundary is a barrier: the hosts run each phase of a multi-phase workload as a
run of its own, every host starting it at one instant once all have finished the one before
(a phase that reads what a populate phase wrote finds every key written), and the phases'
merged reports are joined into the one report a run of the whole workload gives
(:func:`run`), or returned one per phase (:func:`run_phases`). The library never prints; the
``respload distributed`` command prints the live merged line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import logging
import math
import os
import resource
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from . import _native, exceptions
from .report import Report, Snapshot
from .runner import ProgressCallback, Runner, _check_progress, on_a_thread
from .workload import Workload, WorkloadLike, to_workload

__all__ = [
    "Distributed",
    "Placement",
    "merge_snapshots",
    "phases_of",
    "run",
    "run_async",
    "run_hosts",
    "run_phases",
    "target_addresses",
]

Placement = Literal["strict_spread", "spread", "pack"]
"""Where the hosts' actors go: ``"strict_spread"`` one per node (the default: no two shards
share a machine), ``"spread"`` over the nodes as far as they go, ``"pack"`` on as few nodes
as fit (several hosts on one machine)."""

_STRATEGIES = {"strict_spread": "STRICT_SPREAD", "spread": "SPREAD", "pack": "PACK"}
_POLL_S = 0.25
# A host whose actor has not answered a poll for this long is taken as lost.
_SILENT_S = 10.0
_Json = dict[str, Any]


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            "respload.distributed needs Ray: pip install 'respload[ray]' (or pip install ray)"
        ) from None
    return ray


# --- the actor: one host ------------------------------------------------------------------


class _Host:
    """One host's generator, as a Ray actor (``max_concurrency`` > 1, so that ``stop`` runs
    while ``poll`` waits): runs its shard with the core's Runner and hands out its snapshots
    as JSON text."""

    def __init__(self, index: int, count: int) -> None:
        self._index = index
        self._count = count
        self._runner: Runner | None = None
        self._cpu_start = _process_cpu()
        # The process's CPU at the start instant (marked by a timer): what the run cost.
        self._cpu_at_start: float | None = None
        self._mark: threading.Timer | None = None

    def describe(self) -> _Json:
        """Where this host is: its machine's name, Ray node and process."""
        ray = _ray()
        return {
            "host": socket.gethostname(),
            "node": ray.get_runtime_context().get_node_id(),
            "ip": ray.util.get_node_ip_address(),
            "pid": os.getpid(),
        }

    def reachable(self, addresses: list[str], timeout: float) -> str | None:
        """``None`` when every address (``host:port`` or ``unix:PATH``) accepts a connection
        from here, else what failed."""
        for address in addresses:
            try:
                if address.startswith("unix:"):
                    with socket.socket(socket.AF_UNIX) as s:
                        s.settimeout(timeout)
                        s.connect(address[len("unix:") :])
                else:
                    host, _, port = address.rpartition(":")
                    with socket.create_connection((host.strip("[]"), int(port)), timeout):
                        pass
            except OSError as e:
                return f"{address}: {e}"
        return None

    def start(self, spec_json: str, start_at: float) -> _Json | None:
        """Start this host's shard of the workload at ``start_at``; an error as data."""
        try:
            shard = Workload.from_json(spec_json).shard(self._index, self._count)
            self._runner = Runner(shard.starting_at(start_at)).start()
        except exceptions.RespLoadError as e:
            return _error_data(e)
        if self._mark is not None:
            self._mark.cancel()  # an earlier phase's, stopped before its start
        self._cpu_at_start = None
        self._mark = threading.Timer(max(0.0, start_at - time.time()), self._mark_start)
        self._mark.daemon = True
        self._mark.start()
        return None

    def _mark_start(self) -> None:
        self._cpu_at_start = _process_cpu()

    def poll(self, timeout: float) -> tuple[list[str], bool]:
        """The snapshots taken within ``timeout`` seconds (at least one wait), and whether
        the run is over (every snapshot taken)."""
        native = self._started()
        texts: list[str] = []
        text = native.next_snapshot(timeout)
        while text is not None:
            texts.append(text)
            text = native.next_snapshot(0.0)
        return texts, native.is_finished()

    def stop(self) -> None:
        """Ask the run to stop (it ends within ~300 ms)."""
        if self._runner is not None:
            self._started().request_stop()

    def report(self) -> _Json:
        """``{"report": JSON}`` once the run is over, or ``{"error": ...}`` if it failed."""
        try:
            report = self._runner_or_fail()._finish().to_json()
            now = _process_cpu()
            at_start = self._cpu_at_start
            return {
                "report": report,
                "process_cpu_s": now - self._cpu_start,
                "run_cpu_s": None if at_start is None else now - at_start,
            }
        except exceptions.RespLoadError as e:
            return {"error": _error_data(e)}

    def _runner_or_fail(self) -> Runner:
        if self._runner is None:
            raise exceptions.InternalError("this host was not started")
        return self._runner

    def _started(self) -> Any:
        return self._runner_or_fail()._started()


def _process_cpu() -> float:
    """This process's CPU time so far (user + system, seconds): the actor's whole cost,
    Ray's own threads included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _error_data(e: exceptions.RespLoadError) -> _Json:
    """An exception of respload as plain data, to cross from an actor to the driver."""
    attrs = {
        name: getattr(e, name)
        for name in ("path", "reason", "address", "errno", "code")
        if getattr(e, name, None) is not None
    }
    return {"type": type(e).__name__, "message": str(e), "attrs": attrs}


def _raise_error(data: _Json, who: str) -> None:
    """Raise the exception ``data`` describes, its message prefixed with the host."""
    cls = getattr(exceptions, data["type"], exceptions.RespLoadError)
    if not (isinstance(cls, type) and issubclass(cls, exceptions.RespLoadError)):
        cls = exceptions.RespLoadError
    accepted = inspect.signature(cls).parameters
    attrs = {k: v for k, v in data["attrs"].items() if k in accepted}
    raise cls(f"{who}: {data['message']}", **attrs)


_ACTOR: Any = None


def _actor_class() -> Any:
    global _ACTOR
    if _ACTOR is None:
        _ACTOR = _ray().remote(max_concurrency=4)(_Host)
    return _ACTOR


# --- what the target's addresses are --------------------------------------------------------


def _phase_specs(spec: _Json) -> list[_Json]:
    phases = spec.get("phases")
    return list(phases) if isinstance(phases, list) and phases else [spec]


def target_addresses(workload: Workload) -> list[str]:
    """Every address a run of ``workload`` connects to first: ``host:port`` of each phase's
    target (its URL, or ``host``/``port``) and cluster seeds, or ``unix:PATH``."""
    found: list[str] = []
    for phase in _phase_specs(workload.to_dict(redact=True)):
        target = phase.get("target") or {}
        url = target.get("url")
        if url:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme == "unix":
                found.append(f"unix:{parts.path}")
            else:
                host = parts.hostname or "127.0.0.1"
                found.append(f"{host}:{parts.port or 6379}")
        elif target.get("unix"):
            found.append(f"unix:{target['unix']}")
        else:
            found.append(f"{target.get('host', '127.0.0.1')}:{target.get('port', 6379)}")
        found += [s for s in target.get("cluster_seeds", []) if isinstance(s, str)]
    return list(dict.fromkeys(found))


# --- merged snapshots: the live line ---------------------------------------------------------


def merge_snapshots(snapshots: list[Snapshot]) -> Snapshot:
    """One snapshot of the hosts' snapshots of one wall-clock second (the core's
    ``Snapshot::merge``): counts and rates summed; latency percentiles from the hosts'
    interval histograms added; service time and send lag the highest host's percentiles."""
    if not snapshots:
        raise ValueError("merge_snapshots: no snapshot to merge")
    texts = [json.dumps(dataclasses.asdict(s)) for s in snapshots]
    return _merged(texts)


def _merged(texts: list[str]) -> Snapshot:
    merged = _native.merge_snapshots(texts)
    assert merged is not None  # callers pass at least one
    return Snapshot.from_json(merged)


def _second(snapshot: _Json) -> int:
    """The wall-clock second an interval began: rows of several hosts line up by it."""
    return round(float(snapshot["unix_s"]) - float(snapshot["interval_s"]))


class _Live:
    """The hosts' snapshots (JSON texts), merged per (phase, wall-clock second) once every
    host still running has sent that second or a later one."""

    def __init__(self) -> None:
        self._pending: dict[tuple[int, str], list[str]] = {}
        self._latest: dict[int, int] = {}

    def add(self, host: int, text: str, data: _Json) -> None:
        key = (_second(data), data["phase"])
        self._pending.setdefault(key, []).append(text)
        self._latest[host] = max(self._latest.get(host, key[0]), key[0])

    def ready(self, running: Iterable[int]) -> list[Snapshot]:
        """The merged snapshots no running host can add to any more (all when none runs)."""
        running = list(running)
        horizon = min((self._latest.get(h, -(2**62)) for h in running), default=2**62)
        out = []
        for key in sorted(k for k in self._pending if k[0] <= horizon):
            out.append(_merged(self._pending.pop(key)))
        return out


# --- the driver --------------------------------------------------------------------------


@dataclass
class _HostState:
    index: int
    actor: Any
    where: _Json
    snapshots: list[str]
    """The snapshots it streamed (JSON texts): its report if it is lost."""
    finished: bool = False
    lost: str | None = None
    last_answer: float = 0.0
    process_cpu_s: float | None = None
    run_cpu_s: float | None = None

    @property
    def name(self) -> str:
        """``host I (machine, node ID)``, as errors name it."""
        where = self.where
        return f"host {self.index} ({where.get('host', '?')}, node {where.get('node', '?')[:8]})"


class DistributedRun:
    """One distributed run, step by step (what :func:`run` and :func:`run_async` drive):
    ``setup()`` places the actors and checks the target from every host, ``start()`` sets
    the start instant, ``step()`` gathers snapshots, ``finish()`` merges the reports,
    ``close()`` removes the actors."""

    def __init__(
        self,
        workload: Workload,
        hosts: int,
        *,
        address: str | None,
        placement: Placement,
        cpus_per_host: float,
        start_delay: float,
    ) -> None:
        if isinstance(hosts, bool) or not isinstance(hosts, int) or hosts < 1:
            raise ValueError(f"hosts: expected a number of hosts of at least 1, not {hosts!r}")
        if placement not in _STRATEGIES:
            raise ValueError(
                f"placement: {placement!r}: expected one of {', '.join(map(repr, _STRATEGIES))}"
            )
        # Every shard is checked here, before any actor or traffic.
        for i in range(hosts):
            workload.shard(i, hosts)
        self.workload = workload
        self.count = hosts
        self.address = address
        self.placement = placement
        self.cpus = cpus_per_host
        self.start_delay = start_delay
        self.hosts: list[_HostState] = []
        self.start_at: float | None = None
        self.live = _Live()
        self.interrupted = False
        self._ray_started = False
        self._group: Any = None
        self._stopping = False
        self._failed_first: int | None = None
        self.process_cpu_s: list[float | None] = []
        self.run_cpu_s: list[float | None] = []

    # set-up

    def setup(self) -> None:
        """Connect to Ray, place one actor per host, check the target from each."""
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
            self._ray_started = True
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        if self.placement == "strict_spread" and len(nodes) < self.count:
            raise exceptions.SpecError(
                f"invalid spec at `hosts`: {self.count} hosts with placement "
                f"'strict_spread' need {self.count} Ray nodes, the cluster has {len(nodes)}: "
                "add nodes, or use placement='spread' or 'pack' to run several on one machine",
                path="hosts",
                reason=f"{self.count} hosts need {self.count} nodes for 'strict_spread'",
            )
        cpus = ray.cluster_resources().get("CPU", 0)
        fits = math.floor(cpus / self.count * 10) / 10
        if cpus < self.count * self.cpus:
            raise exceptions.SpecError(
                f"invalid spec at `cpus_per_host`: {self.count} hosts of {self.cpus:g} CPU need "
                f"{self.count * self.cpus:g} CPUs, the Ray cluster has {cpus:g}: add nodes, or "
                f"give a smaller cpus_per_host (such as {fits:g})",
                path="cpus_per_host",
                reason=f"{self.count} x {self.cpus:g} CPU is more than the cluster's {cpus:g}",
            )
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        self._group = placement_group(
            [{"CPU": self.cpus}] * self.count, strategy=_STRATEGIES[self.placement]
        )
        ready, _ = ray.wait([self._group.ready()], timeout=60)
        if not ready:
            raise exceptions.ConnectError(
                f"Ray could not place {self.count} hosts of {self.cpus} CPU "
                f"({self.placement}) within 60 s: the cluster has too few free CPUs"
            )
        run_id = uuid.uuid4().hex[:8]
        actors = [
            _actor_class()
            .options(
                name=f"respload-{run_id}-host-{i}",
                namespace="respload",
                num_cpus=self.cpus,
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self._group, placement_group_bundle_index=i
                ),
            )
            .remote(i, self.count)
            for i in range(self.count)
        ]
        wheres = ray.get([a.describe.remote() for a in actors])
        self.hosts = [_HostState(i, a, w, []) for i, (a, w) in enumerate(zip(actors, wheres))]
        addresses = target_addresses(self.workload)
        answers = ray.get([h.actor.reachable.remote(addresses, 5.0) for h in self.hosts])
        # Every host that cannot reach the target is named, not only the first.
        failed = [(h, why) for h, why in zip(self.hosts, answers) if why is not None]
        if failed:
            raise exceptions.ConnectError(
                "; ".join(f"{h.name} cannot reach the target: {why}" for h, why in failed),
                address=failed[0][1].split(": ", 1)[0],
            )

    @property
    def nodes(self) -> list[str]:
        """Each host's Ray node ID, in shard order."""
        return [str(h.where.get("node", "")) for h in self.hosts]

    def start(self, part: Workload | None = None) -> None:
        """Every host not lost starts its shard of ``part`` (default: the whole workload) at
        one instant, ``start_delay`` seconds ahead."""
        ray = _ray()
        part = self.workload if part is None else part
        self.live = _Live()
        self._failed_first = None
        for h in self.hosts:
            h.snapshots, h.finished, h.process_cpu_s, h.run_cpu_s = [], False, None, None
        self.start_at = time.time() + self.start_delay
        spec = json.dumps(part.to_dict(redact=False))
        active = self.running
        answers = ray.get([h.actor.start.remote(spec, self.start_at) for h in active])
        for h, error in zip(active, answers):
            if error is not None:
                self.stop()
                _raise_error(error, h.name)
        now = time.monotonic()
        for h in active:
            h.last_answer = now

    # the run

    @property
    def running(self) -> list[_HostState]:
        return [h for h in self.hosts if not h.finished and h.lost is None]

    def step(self) -> list[Snapshot]:
        """Wait up to a quarter second for the hosts' snapshots; return the merged ones
        that are complete. Marks hosts finished or lost."""
        ray = _ray()
        calls = {h.actor.poll.remote(_POLL_S): h for h in self.running}
        if not calls:
            return self.live.ready([])
        # Polled, the waits between in Python: a Ctrl-C that lands inside a blocking
        # `ray.wait` can be lost (seen: the driver went on for the run's whole 60 s, its
        # stack in `ray.wait`); one that lands in `time.sleep` always raises.
        deadline = time.monotonic() + _POLL_S + 2
        while True:
            ready, _ = ray.wait(list(calls), num_returns=len(calls), timeout=0)
            if len(ready) == len(calls) or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        now = time.monotonic()
        for ref in ready:
            h = calls[ref]
            try:
                texts, finished = ray.get(ref)
            except ray.exceptions.RayError as e:
                h.lost = f"{h.name} was lost mid-run: {type(e).__name__}: {_first_line(e)}"
                continue
            h.last_answer = now
            for text in texts:
                h.snapshots.append(text)
                self.live.add(h.index, text, json.loads(text))
            h.finished = finished
            early = self.start_at is not None and time.time() < self.start_at
            if finished and early and self.running and not self._stopping:
                self._failed_first = h.index
                # It ended before sending anything: it failed to connect (its error comes
                # with its report). The others stop too, before the start if in time.
                self.stop()
        for h in self.running:
            if now - h.last_answer > _SILENT_S:
                h.lost = f"{h.name} was lost mid-run: no answer for {_SILENT_S:.0f} s"
                with contextlib.suppress(Exception):
                    ray.kill(h.actor, no_restart=True)
        return self.live.ready(h.index for h in self.running)

    def stop(self) -> None:
        """Ask every host still running to stop (each stops within ~300 ms)."""
        self._stopping = True
        for h in self.running:
            with contextlib.suppress(Exception):
                h.actor.stop.remote()

    def wait_stopped(self, timeout: float = 3.0) -> None:
        """Step until every host has finished (or is lost) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while self.running and time.monotonic() < deadline:
            self.step()
        for h in self.running:
            h.lost = f"{h.name} did not stop within {timeout:.0f} s"

    def finish(self) -> tuple[Report, list[_Json]]:
        """The merged report and the hosts' own reports (JSON dicts, a lost host's made of
        what it streamed). Raises the first host's error when every host failed, or when one
        failed before the start instant (no traffic was sent)."""
        ray = _ray()
        calls = {h.index: h.actor.report.remote() for h in self.hosts if h.lost is None}
        reports: dict[int, _Json] = {}
        errors: dict[int, _Json] = {}
        for h in self.hosts:
            answer = None
            if h.index in calls:
                try:
                    answer = ray.get(calls[h.index], timeout=30)
                except ray.exceptions.RayError as e:
                    h.lost = f"{h.name} was lost: {type(e).__name__}: {_first_line(e)}"
            if answer is not None and "report" in answer:
                reports[h.index] = json.loads(answer["report"])
                h.process_cpu_s = answer["process_cpu_s"]
                h.run_cpu_s = answer.get("run_cpu_s")
            elif answer is not None:
                errors[h.index] = answer["error"]
        if errors:
            # A run that could not start on a host (one that fails once started still has
            # a report, with its error) fails the whole run: the error of the host that
            # failed first, not of those stopped because of it.
            failed = self._failed_first
            first = failed if failed is not None and failed in errors else min(errors)
            _raise_error(errors[first], self.hosts[first].name)
        if not reports:
            raise exceptions.InternalError(
                "every host was lost: " + "; ".join(h.lost or "" for h in self.hosts)
            )
        longest = max(reports.values(), key=lambda r: len(r["phases"]))
        template = json.dumps(longest)
        texts: dict[int, str] = {}
        for h in self.hosts:
            if h.lost is not None:
                name = h.where.get("host", f"host-{h.index}")
                texts[h.index] = _native.lost_host_report(
                    template, h.index, name, h.snapshots, h.lost
                )
            elif h.index in reports:
                text = json.dumps(reports[h.index])
                if len(reports[h.index]["phases"]) < len(longest["phases"]):
                    # Stopped early: the phases it never reached, empty, to merge by.
                    text = _native.with_phases_of(text, template)
                texts[h.index] = text
        texts = dict(sorted(texts.items()))
        merged = Report.from_json(_native.merge_reports(list(texts.values())))
        self.process_cpu_s = [h.process_cpu_s for h in self.hosts]
        self.run_cpu_s = [h.run_cpu_s for h in self.hosts]
        return merged, [json.loads(t) for t in texts.values()]

    def close(self) -> None:
        """Remove the actors and the placement group; shut Ray down if this run started it."""
        ray = _ray()
        for h in self.hosts:
            with contextlib.suppress(Exception):
                ray.kill(h.actor, no_restart=True)
        if self._group is not None:
            from ray.util.placement_group import remove_placement_group

            with contextlib.suppress(Exception):
                remove_placement_group(self._group)
                _wait_removed(ray, self._group)
        if self._ray_started:
            ray.shutdown()


def _wait_removed(ray: Any, group: Any, timeout_s: float = 10.0) -> None:
    """Wait until Ray says `group` is removed: removal is asynchronous, and a run placed
    right after would otherwise find its CPUs still held and be placed on the nodes freed
    first (a "spread" run on fewer nodes than it could have)."""
    from ray.util import placement_group_table

    deadline = time.monotonic() + timeout_s
    while placement_group_table(group).get("state") != "REMOVED":
        if time.monotonic() >= deadline:
            return
        time.sleep(0.02)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0]


@dataclass
class Distributed:
    """A finished distributed run: the merged report and each host's own report (JSON
    dicts, in shard order; a lost host's made of the snapshots it streamed)."""

    report: Report
    host_reports: list[_Json]
    process_cpu_s: list[float | None]
    """Each host's actor process CPU time (user + system seconds, from the actor's start to
    its report: the run, Ray's own threads, and the waits for each start instant); ``None``
    for a lost host."""
    run_cpu_s: list[float | None] = dataclasses.field(default_factory=list)
    """Each host's actor process CPU time while it ran (from each phase's start instant to
    its report, phases added): what the runs cost the host, Ray's own threads included, the
    waits before the start left out; ``None`` for a lost host."""
    nodes: list[str] = dataclasses.field(default_factory=list)
    """Each host's Ray node ID, in shard order: where ``placement`` put its actor."""


def _drive(
    run: DistributedRun, deliver: ProgressCallback | None, parts: list[Workload] | None = None
) -> list[Distributed]:
    """Run the workload (or each of ``parts`` in turn, every host starting each at one
    instant: a barrier between them) on this thread, calling ``deliver`` with each merged
    snapshot. Stopped (``deliver`` returned ``False``, or a threshold stopped a part), it
    starts no further part. On ``KeyboardInterrupt`` every host stops, and the exception
    carries the partial merged report (``exc.report``), the hosts' own
    (``exc.host_reports``) and, for parts, every part's so far (``exc.parts``, and their
    merged reports as ``exc.reports``)."""
    done: list[Distributed] = []
    # Whether the part started last is in `done` (an interrupt then has no partial part).
    reported = True
    try:
        run.setup()
        for part in parts or [run.workload]:
            if run._stopping:
                if not done:  # cancelled while the actors were placed
                    raise KeyboardInterrupt
                break
            reported = False
            run.start(part)
            while run.running:
                for snapshot in run.step():
                    if deliver is not None and deliver(snapshot) is False and not run._stopping:
                        run.stop()
            report, own = run.finish()
            done.append(Distributed(report, own, run.process_cpu_s, run.run_cpu_s, run.nodes))
            reported = True
            if report.stopped_by is not None:
                break  # as a run: the phases after a threshold's stop do not run
        return done
    except BaseException as exc:
        if run.start_at is not None and run.running:
            run.stop()
            with contextlib.suppress(BaseException):
                run.wait_stopped()
        if isinstance(exc, KeyboardInterrupt):
            merged, own = None, None
            if run.start_at is not None and not reported:
                with contextlib.suppress(Exception):
                    merged, own = run.finish()
            exc.report = merged  # type: ignore[attr-defined]
            exc.host_reports = own  # type: ignore[attr-defined]
            partial = (
                []
                if merged is None
                else [Distributed(merged, own or [], run.process_cpu_s, run.run_cpu_s, run.nodes)]
            )
            exc.parts = done + partial  # type: ignore[attr-defined]
            exc.reports = [d.report for d in exc.parts]  # type: ignore[attr-defined]
        raise
    finally:
        run.close()


def _make_run(
    workload: WorkloadLike | None,
    hosts: int,
    address: str | None,
    placement: Placement,
    cpus_per_host: float,
    start_delay: float,
    fields: dict[str, Any],
) -> DistributedRun:
    return DistributedRun(
        to_workload(workload, fields),
        hosts,
        address=address,
        placement=placement,
        cpus_per_host=cpus_per_host,
        start_delay=start_delay,
    )


def run_hosts(
    workload: WorkloadLike | None = None,
    /,
    *,
    hosts: int,
    address: str | None = None,
    placement: Placement = "strict_spread",
    on_progress: ProgressCallback | None = None,
    cpus_per_host: float = 1.0,
    start_delay: float = 2.0,
    **fields: Any,
) -> Distributed:
    """:func:`run`, returning each host's own report beside the merged one (what ``respload
    distributed`` prints and saves); with several phases, each host's phases joined into its
    shard of the whole workload, which :func:`merge_reports` merges as a run's shards."""
    _check_progress(on_progress)
    run = _make_run(workload, hosts, address, placement, cpus_per_host, start_delay, fields)
    return _drive_joined(run, on_progress)


def run(
    workload: WorkloadLike | None = None,
    /,
    *,
    hosts: int,
    address: str | None = None,
    placement: Placement = "strict_spread",
    on_progress: ProgressCallback | None = None,
    cpus_per_host: float = 1.0,
    start_delay: float = 2.0,
    **fields: Any,
) -> Report:
    """Run ``workload`` from ``hosts`` hosts of a Ray cluster and return the merged report.

    ``workload`` is what :func:`respload.run` takes (a :class:`Workload`, a dict, a spec
    file; keyword ``fields`` override it). ``address`` is the Ray cluster's
    (``"ray://head:10001"``, ``"auto"``); ``None`` uses the cluster ``ray.init()`` finds
    (``$RAY_ADDRESS``, a local ``ray start``) or starts one on this machine, and shuts down
    what it started. When Ray is already initialized in this process, that cluster is used.
    ``placement`` puts one actor (``cpus_per_host`` CPUs) per host; ``start_delay`` is how
    far ahead the start instant is set. ``on_progress(snapshot)`` is called on this thread
    with one merged :class:`Snapshot` per wall-clock second; returning ``False`` stops every
    host (the report is then partial, ``interrupted``).

    A workload of several phases has a barrier at each phase boundary: every host runs a
    phase as a run of its own, all starting it at one instant once every host has finished
    the one before, and the phases' merged reports are joined into one report, as a run of
    the whole workload gives (``Report::join`` in the core): the run's ``[thresholds]`` are
    judged on it (with ``abort_on_fail`` they are refused, as no host sees the phases
    together while they run), each phase's on that phase.

    Raises :class:`SpecError` before any actor when the workload cannot be split into
    ``hosts`` shards (or ``strict_spread`` has too few nodes), :class:`ConnectError` naming
    each host that cannot reach the target, before any traffic. A host lost mid-run is
    marked in the report (see the module's documentation). On Ctrl-C every host stops
    within a second and the ``KeyboardInterrupt`` propagates with the partial report (the
    phases so far, the last one partial, marked interrupted) as ``exc.report``.
    """
    return run_hosts(
        workload,
        hosts=hosts,
        address=address,
        placement=placement,
        on_progress=on_progress,
        cpus_per_host=cpus_per_host,
        start_delay=start_delay,
        **fields,
    ).report


async def run_async(
    workload: WorkloadLike | None = None,
    /,
    *,
    hosts: int,
    address: str | None = None,
    placement: Placement = "strict_spread",
    on_progress: ProgressCallback | None = None,
    cpus_per_host: float = 1.0,
    start_delay: float = 2.0,
    **fields: Any,
) -> Report:
    """:func:`run` for asyncio: the driving happens on a worker thread, so the event loop
    keeps running. ``on_progress`` is called on the event loop's thread; an exception from
    it stops every host and propagates. Cancelling the task stops every host before the
    cancellation propagates."""
    _check_progress(on_progress)
    run = _make_run(workload, hosts, address, placement, cpus_per_host, start_delay, fields)
    done = await on_a_thread(lambda progress: _drive_joined(run, progress), run.stop, on_progress)
    return done.report


def _phase_workloads(workload: Workload) -> list[Workload]:
    """Each phase of ``workload`` as a workload of its own (a phase is a whole workload:
    target, load, keys, values, commands; its ``thresholds`` become that run's)."""
    return [Workload.from_dict(p) for p in _phase_specs(workload.to_dict(redact=False))]


def _joined_parts(workload: Workload) -> list[Workload] | None:
    """The phases :func:`run` runs one by one, with a barrier between them; ``None`` for a
    workload of one phase (run whole). The run's thresholds with ``abort_on_fail`` raise
    :class:`SpecError`: each phase runs on its own, so none could stop on them."""
    spec = workload.to_dict(redact=False)
    if not spec.get("phases"):
        return None
    if (spec.get("thresholds") or {}).get("abort_on_fail"):
        raise exceptions.SpecError(
            "invalid spec at `thresholds.abort_on_fail`: a distributed run of several phases "
            "runs each phase on its own and judges the run's thresholds on the joined report "
            "once every phase ran, so none can stop the run while it goes: give abort_on_fail "
            "to the phases' thresholds (`phases[i].thresholds`)",
            path="thresholds.abort_on_fail",
            reason="the run's thresholds are judged once every phase ran",
        )
    return _phase_workloads(workload)


def _join(workload: Workload, parts: list[Distributed]) -> Distributed:
    """The phases' distributed runs joined into one, as a run of the whole ``workload``
    gives it: the merged reports joined, and each host's own reports joined into its shard
    of the whole (what ``respload merge`` merges again). A run stopped before its last
    phase ends with that phase's report, marked interrupted."""
    whole = workload._native.to_json(True)
    early = len(parts) < len(_phase_specs(workload.to_dict()))

    def texts(reports: list[_Json]) -> list[str]:
        last = reports[-1]
        # Stopped between phases (by on_progress): the run did not end.
        if early and not (last["interrupted"] or last.get("stopped_by") or last.get("error")):
            reports = [*reports[:-1], {**last, "interrupted": True}]
        return [json.dumps(r) for r in reports]

    merged = [json.loads(p.report.to_json()) for p in parts]
    report = Report.from_json(_native.join_reports(whole, texts(merged)))
    own = [
        json.loads(_native.join_reports(whole, texts([p.host_reports[i] for p in parts])))
        for i in range(len(parts[0].host_reports))
    ]
    # An actor's process CPU counts from its start: the last phase's is the whole run's; its
    # CPU while running is each phase's, added.
    ran: list[float | None] = []
    for i in range(len(parts[-1].run_cpu_s)):
        each = [p.run_cpu_s[i] for p in parts]
        ran.append(sum(x for x in each if x is not None) if None not in each else None)
    return Distributed(report, own, parts[-1].process_cpu_s, ran, parts[-1].nodes)


def _drive_joined(run: DistributedRun, deliver: ProgressCallback | None) -> Distributed:
    """:func:`_drive` of the whole workload, a barrier at each phase boundary, the phases
    joined; on ``KeyboardInterrupt`` the phases so far joined as ``exc.report`` and
    ``exc.host_reports``."""
    parts = _joined_parts(run.workload)
    if parts is None:
        return _drive(run, deliver)[0]
    try:
        done = _drive(run, deliver, parts)
    except KeyboardInterrupt as exc:
        so_far = getattr(exc, "parts", [])
        # The interrupt propagates whatever happens here; at worst with the last phase's
        # merged report only.
        with contextlib.suppress(exceptions.RespLoadError):
            if so_far and all(p.host_reports for p in so_far):
                joined = _join(run.workload, so_far)
                exc.report = joined.report  # type: ignore[attr-defined]
                exc.host_reports = joined.host_reports  # type: ignore[attr-defined]
        raise
    return _join(run.workload, done)


def phases_of(workload: Workload) -> list[Workload]:
    """Each phase of ``workload`` as a workload of its own (a phase is a whole workload:
    target, load, keys, values, commands; its ``thresholds`` become that run's). Thresholds
    on the run's results (the measured phases together) raise :class:`SpecError`: no report
    of :func:`run_phases` holds the phases together to judge them on."""
    spec = workload.to_dict(redact=False)
    if spec.get("phases") and spec.get("thresholds"):
        raise exceptions.SpecError(
            "invalid spec at `thresholds`: run_phases runs each phase as a run of its own, so "
            "no report it returns holds the measured phases together to judge the run's "
            "thresholds on: give the limits to the phases that must meet them "
            "(`phases[i].thresholds`), or use run(), which joins the phases into one report",
            path="thresholds",
            reason="thresholds on the whole run, and each phase runs on its own",
        )
    return _phase_workloads(workload)


def run_phases(
    workload: WorkloadLike | None = None,
    /,
    *,
    hosts: int,
    address: str | None = None,
    placement: Placement = "strict_spread",
    on_progress: ProgressCallback | None = None,
    cpus_per_host: float = 1.0,
    start_delay: float = 2.0,
    **fields: Any,
) -> list[Report]:
    """:func:`run` with a barrier at each phase boundary: the hosts run each phase of
    ``workload`` as a run of its own, all starting it at one instant once every host has
    finished the one before (a phase that reads what a populate phase wrote finds every key
    written), on the same actors. Returns one merged report per phase, in order.

    Returning ``False`` from ``on_progress`` stops the phase running, and no later phase
    starts (the list then ends with that phase's partial report), nor after a phase that a
    threshold with ``abort_on_fail`` stopped. On Ctrl-C every host stops
    and the ``KeyboardInterrupt`` carries the phases' reports so far, the last one partial,
    as ``exc.reports`` (and that last one as ``exc.report``). A host lost in one phase is
    marked lost in that phase's report and every later one."""
    _check_progress(on_progress)
    run = _make_run(workload, hosts, address, placement, cpus_per_host, start_delay, fields)
    return [d.report for d in _drive(run, on_progress, phases_of(run.workload))]
