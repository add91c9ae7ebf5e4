"""respload.run_async: the event loop keeps running; cancelling stops the traffic."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

import respload
from respload.testing import RedisServer


def test_run_async_does_not_block_the_loop(redis: RedisServer) -> None:
    ticks = 0
    snapshots: list[respload.Snapshot] = []

    async def main() -> respload.Report:
        nonlocal ticks
        task = asyncio.ensure_future(
            respload.run_async(
                target=redis.target(),
                load={"connections": 4, "duration": "1500ms"},
                commands=[{"name": "set"}],
                on_progress=snapshots.append,
            )
        )
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.01)
        return await task

    report = asyncio.run(main())

    assert ticks > 50, ticks  # the loop ran about every 10 ms during the 1.5 s run
    assert report.totals.ops == redis.calls("set") > 0
    assert len(snapshots) == len(report.timeline) == 2


def test_cancelling_run_async_stops_the_traffic(redis: RedisServer) -> None:
    async def main() -> None:
        task = asyncio.ensure_future(
            respload.run_async(
                target=redis.target(),
                load={"connections": 2, "duration": "60s"},
                commands=[{"name": "set"}],
            )
        )
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(main())

    assert time.monotonic() - started < 2
    first = redis.calls("set")
    assert first > 0
    time.sleep(0.3)
    assert redis.calls("set") == first


def test_run_async_raises_connect_errors(closed_port: int) -> None:
    with pytest.raises(respload.ConnectError) as caught:
        asyncio.run(respload.run_async(target={"port": closed_port}))
    assert caught.value.address == f"127.0.0.1:{closed_port}"


def test_an_exception_from_on_progress_stops_run_async_and_propagates(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[respload.Snapshot] = []

    def boom(snapshot: respload.Snapshot) -> None:
        seen.append(snapshot)
        raise ValueError("boom")

    started = time.monotonic()
    with caplog.at_level(logging.ERROR), pytest.raises(ValueError, match="boom"):
        asyncio.run(
            respload.run_async(
                target=redis.target(),
                load={"connections": 2, "duration": "60s"},
                commands=[{"name": "set"}],
                on_progress=boom,
            )
        )

    assert time.monotonic() - started < 4
    assert len(seen) == 1
    # The loop did not log it as an unhandled callback error, and the traffic stopped.
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    first = redis.calls("set")
    assert first > 0
    time.sleep(0.3)
    assert redis.calls("set") == first
