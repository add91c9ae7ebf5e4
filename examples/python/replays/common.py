"""What every replay shares: where the scenario files are, running one, and the verdict."""

from __future__ import annotations

import ipaddress
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import respload
from respload import PhaseReport, Report
from respload.testing import RedisServer

T = TypeVar("T")

#: ``examples/scenarios/``.
SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "scenarios"


def spec_path(name: str) -> Path:
    """The scenario file of ``name`` (``managed-cache-guide`` ...)."""
    return SCENARIOS_DIR / f"{name}.toml"


class DestructiveDrillError(ValueError):
    """A scenario would stop a server that is not on this machine, and nobody said it may."""


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine: a loopback address or ``localhost`` (a host name is
    not resolved: any other name counts as another machine)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def destructive_drills(workload: respload.Workload) -> list[str]:
    """The drills of ``workload`` that stop a server for good (``failover`` with ``mode =
    "kill"``: ``SHUTDOWN NOSAVE``, and respload restarts nothing) on a target that is not on
    this machine, one line each (``phase failover: failover kill on redis://cache:10000``;
    passwords redacted)."""
    found = []
    for p in workload.to_dict()["phases"]:
        target = p.get("target", {})
        url = target.get("url")
        if url is None or is_loopback(url):
            continue  # a Unix socket, or a loopback address: this machine's own server
        for e in p.get("events", []):
            if e.get("drill") == "failover" and e.get("mode") == "kill":
                found.append(f"phase {p['name']}: failover kill on {url}")
    return found


def run_scenario(
    name: str,
    scale: str | None = "ci",
    variables: dict[str, Any] | None = None,
    *,
    allow_destructive: bool = False,
) -> Report:
    """Run one scenario file at ``scale`` (``None``: the published scale) with ``variables``
    (the servers' URLs, ...) set. A drill that would stop a server for good on another machine
    (a ``kill`` failover against a target that is not a loopback address) raises
    :class:`DestructiveDrillError` before any traffic unless ``allow_destructive``."""
    workload = respload.Workload.from_file(spec_path(name), scale=scale, vars=variables or {})
    drills = destructive_drills(workload)
    if drills and not allow_destructive:
        raise DestructiveDrillError(
            f"{name}: refusing to stop a server that is not on this machine: "
            + "; ".join(drills)
            + ". It would be shut down for good (SHUTDOWN NOSAVE; nothing restarts it). Give "
            "--allow-destructive (allow_destructive=True) if that is the plan, or leave "
            "failover_mode at its default, cluster-failover (a coordinated failover)."
        )
    return respload.run(workload)


@dataclass
class Verdict:
    """What a replay showed: what it judged (asserted, each with its figure), what it only
    printed (figures shown beside the published ones, not asserted), and what did not hold."""

    scenario: str
    judged: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether everything the replay exists to show held."""
        return not self.failures

    def expect(self, holds: bool, what: str) -> None:
        """Record ``what`` as a failure unless it ``holds``."""
        if not holds:
            self.failures.append(what)

    def judge(self, what: str) -> None:
        """Name what the replay asserted (its ``expect`` calls), with the figure it judged."""
        self.judged.append(what)

    def need(self, value: T | None, what: str) -> T | None:
        """A figure the scenario exists to show: missing, it is a failure, not a blank."""
        self.expect(value is not None, f"{what}: missing from the report, which the scenario needs")
        return value

    def line(self) -> str:
        """One line: PASS or FAIL, the scenario, what was judged, what is printed only, and
        any failures."""
        head = (
            f"{'PASS' if self.ok else 'FAIL'} {self.scenario}: judged: {'; '.join(self.judged)}"
            f" | printed only: {'; '.join(self.figures) or 'nothing'}"
        )
        return head if self.ok else head + " | FAILED: " + "; ".join(self.failures)


def phase(report: Report, name: str) -> PhaseReport:
    """The phase called ``name`` (a scenario file's phase names are fixed)."""
    for p in report.phases:
        if p.name == name:
            return p
    raise KeyError(f"no phase {name!r} in the report: {[p.name for p in report.phases]}")


def phases(report: Report, prefix: str) -> list[PhaseReport]:
    """The repeats of a phase: ``NAME #1`` ... ``NAME #N``."""
    return [p for p in report.phases if p.name.startswith(prefix + " #")]


def thresholds_held(v: Verdict, report: Report) -> None:
    """The scenario file's thresholds held (every request of the phases the publication
    judged succeeded: ``error_rate = 0``), as the report's own verdict says: each one failed
    is named with the figure it was judged on."""
    v.expect(bool(report.thresholds), "the report lists no thresholds")
    for t in report.thresholds:
        v.expect(t.passed, f"threshold {t.name}: {t.value} (limit {t.limit:g})")
    n = len(report.thresholds)
    v.judge(f"{n} threshold{'' if n == 1 else 's'} held (no request failed where judged)")


def wait_in_sync(replica: RedisServer, timeout: float = 30.0) -> None:
    """Wait until ``replica`` says its link to the primary is up and no sync is running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = replica.info("replication")
        if info.get("master_link_status") == "up" and info.get("master_sync_in_progress") == "0":
            return
        time.sleep(0.05)
    raise RuntimeError(f"replica {replica.address} did not sync within {timeout} s")


def dbsize(server: RedisServer) -> int:
    """How many keys ``server`` holds."""
    n = server.call("DBSIZE")
    if not isinstance(n, int):
        raise TypeError(f"DBSIZE answered {n!r}")
    return n
