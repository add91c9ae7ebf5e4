"""respload.Runner: live snapshots, stop() with a partial report, Ctrl-C, context manager."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import respload
from respload.testing import RedisServer, redis_server


def long_run(redis: RedisServer, connections: int = 4) -> respload.Runner:
    return respload.Runner(
        target=redis.target(),
        load={"connections": connections, "duration": "60s"},
        commands=[{"name": "set"}],
    )


def assert_traffic_stopped(redis: RedisServer) -> int:
    """Nothing keeps sending: the server's SET count stays put."""
    first = redis.calls("set")
    time.sleep(0.3)
    assert redis.calls("set") == first
    return first


def test_iteration_yields_live_snapshots(redis: RedisServer) -> None:
    runner = respload.Runner(
        target=redis.target(),
        load={"connections": 4, "duration": "2s"},
        commands=[{"name": "set"}],
    ).start()

    snapshots = list(runner)
    report = runner.wait()

    assert len(snapshots) == len(report.timeline) >= 2
    full = [s for s in snapshots if s.interval_s == 1.0]
    assert len(full) >= 2
    assert all(s.ops_per_sec > 0 and s.ops > 0 for s in full)
    assert all(s.connections == 4 for s in full)
    assert report.totals.ops == sum(s.ops for s in snapshots) == redis.calls("set")
    assert report.interrupted is False
    assert runner.finished


def test_stop_returns_a_partial_report_promptly(redis: RedisServer) -> None:
    runner = long_run(redis).start()
    first = next(iter(runner))
    assert first.ops > 0

    asked = time.monotonic()
    report = runner.stop()
    took = time.monotonic() - asked

    assert took < 1.0, took
    assert report.interrupted is True
    assert 1.0 <= report.duration_s < 5
    assert report.totals.ops >= first.ops
    served = assert_traffic_stopped(redis)
    assert abs(served - report.totals.ops) <= 4
    assert runner.stop() is report  # the same report again, no error


def test_a_later_phase_whose_server_went_away_returns_the_earlier_report(
    redis: RedisServer,
) -> None:
    with redis_server() as second:
        runner = respload.Runner(
            target=redis.target(),
            load={"connections": 2, "duration": "3s"},
            commands=[{"name": "set"}],
            phases=[{"name": "first"}, {"name": "second", "target": second.target()}],
        ).start()
        assert next(iter(runner)).phase == "first"
    # The second server is gone before its phase starts: no exception, a partial report.
    report = runner.wait()
    assert report.interrupted is True
    assert report.error is not None
    assert report.error.startswith(f"phase `second` failed: cannot connect to {second.address}")
    assert [p.name for p in report.phases] == ["first"]
    assert report.totals.ops == redis.calls("set") > 0
    with pytest.raises(AssertionError, match="the run stopped early: phase `second`"):
        report.check()


def test_stop_from_another_thread_ends_wait(redis: RedisServer) -> None:
    runner = long_run(redis).start()
    timer = threading.Timer(0.5, runner.stop)
    timer.start()
    try:
        report = runner.wait()
    finally:
        timer.join()

    assert report.interrupted is True
    assert report.totals.ops > 0
    assert_traffic_stopped(redis)


def test_keyboard_interrupt_stops_the_run_and_keeps_the_partial_report(
    redis: RedisServer,
) -> None:
    # A real SIGINT, as Ctrl-C sends, handled by Python's default handler.
    timer = threading.Timer(1.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            respload.run(
                target=redis.target(),
                load={"connections": 4, "duration": "60s"},
                commands=[{"name": "set"}],
            )
    finally:
        timer.join()
    took = time.monotonic() - started

    assert took < 1.2 + 1.0, took
    report = caught.value.report
    assert isinstance(report, respload.Report)
    assert report.interrupted is True
    assert report.totals.ops > 0
    assert len(report.timeline) >= 1
    served = assert_traffic_stopped(redis)
    assert abs(served - report.totals.ops) <= 4


def test_context_manager_stops_traffic_on_exit(redis: RedisServer) -> None:
    with long_run(redis, connections=2) as runner:
        snapshot = next(iter(runner))
        assert snapshot.ops > 0

    assert runner.report is not None
    assert runner.report.interrupted is True
    assert_traffic_stopped(redis)


def test_runner_must_be_started_once(redis: RedisServer) -> None:
    runner = respload.Runner(target=redis.target(), load={"requests": 10, "connections": 1})
    with pytest.raises(RuntimeError, match="start"):
        runner.wait()
    runner.start()
    with pytest.raises(RuntimeError, match="already started"):
        runner.start()
    assert runner.wait().totals.ops == 10
