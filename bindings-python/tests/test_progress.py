"""Live progress: the CLI's line on a terminal, nothing when output is not interactive, one
display updated each interval in a Jupyter kernel; ``async for`` over a Runner."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
from typing import Any

import nbclient
import nbformat
import pytest

import respload
from respload.testing import RedisServer


def test_progress_on_a_terminal_writes_the_cli_live_line(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, slave = os.openpty()
    tty = open(slave, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
    monkeypatch.setattr(sys, "stderr", tty)
    seen: list[respload.Snapshot] = []
    try:
        report = respload.run(
            target=redis.target(),
            load={"connections": 2, "duration": "2s"},
            commands=[{"name": "set"}],
            progress=True,
            on_progress=seen.append,
        )
    finally:
        tty.close()
    written = os.read(master, 1 << 16).decode()
    os.close(master)
    lines = [line for line in written.splitlines() if line.strip()]
    assert len(lines) == len(report.timeline) == len(seen) >= 2, written
    for line, snapshot in zip(lines, seen):
        assert line.startswith("[main]"), line
        assert f"{snapshot.ops_per_sec:.0f} ops/s" in line, line
        assert f"p99 {snapshot.latency_ms.p99:.3f} ms" in line, line
        assert "errors 0" in line, line


def test_progress_prints_nothing_when_output_is_not_interactive(
    redis: RedisServer, capfd: pytest.CaptureFixture[str]
) -> None:
    for progress in (True, None):
        report = respload.run(
            target=redis.target(),
            load={"connections": 1, "duration": "1100ms"},
            commands=[{"name": "set"}],
            progress=progress,
        )
        assert report.totals.ops > 0
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_progress_on_a_string_stream_is_not_a_terminal(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    respload.run(
        target=redis.target(),
        load={"connections": 1, "requests": 500},
        commands=[{"name": "set"}],
        progress=True,
    )
    assert stream.getvalue() == ""


NOTEBOOK_CELL = """
import respload
report = respload.run(
    target={{"url": "{url}"}},
    phases=[
        {{"name": "fill", "load": {{"connections": 2, "requests": 30000, "rate": 15000}},
          "commands": [{{"name": "set"}}]}},
        {{"name": "read", "load": {{"connections": 2, "duration": "2s"}},
          "commands": [{{"name": "get"}}]}},
    ],
)
[(p.name, p.totals.ops) for p in report.phases]
"""


class Recorder(nbclient.NotebookClient):
    messages: list[dict[str, Any]]

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        if msg["msg_type"] in ("display_data", "update_display_data", "error", "stream"):
            self.messages.append(msg)
        return super().process_message(msg, cell, cell_index)


def test_jupyter_shows_one_display_updated_each_interval(redis: RedisServer) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(NOTEBOOK_CELL.format(url=redis.url)))
    client = Recorder(nb, timeout=120, kernel_name="python3")
    client.messages = []
    client.execute()

    kinds = [m["msg_type"] for m in client.messages]
    assert "error" not in kinds, client.messages
    assert "stream" not in kinds, client.messages
    shown = [m for m in client.messages if m["msg_type"] == "display_data"]
    updates = [m for m in client.messages if m["msg_type"] == "update_display_data"]
    # progress defaults to on in a kernel: one display, updated for every later interval
    # (about 2 s of each phase) and once more when the run ended.
    assert len(shown) == 1
    display_id = shown[0]["content"]["transient"]["display_id"]
    assert all(u["content"]["transient"]["display_id"] == display_id for u in updates)
    assert len(updates) >= 4
    first = shown[0]["content"]["data"]
    assert 'class="respload-progress"' in first["text/html"]
    assert ">running<" in first["text/html"]
    assert ">waiting<" in first["text/html"]
    last = updates[-1]["content"]["data"]
    html = last["text/html"]
    assert html.count('<progress value="1.0000" max="1">') == 2, html
    assert "30,000/30,000 requests" in html, html
    assert "2.0/2.0 s" in html, html
    assert ">running<" not in html
    assert html.count(">done<") == 2
    text = last["text/plain"].splitlines()
    assert text[0].startswith("100.0% 30,000/30,000 requests  [fill]"), text
    assert text[1].startswith("100.0% 2.0/2.0 s  [read]"), text
    assert "errors 0" in text[1], text
    # A bar in between showed part of the requests: the first update came mid-phase.
    middle = shown[0]["content"]["data"]["text/html"]
    value = float(middle.split('<progress value="')[1].split('"')[0])
    assert 0 < value < 1, middle
    # The figures are the run's: the phases' requests as the report counts them.
    result = nb.cells[0].outputs[-1]["data"]["text/plain"]
    assert result.startswith("[('fill', 30000), ('read', "), result


def test_async_for_over_a_runner(redis: RedisServer) -> None:
    async def main() -> tuple[list[respload.Snapshot], respload.Report, int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        runner = respload.Runner(
            target=redis.target(),
            load={"connections": 2, "duration": "2s"},
            commands=[{"name": "set"}],
        )
        snapshots = [snapshot async for snapshot in runner]
        ticker.cancel()
        return snapshots, runner.wait(), ticks

    snapshots, report, ticks = asyncio.run(main())
    assert [s.ops for s in snapshots] == [row.ops for row in report.timeline]
    assert len(snapshots) >= 2
    assert ticks > 100, ticks  # the loop kept running while the snapshots were awaited
    assert not report.interrupted


def test_cancelling_async_for_stops_the_run(redis: RedisServer) -> None:
    async def main() -> tuple[list[respload.Snapshot], respload.Report]:
        runner = respload.Runner(
            target=redis.target(),
            load={"connections": 2, "duration": "60s"},
            commands=[{"name": "set"}],
        )
        seen: list[respload.Snapshot] = []

        async def consume() -> None:
            async for snapshot in runner:
                seen.append(snapshot)

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(1.5)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return seen, await asyncio.get_running_loop().run_in_executor(None, runner.wait)

    seen, report = asyncio.run(main())
    assert [s.phase for s in seen] == ["main"]
    assert report.interrupted
    assert report.duration_s < 5
    assert report.totals.ops == redis.calls("set") > 0


def test_leaving_async_for_early_then_stop(redis: RedisServer) -> None:
    async def main() -> respload.Report:
        runner = respload.Runner(
            target=redis.target(),
            load={"connections": 2, "duration": "60s"},
            commands=[{"name": "set"}],
        )
        async for snapshot in runner:
            assert snapshot.phase == "main"
            break
        assert not runner.finished
        return runner.stop()

    report = asyncio.run(main())
    assert report.interrupted
    assert report.duration_s < 5


def test_core_progress_counts_the_phase_bound(redis: RedisServer) -> None:
    from respload import _native

    workload = respload.Workload(
        target=redis.target(), load={"connections": 2, "requests": 3000, "rate": 2000}
    )
    progress = _native.Progress(workload._native)
    runner = respload.Runner(workload).start()
    states = []
    last = ""
    while not runner.finished:
        text = runner._started().next_snapshot(0.1)
        if text is not None:
            last = text
            states.append(json.loads(progress.update(text))[0])
    report = runner.wait()
    final = json.loads(progress.finish())[0]
    assert states[0]["bound"] == "requests"
    assert states[0]["total"] == 3000
    assert 0 < states[0]["fraction"] < 1
    assert final["done"] == final["ops"] == report.totals.ops == 3000
    assert final["fraction"] == 1
    assert final["finished"]
    assert final["line"] == _native.progress_line(last)
    assert final["line"].startswith("[main]")
    assert "ops/s" in final["line"]


def test_jupyter_display_of_run_async(redis: RedisServer) -> None:
    nb = nbformat.v4.new_notebook()
    cell = (
        "import respload\n"
        f"report = await respload.run_async(target={{'url': '{redis.url}'}},\n"
        "    load={'connections': 2, 'duration': '2500ms'}, commands=[{'name': 'set'}])\n"
        "report.totals.ops"
    )
    nb.cells.append(nbformat.v4.new_code_cell(cell))
    client = Recorder(nb, timeout=120, kernel_name="python3")
    client.messages = []
    client.execute()

    kinds = [m["msg_type"] for m in client.messages]
    assert "error" not in kinds, client.messages
    assert kinds.count("display_data") == 1, kinds
    assert kinds.count("update_display_data") >= 2, kinds
    html = client.messages[-1]["content"]["data"]["text/html"]
    assert ">done<" in html, html
    assert "2.5/2.5 s" in html, html
    assert int(nb.cells[0].outputs[-1]["data"]["text/plain"]) > 0
