"""respload.run against a real redis-server: the report's counts match what the server did."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import respload
from respload.testing import RedisServer

N = 2000


def fill(redis: RedisServer, n: int = N) -> respload.Report:
    """Write keys k:0 .. k:{n-1} once each, in order."""
    return respload.run(
        target=redis.target(),
        load={"connections": 4, "requests": n},
        keys={"prefix": "k:", "range": [0, n - 1], "distribution": "sequential"},
        commands=[{"name": "set"}],
        seed=7,
    )


def test_sequential_set_run_writes_every_key(redis: RedisServer) -> None:
    report = fill(redis)

    assert redis.call("DBSIZE") == N
    assert redis.call("EXISTS", "k:0") == 1
    assert redis.call("EXISTS", f"k:{N - 1}") == 1
    assert redis.calls("set") == N
    assert report.totals.ops == N
    assert report.commands["SET"].ops == N
    assert list(report.commands) == ["SET"]
    assert report.totals.errors == 0
    assert report.totals.ops_per_sec > 0
    assert 0 < report.totals.latency_ms.p50 <= report.totals.latency_ms.p99
    assert report.interrupted is False
    assert report.seed == 7
    assert report.server.address == redis.address


def test_get_over_existing_keys_counts_hits(redis: RedisServer) -> None:
    fill(redis)

    report = respload.run(
        target=redis.target(),
        load={"connections": 4, "requests": N},
        keys={"prefix": "k:", "range": [0, N - 1]},
        commands=[{"name": "get"}],
    )

    get = report.commands["GET"]
    assert (get.ops, get.hits, get.misses, get.errors) == (N, N, 0, 0)
    assert redis.calls("get") == N


def test_get_over_missing_keys_counts_misses(redis: RedisServer) -> None:
    report = respload.run(
        target=redis.target(),
        load={"connections": 2, "requests": 500},
        keys={"prefix": "absent:", "range": [0, 99]},
        commands=[{"name": "get"}],
    )

    assert (report.totals.hits, report.totals.misses) == (0, 500)
    assert redis.call("DBSIZE") == 0


def test_phases_count_only_measured_ones_in_totals(redis: RedisServer) -> None:
    workload = respload.Workload.from_toml(
        f"""
        [target]
        url = "{redis.url}"
        [load]
        connections = 4
        [keys]
        prefix = "p:"
        range = [0, 999]
        [[phases]]
        name = "populate"
        measured = false
        load = {{ requests = 1000, pipeline = 8 }}
        keys = {{ distribution = "sequential" }}
        commands = [{{ name = "set" }}]
        [[phases]]
        name = "measure"
        load = {{ requests = 3000 }}
        commands = [{{ name = "get" }}]
        """
    )

    report = respload.run(workload)

    assert [p.name for p in report.phases] == ["populate", "measure"]
    assert [p.measured for p in report.phases] == [False, True]
    assert report.phases[0].totals.ops == 1000
    assert redis.call("DBSIZE") == 1000
    assert report.totals.ops == 3000
    assert report.totals.hits == 3000
    assert list(report.commands) == ["GET"]


def test_keyword_fields_override_the_measured_phases(redis: RedisServer) -> None:
    workload = respload.Workload(
        keys={"prefix": "o:", "range": [0, 199]},
        phases=[
            {
                "name": "fill",
                "measured": False,
                "load": {"requests": 200, "connections": 2},
                "keys": {"distribution": "sequential"},
                "commands": [{"name": "set"}],
            },
            {"name": "measure", "load": {"requests": 5000}, "commands": [{"name": "get"}]},
        ],
    )

    report = respload.run(workload, target=redis.target(), load={"requests": 300})

    assert report.phases[0].totals.ops == 200
    assert report.totals.ops == 300
    assert redis.calls("get") == 300
    assert redis.call("DBSIZE") == 200


def test_run_releases_the_gil(redis: RedisServer) -> None:
    counter = 0
    done = threading.Event()

    def spin() -> None:
        nonlocal counter
        while not done.is_set():
            counter += 1

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        time.sleep(0.05)
        before = counter
        report = respload.run(target=redis.target(), load={"connections": 4, "duration": "1s"})
        during = counter - before
    finally:
        done.set()
        thread.join()

    assert report.totals.ops > 1000
    # A pure-Python loop does millions of steps a second; with the GIL held by the run it
    # would do none until the run returned.
    assert during > 100_000, during


def test_on_progress_fires_once_per_interval(redis: RedisServer) -> None:
    snapshots: list[respload.Snapshot] = []

    report = respload.run(
        target=redis.target(),
        load={"connections": 4, "duration": "2s"},
        commands=[{"name": "set"}],
        on_progress=snapshots.append,
    )

    assert len(snapshots) == len(report.timeline) >= 2
    assert [s.ops for s in snapshots] == [r.ops for r in report.timeline]
    assert sum(s.ops for s in snapshots) == report.totals.ops == redis.calls("set")
    assert all(s.phase == "main" and s.measured for s in snapshots)
    assert snapshots[0].interval_s == 1.0
    assert snapshots[0].ops_per_sec > 0


def test_on_progress_returning_false_stops_the_run(redis: RedisServer) -> None:
    started = time.monotonic()

    report = respload.run(
        target=redis.target(),
        load={"connections": 2, "duration": "60s"},
        on_progress=lambda snapshot: False,
    )

    assert time.monotonic() - started < 3
    assert report.interrupted is True
    assert report.totals.ops > 0
    # At most one request per connection was in flight when the run stopped.
    assert abs(report.totals.ops - (redis.calls("set") + redis.calls("get"))) <= 2


def test_an_on_progress_that_is_not_callable_is_refused_before_any_traffic(
    redis: RedisServer,
) -> None:
    fields: dict[str, Any] = {
        "target": redis.target(),
        "load": {"connections": 1, "duration": "1500ms"},
        "commands": [{"name": "set"}],
    }
    with pytest.raises(TypeError, match=r"on_progress must be a function.*int: 5"):
        respload.run(on_progress=5, **fields)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="on_progress"):
        asyncio.run(respload.run_async(on_progress="x", **fields))  # type: ignore[arg-type]
    assert redis.calls("set") == 0
    # wait() refuses it before waiting; the run it was asked about goes on.
    runner = respload.Runner(**fields).start()
    with pytest.raises(TypeError, match="on_progress"):
        runner.wait(on_progress=5)  # type: ignore[arg-type]
    assert runner.wait().totals.ops == redis.calls("set") > 0


def test_run_accepts_a_spec_file(redis: RedisServer, tmp_path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'[target]\nurl = "{redis.url}"\n[load]\nconnections = 1\nrequests = 100\n'
        '[[commands]]\nname = "set"\n'
    )

    report = respload.run(spec)

    assert report.totals.ops == 100 == redis.calls("set")
