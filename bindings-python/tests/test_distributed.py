"""Distributed runs on a real local Ray cluster of 3 nodes (issue 26), against a real
redis-server: what the server counted, the merged histograms, the lined-up timeline, the
synchronized start, a lost host, Ctrl-C, and the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

import respload
import respload.distributed
from respload import testing
from respload.cli import main as cli_main
from respload.distributed import Placement
from respload.testing import RedisServer, free_port, redis_server

HOSTS = 3
# A quicker start than the default 2 s: the actors are up by then on this machine.
START = {"start_delay": 1.5}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A Ray cluster of 3 nodes on this machine, started once for the module (~6 s)."""
    with testing.ray_cluster(HOSTS) as address:
        yield address


@pytest.fixture
def server() -> Iterator[RedisServer]:
    with redis_server() as s:
        yield s


def spec(server: RedisServer, **fields: Any) -> dict[str, Any]:
    return {"target": server.target(), "seed": 7, **fields}


def sets_at_1500(server: RedisServer, duration: str) -> dict[str, Any]:
    """SETs at 1,500 requests/s over 3 connections (one per host) for ``duration``."""
    return spec(
        server,
        load={"connections": 3, "rate": 1500, "duration": duration},
        commands=[{"name": "set"}],
    )


def added_histograms(reports: list[dict[str, Any]]) -> Any:
    """The hosts' total histograms added with the hdrhistogram package."""
    added = respload.decode_histogram(reports[0]["totals"]["histogram"])
    for r in reports[1:]:
        added.add(respload.decode_histogram(r["totals"]["histogram"]))
    return added


def test_a_request_budget_from_3_hosts_is_what_the_server_counted(
    ray_cluster: str, server: RedisServer
) -> None:
    done = respload.distributed.run_hosts(
        spec(
            server,
            load={"connections": 3, "requests": 3001},
            keys={"prefix": "d:", "range": [0, 99]},
            commands=[{"name": "set"}, {"name": "get", "weight": 2}],
        ),
        hosts=HOSTS,
        **START,
    )
    merged, own = done.report, done.host_reports
    # INFO commandstats: every request once, none lost or counted twice.
    assert merged.totals.ops == 3001 == server.calls("set") + server.calls("get")
    assert merged.commands["SET"].ops == server.calls("set")
    assert merged.commands["GET"].ops == server.calls("get")
    assert [h.shard for h in merged.hosts] == [0, 1, 2]
    assert [h.ops for h in merged.hosts] == [r["totals"]["ops"] for r in own]
    # Each host's seed (its shard's, from the workload's) is kept, so its part can be rerun.
    assert [h.seed for h in merged.hosts] == [r["seed"] for r in own]
    assert len({h.seed for h in merged.hosts}) == HOSTS
    assert sorted(h.ops for h in merged.hosts) == [1000, 1000, 1001]
    assert not merged.interrupted
    assert merged.workload["load"]["requests"] == 3001
    # The percentiles of the hosts' histograms added by the hdrhistogram package.
    added = added_histograms(own)
    assert added.get_total_count() == 3001
    max_ns = max(round(r["totals"]["latency_ms"]["max"] * 1e6) for r in own)
    lat = merged.totals.latency_ms
    for q, got in ((50, lat.p50), (99, lat.p99), (99.9, lat.p99_9)):
        assert got == min(added.get_value_at_percentile(q), max_ns) / 1e6, q
    # The max is exact (the hosts' own maxima), where the added histogram's is the top of a
    # bucket: never below it, and in the same bucket.
    assert lat.max == max_ns / 1e6
    assert added.get_highest_equivalent_value(max_ns) == added.get_max_value()
    # One synchronized start: every host's skew reported, and small on one machine.
    assert len(merged.hosts) == HOSTS
    assert all(0 <= h.start_skew_ms < 250 for h in merged.hosts), merged.hosts
    assert all(r["start_at"] == own[0]["start_at"] for r in own)


def test_3_hosts_populating_write_every_key_exactly_once(
    ray_cluster: str, server: RedisServer
) -> None:
    # The asyncio variant: the same run, awaited.
    report = asyncio.run(
        respload.distributed.run_async(
            spec(
                server,
                load={"connections": 3, "requests": "all_keys"},
                keys={"prefix": "p:", "range": [0, 2999], "distribution": "sequential"},
                commands=[{"name": "set"}],
            ),
            hosts=HOSTS,
            **START,
        )
    )
    assert report.totals.ops == 3000 == server.calls("set")
    assert sorted(h.ops for h in report.hosts) == [1000, 1000, 1000]
    # 3,000 SETs leaving 3,000 keys of the range: none written twice, none missed.
    assert server.call("DBSIZE") == 3000
    assert server.call("EXISTS", "p:0", "p:1999", "p:2000", "p:2999") == 4
    assert server.call("EXISTS", "p:3000") == 0


def two_phases(server: RedisServer, keys: int, read: dict[str, Any]) -> dict[str, Any]:
    """Populate keys 0..keys-1 in order, then a measured phase of GETs on them (``read``:
    its load)."""
    key_range = {"prefix": "j:", "range": [0, keys - 1]}
    return spec(
        server,
        phases=[
            {
                "name": "populate",
                "load": {"connections": 3, "requests": "all_keys"},
                "keys": {**key_range, "distribution": "sequential"},
                "commands": [{"name": "set"}],
            },
            {
                "name": "measure",
                "load": {"connections": 3, **read},
                "keys": key_range,
                "commands": [{"name": "get"}],
                "thresholds": {"error_rate": 0},
            },
        ],
    )


def test_run_phases_puts_a_barrier_at_each_phase_boundary(
    ray_cluster: str, server: RedisServer
) -> None:
    workload = two_phases(server, 6000, {"requests": 3000})
    reports = respload.distributed.run_phases(workload, hosts=HOSTS, **START)
    assert [r.phases[0].name for r in reports] == ["populate", "measure"]
    populate, read = reports
    assert populate.totals.ops == 6000 == server.calls("set")
    # Every host finished writing before any read: not one GET missed.
    assert read.totals.ops == 3000 == server.calls("get")
    assert read.totals.hits == 3000
    # The read phase's instant was set once the last reply of the populate phase was in.
    last_reply = max(row.unix_s for row in populate.timeline)
    assert read.start_at is not None
    assert read.start_at > last_reply
    assert [h.shard for h in read.hosts] == [0, 1, 2]
    assert all(0 <= h.start_skew_ms < 250 for h in read.hosts)


def test_run_joins_the_phases_run_with_a_barrier_into_one_report(
    ray_cluster: str, server: RedisServer
) -> None:
    workload = two_phases(server, 6000, {"requests": 3000})
    # The run's limits, on the phases together: one that holds, one that cannot.
    workload["thresholds"] = {"commands": {"GET": {"p99_ms": 60_000}}, "max_ms": 1e-6}
    report = respload.distributed.run(workload, hosts=HOSTS, **START)
    assert [p.name for p in report.phases] == ["populate", "measure"]
    populate, measure = report.phases
    # The populate phase wrote every key of its range exactly once.
    assert server.call("DBSIZE") == 6000
    assert populate.totals.ops == 6000 == server.calls("set")
    # The barrier: every host had written before any read, so not one GET missed.
    assert measure.totals.ops == 3000 == server.calls("get")
    assert measure.totals.hits == 3000
    # One report of the whole run: its totals, per command, timeline, hosts.
    assert report.totals.ops == 9000
    assert report.commands["SET"].ops == 6000
    assert report.commands["GET"].ops == 3000
    assert report.totals.errors == 0
    assert sum(row.ops for row in report.timeline) == 9000
    assert report.duration_s == pytest.approx(populate.duration_s + measure.duration_s)
    assert [h.shard for h in report.hosts] == [0, 1, 2]
    assert sum(h.ops for h in report.hosts) == 9000
    assert report.workload["phases"][1]["name"] == "measure"
    assert not report.interrupted
    # The run's thresholds judged on the joined figures, the phase's on the phase.
    judged = {t.name: t for t in report.thresholds}
    assert list(judged) == ["max_ms", "commands.GET.p99_ms", "phases.measure.error_rate"]
    assert judged["commands.GET.p99_ms"].passed
    assert judged["commands.GET.p99_ms"].value == report.commands["GET"].latency_ms.p99
    assert not judged["max_ms"].passed
    assert judged["max_ms"].value == report.totals.latency_ms.max
    assert judged["phases.measure.error_rate"].passed
    assert not report.passed


def test_ctrl_c_in_a_later_phase_gives_the_phases_so_far_joined(
    ray_cluster: str, server: RedisServer
) -> None:
    def interrupt(s: respload.Snapshot) -> None:
        if s.phase == "measure" and s.measured and s.t >= 1:
            raise KeyboardInterrupt

    workload = two_phases(server, 3000, {"rate": 900, "duration": "60s"})
    with pytest.raises(KeyboardInterrupt) as caught:
        respload.distributed.run(workload, hosts=HOSTS, on_progress=interrupt, **START)
    report: respload.Report = caught.value.report  # type: ignore[attr-defined]
    assert [p.name for p in report.phases] == ["populate", "measure"]
    assert report.interrupted
    assert not report.phases[0].interrupted
    assert report.phases[0].totals.ops == 3000 == server.call("DBSIZE")
    assert report.phases[1].interrupted
    assert 0 < report.phases[1].totals.ops <= server.calls("get")
    assert report.totals.ops == 3000 + report.phases[1].totals.ops
    own = caught.value.host_reports  # type: ignore[attr-defined]
    assert [len(r["phases"]) for r in own] == [2, 2, 2]


def test_stopping_in_the_first_phase_starts_no_later_one(
    ray_cluster: str, server: RedisServer
) -> None:
    workload = two_phases(server, 3000, {"requests": 600})
    workload["phases"][0]["load"] = {"connections": 3, "rate": 900, "duration": "60s"}

    def stop(s: respload.Snapshot) -> bool:
        return not (s.measured and s.t >= 1)

    report = respload.distributed.run(workload, hosts=HOSTS, on_progress=stop, **START)
    assert [p.name for p in report.phases] == ["populate"]
    assert report.interrupted
    assert not report.passed
    assert server.calls("get") == 0
    assert 0 < report.totals.ops <= server.calls("set")


def test_run_refuses_the_runs_abort_on_fail_for_several_phases() -> None:
    phases = [{"name": "a"}, {"name": "b"}]
    stop = {"phases": phases, "thresholds": {"p99_ms": 5, "abort_on_fail": True}}
    with pytest.raises(respload.SpecError, match=r"phases\[i\]\.thresholds") as e:
        respload.distributed.run(stop, hosts=HOSTS)
    assert e.value.path == "thresholds.abort_on_fail"


def test_run_phases_judges_each_phase_on_its_own_thresholds() -> None:
    phases = [{"name": "a", "thresholds": {"error_rate": 0}}, {"name": "b"}]
    w = respload.Workload.from_dict({"phases": phases})
    each = respload.distributed.phases_of(w)
    assert [p.to_dict().get("thresholds") for p in each] == [{"error_rate": 0.0}, None]
    # The run's thresholds need a report of the phases together, which run_phases never has.
    whole = respload.Workload.from_dict({"phases": phases, "thresholds": {"p99_ms": 5}})
    with pytest.raises(respload.SpecError, match=r"phases\[i\]\.thresholds") as e:
        respload.distributed.phases_of(whole)
    assert e.value.path == "thresholds"


def test_an_open_loop_rate_is_achieved_and_the_timeline_lines_up(
    ray_cluster: str, server: RedisServer
) -> None:
    live: list[respload.Snapshot] = []
    done = respload.distributed.run_hosts(
        spec(
            server,
            load={"connections": 3, "rate": 3000, "duration": "3s"},
            output={"interval_histograms": True},
            commands=[{"name": "set"}],
        ),
        hosts=HOSTS,
        on_progress=live.append,
        **START,
    )
    merged, own = done.report, done.host_reports
    assert merged.totals.ops_per_sec == pytest.approx(3000, rel=0.01)
    assert merged.totals.ops == server.calls("set")
    # Rows line up by wall-clock second: the k-th full row of the merged timeline is the sum
    # of every host's k-th full row; rows and totals agree.
    full = [r for r in merged.timeline if not r.partial]
    hosts_full = [[r for r in o["timeline"] if not r.get("partial")] for o in own]
    assert len(full) == 3 == max(len(rows) for rows in hosts_full)
    for k, row in enumerate(full):
        assert row.ops == sum(rows[k]["ops"] for rows in hosts_full if k < len(rows))
        assert row.target_rate == pytest.approx(3000)
    assert sum(r.ops for r in merged.timeline) == merged.totals.ops
    # The live line: one merged snapshot per second holding every host's.
    measured = [s for s in live if s.measured]
    assert sum(s.ops for s in measured) == merged.totals.ops
    steady = [s for s in measured if not s.partial]
    assert len(steady) == 3
    assert all(s.connections == 3 for s in steady)
    assert all(s.ops_per_sec == pytest.approx(3000, rel=0.05) for s in steady)
    # Each interval's merged p99 is that of the hosts' interval histograms added.
    row_hist = respload.decode_histogram(steady[1].histogram)
    assert row_hist.get_total_count() == steady[1].ops
    assert all(0 <= h.start_skew_ms < 100 for h in merged.hosts), merged.hosts


def _host_actor(index: int) -> Any:
    """The actor of host ``index`` of the run going on."""
    names = [
        a["name"]
        for a in ray.util.list_named_actors(all_namespaces=True)
        if a["namespace"] == "respload" and a["name"].endswith(f"-host-{index}")
    ]
    assert len(names) == 1, names
    return ray.get_actor(names[0], namespace="respload")


def _kill_host(index: int) -> None:
    """Kill the actor of host ``index`` of the run going on (as a node lost would)."""
    ray.kill(_host_actor(index), no_restart=True)


def _gone(pid: int, within: float) -> bool:
    """Whether process ``pid`` has exited (and been reaped) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        with contextlib.suppress(FileNotFoundError):
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True  # dead, its parent yet to reap it
        time.sleep(0.05)
    return False


def _hang_host(index: int) -> int:
    """Stop the process of host ``index``'s actor with SIGSTOP (a host that hangs: neither
    dead nor answering, as a frozen VM or a network partition); its pid."""
    pid = int(ray.get(_host_actor(index).__ray_call__.remote(lambda _self: os.getpid()), timeout=5))
    os.kill(pid, signal.SIGSTOP)
    return pid


def test_a_host_lost_mid_run_is_marked_failed_and_the_others_kept(
    ray_cluster: str, server: RedisServer
) -> None:
    killed: list[float] = []

    def kill_on_second(s: respload.Snapshot) -> None:
        if s.measured and s.t >= 2 and not killed:
            _kill_host(1)
            killed.append(time.time())

    done = respload.distributed.run_hosts(
        sets_at_1500(server, "5s"),
        hosts=HOSTS,
        on_progress=kill_on_second,
        **START,
    )
    merged, own = done.report, done.host_reports
    assert killed
    lost = merged.hosts[1]
    assert lost.interrupted
    assert lost.error is not None
    assert "host 1" in lost.error
    assert "lost" in lost.error
    # What it had sent before: two seconds or more of its share (500 ops/s).
    assert 900 <= lost.ops < 2000
    # Its seed went with it; the others' are kept.
    assert lost.seed is None
    for kept in (merged.hosts[0], merged.hosts[2]):
        assert not kept.interrupted
        assert kept.error is None
        assert kept.seed is not None
        assert kept.ops == pytest.approx(2500, rel=0.02)
    assert [h.ops for h in merged.hosts] == [r["totals"]["ops"] for r in own]
    # The kept hosts' CPU while they ran is part of their actors' since creation (which
    # adds the set-up and the 1.5 s wait for the start); the lost host has neither.
    for i in (0, 2):
        ran, whole = done.run_cpu_s[i], done.process_cpu_s[i]
        assert ran is not None
        assert whole is not None
        assert 0 < ran < whole
    assert done.run_cpu_s[1] is None
    assert done.process_cpu_s[1] is None
    assert merged.totals.ops == sum(h.ops for h in merged.hosts)
    assert not merged.validity.trusted
    assert any(c.check == "host_lost" and not c.passed for c in merged.validity.checks)
    assert merged.error is not None
    assert "host 1" in merged.error
    # The server saw every request the report holds, and at most the lost host's last
    # second more (sent after its last snapshot).
    assert 0 <= server.calls("set") - merged.totals.ops <= 600


def test_a_host_that_hangs_is_lost_after_10_s_of_silence_and_the_others_kept(
    ray_cluster: str, server: RedisServer
) -> None:
    hung: list[tuple[int, float]] = []

    def hang_on_second(s: respload.Snapshot) -> None:
        if s.measured and s.t >= 2 and not hung:
            hung.append((_hang_host(1), time.monotonic()))

    try:
        done = respload.distributed.run_hosts(
            sets_at_1500(server, "3s"),
            hosts=HOSTS,
            on_progress=hang_on_second,
            **START,
        )
        ended = time.monotonic()
        # The driver killed the silent host's actor: its stopped process goes away.
        killed = _gone(hung[0][0], within=10) if hung else False
    finally:
        # The driver kills a silent host's actor; a stopped process left over would hold
        # its node's worker.
        for pid, _ in hung:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert hung
    merged = done.report
    lost = merged.hosts[1]
    assert lost.interrupted
    assert lost.error is not None
    assert "host 1" in lost.error
    assert "no answer for 10 s" in lost.error
    # Taken as lost only after 10 s without an answer (the poll's wait and its 2 s grace
    # on top at most), not at the end of the others' run (about 1 s after the hang).
    silence = ended - hung[0][1]
    assert 10 <= silence < 16, silence
    # What it streamed before it hung: two seconds or more of its share (500 ops/s), less
    # than the whole 3 s.
    assert 900 <= lost.ops < 1500
    assert lost.seed is None
    for kept in (merged.hosts[0], merged.hosts[2]):
        assert not kept.interrupted
        assert kept.error is None
        assert kept.ops == pytest.approx(1500, rel=0.02)
    assert merged.totals.ops == sum(h.ops for h in merged.hosts)
    assert any(c.check == "host_lost" and not c.passed for c in merged.validity.checks)
    assert merged.error is not None
    assert "host 1" in merged.error
    assert killed, "the hung host's process outlived the run"
    assert 0 <= server.calls("set") - merged.totals.ops <= 600


def test_ctrl_c_stops_every_host_within_a_second_with_the_partial_report(
    ray_cluster: str, server: RedisServer
) -> None:
    """Ctrl-C in the driver (a ``KeyboardInterrupt`` from ``on_progress``), while a thread
    on a connection of its own watches the server for the last request any host sent."""
    raised: list[float] = []
    changes: list[tuple[float, int]] = []
    watching = threading.Event()

    def watch() -> None:
        with testing.connect_redis(server.url) as watcher:
            last = -1
            while not watching.is_set():
                now = watcher.calls("set")
                if now != last:
                    changes.append((time.monotonic(), now))
                    last = now
                time.sleep(0.02)

    def interrupt(s: respload.Snapshot) -> None:
        if s.measured and s.t >= 1 and not raised:
            raised.append(time.monotonic())
            raise KeyboardInterrupt

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            respload.distributed.run(
                sets_at_1500(server, "60s"),
                hosts=HOSTS,
                on_progress=interrupt,
                **START,
            )
        returned_in = time.monotonic() - raised[0]
        # Watched until the count has not moved for 1.5 s.
        while time.monotonic() - changes[-1][0] < 1.5:
            time.sleep(0.05)
    finally:
        watching.set()
        watcher.join()
    last_change, sent = changes[-1]
    assert any(t < raised[0] and n > 0 for t, n in changes), "no host was sending"
    assert last_change - raised[0] < 1.0, f"a host still sent {last_change - raised[0]:.2f} s later"
    # The partial report, merged from every host, comes back soon after.
    assert returned_in < 1.0
    report: respload.Report = caught.value.report  # type: ignore[attr-defined]
    assert report.interrupted
    assert [h.shard for h in report.hosts] == [0, 1, 2]
    assert all(h.interrupted for h in report.hosts)
    assert 0 < report.totals.ops <= sent
    assert report.duration_s < 5


# `python -m respload`, with a stack dump of every thread on SIGUSR1: what the driver was doing
# when a stop did not take (the test installs the handler; the CLI itself installs none).
_CLI_WITH_STACKS = (
    "import faulthandler, signal, sys; faulthandler.register(signal.SIGUSR1, all_threads=True); "
    "from respload.cli import console_main; sys.argv[0] = 'respload'; console_main()"
)


def test_sigint_to_the_cli_stops_every_host_within_a_second(
    ray_cluster: str, server: RedisServer, tmp_path: Path
) -> None:
    """A real Ctrl-C: SIGINT to the ``respload distributed`` process, while the server is
    watched for the last request any host sent."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(sets_at_1500(server, "60s")))
    out = tmp_path / "all.json"
    args = ["distributed", str(path), "--hosts", "3", "--address", ray_cluster]
    proc = subprocess.Popen(
        [sys.executable, "-c", _CLI_WITH_STACKS, *args, "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # stderr is read all along, on a thread: a full pipe must never be what holds the CLI.
    lines: list[str] = []
    measuring = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            # The second measured line: every host has been sending for a second or more.
            if "ops/s" in line and float(line.split("]")[1].split("s")[0]) >= 2:
                measuring.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        if not measuring.wait(timeout=120):
            pytest.fail(f"no progress line; exit {proc.poll()}; stderr: {''.join(lines)}")
        sent_before = server.calls("set")
        assert sent_before > 0
        proc.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        # The server's count, every 20 ms until it has not moved for 1.5 s.
        last, last_change = sent_before, interrupted_at
        stacks_asked = False
        while time.monotonic() - last_change < 1.5:
            time.sleep(0.02)
            now = server.calls("set")
            if now != last:
                last, last_change = now, time.monotonic()
            if not stacks_asked and time.monotonic() - interrupted_at > 3 and proc.poll() is None:
                # Still sending 3 s after SIGINT: the driver's threads, into stderr.
                proc.send_signal(signal.SIGUSR1)
                stacks_asked = True
        stopped_in = last_change - interrupted_at
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        reader.join(timeout=5)
    stderr = "".join(lines)
    assert stopped_in < 1.0, f"a host still sent {stopped_in:.2f} s after SIGINT; stderr:\n{stderr}"
    assert proc.returncode == 0, stderr
    assert "interrupted: every host stopped" in stderr
    assert "HOSTS" in stdout
    report = respload.Report.load(out)
    assert report.interrupted
    assert [h.shard for h in report.hosts] == [0, 1, 2]
    assert all(h.interrupted for h in report.hosts)
    assert sent_before < report.totals.ops <= server.calls("set")


def test_a_host_that_cannot_reach_the_target_fails_the_run_naming_it(
    ray_cluster: str,
) -> None:
    port = free_port()
    with pytest.raises(respload.ConnectError) as caught:
        respload.distributed.run(
            {"target": {"url": f"redis://127.0.0.1:{port}"}, "load": {"connections": 3}},
            hosts=HOSTS,
        )
    # Every host is named (on one machine no host can reach what another cannot).
    message = str(caught.value)
    assert [f"host {i} (" in message for i in range(HOSTS)] == [True] * HOSTS
    assert message.count(f"cannot reach the target: 127.0.0.1:{port}: ") == HOSTS
    assert caught.value.address == f"127.0.0.1:{port}"
    # More hosts than nodes, one per node: refused before any actor.
    with pytest.raises(respload.SpecError) as refused:
        respload.distributed.run(
            {"target": {"url": f"redis://127.0.0.1:{port}"}, "load": {"connections": 4}},
            hosts=4,
        )
    assert refused.value.path == "hosts"
    with pytest.raises(respload.SpecError) as too_big:
        respload.distributed.run(
            {"target": {"url": f"redis://127.0.0.1:{port}"}, "load": {"connections": 3}},
            hosts=HOSTS,
            cpus_per_host=2,
        )
    assert too_big.value.path == "cpus_per_host"
    with pytest.raises(respload.SpecError) as unshardable:
        respload.distributed.run(
            {"target": {"url": f"redis://127.0.0.1:{port}"}, "load": {"connections": 2}},
            hosts=HOSTS,
        )
    assert unshardable.value.path.endswith("load.connections")


def test_each_placement_puts_the_hosts_where_it_says(ray_cluster: str, server: RedisServer) -> None:
    # The 3 nodes have a CPU each: "spread" takes 4 hosts of half a CPU over every node (more
    # hosts than nodes), "pack" 3 hosts of 0.3 CPU onto one; each sends its budget exactly.
    nodes: dict[str, list[str]] = {}
    runs: list[tuple[Placement, int, float]] = [
        ("strict_spread", 3, 1.0),
        ("spread", 4, 0.5),
        ("pack", 3, 0.3),
    ]
    for placement, hosts, cpus in runs:
        # The last run's CPUs are given back asynchronously: placed before they are, "spread"
        # would find only the nodes freed first. Wait for all of them (else fail).
        deadline = time.monotonic() + 30
        while ray.available_resources().get("CPU", 0) < HOSTS:
            assert time.monotonic() < deadline, ray.available_resources()
            time.sleep(0.05)
        done = respload.distributed.run_hosts(
            spec(server, load={"connections": hosts, "requests": 400}),
            hosts=hosts,
            placement=placement,
            cpus_per_host=cpus,
            **START,
        )
        assert done.report.totals.ops == 400, placement
        assert len(done.nodes) == hosts
        assert all(done.nodes), done.nodes
        nodes[placement] = done.nodes
    assert server.calls("set") + server.calls("get") == 1200
    assert len(set(nodes["strict_spread"])) == HOSTS
    assert len(set(nodes["spread"])) == HOSTS
    assert len(set(nodes["pack"])) == 1


def test_the_cli_runs_a_spec_from_3_hosts(
    ray_cluster: str, server: RedisServer, tmp_path: Path
) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(
        f'[target]\nurl = "{server.url}"\n[load]\nconnections = 3\nrequests = 900\n'
        '[[commands]]\nname = "set"\n'
    )
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(
        ["distributed", str(path), "--hosts", "3", "--json", str(tmp_path / "all.json")],
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert "HOSTS" in out.getvalue()
    merged = respload.Report.load(tmp_path / "all.json")
    assert merged.totals.ops == 900 == server.calls("set")
    assert len(merged.hosts) == 3


def test_the_cli_prints_the_phases_of_3_hosts_as_one_run(
    ray_cluster: str, server: RedisServer, tmp_path: Path
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(two_phases(server, 1200, {"requests": 600})))
    hosts = tmp_path / "hosts"
    out, err = io.StringIO(), io.StringIO()
    args = ["--hosts", "3", "--hosts-json", str(hosts), "--json", str(tmp_path / "all.json")]
    code = cli_main(["distributed", str(path), *args], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    merged = respload.Report.load(tmp_path / "all.json")
    # Each host's phases joined into its shard of the whole run, merged again.
    own = [json.loads((hosts / f"host{i}.json").read_text()) for i in range(3)]
    assert [[p["name"] for p in r["phases"]] for r in own] == [["populate", "measure"]] * 3
    assert [p.name for p in merged.phases] == ["populate", "measure"]
    assert merged.commands["SET"].ops == 1200 == server.calls("set")
    assert merged.commands["GET"].ops == 600 == server.calls("get")
    assert merged.commands["GET"].hits == 600
    assert merged.workload["phases"][0]["name"] == "populate"


def test_a_cli_merge_of_shards_run_by_hand_equals_the_library_merge(
    server: RedisServer, tmp_path: Path
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            spec(
                server,
                load={"connections": 3, "requests": 1201},
                commands=[{"name": "set"}, {"name": "get"}],
            )
        )
    )
    at = f"{time.time() + 1.5:.3f}"
    files = [tmp_path / f"s{i}.json" for i in range(HOSTS)]
    hosts = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "respload", "run", str(path), "-q"),
                *("--shard", f"{i}/{HOSTS}", "--start-at", at, "--json", str(files[i])),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(HOSTS)
    ]
    for h in hosts:
        _, stderr = h.communicate(timeout=60)
        assert h.returncode == 0, stderr
    out = tmp_path / "cli.json"
    code = cli_main(["merge", *map(str, files), "--json", str(out)], stdout=io.StringIO())
    assert code == 0
    by_cli = respload.Report.load(out)
    by_library = respload.merge_reports(files)
    assert by_cli.to_dict() == by_library.to_dict()
    assert by_cli.totals.ops == 1201 == server.calls("set") + server.calls("get")
    assert [h.start_skew_ms < 250 for h in by_cli.hosts] == [True] * HOSTS
