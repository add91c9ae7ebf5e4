"""respload.Trace and respload.replay against real redis-server processes: a capture holds
exactly what respload sent, a replay sends exactly what the trace holds, a model runs."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import respload
from respload.testing import RedisServer, connect_redis
from typed import typed_json

T0 = 1_700_000_000_000_000  # a trace's first instant, microseconds since the epoch


def write_trace(path: Path, records: list[tuple[str, int, list[Any]]]) -> Path:
    """Write ``(client, offset_ms, args)`` records as respload JSON lines (the format of
    core/src/trace/jsonl.rs): a ``bytes`` argument as ``{"b64": ...}``."""

    def arg(a: Any) -> Any:
        if isinstance(a, bytes):
            return {"b64": base64.b64encode(a).decode()}
        return a

    with open(path, "w", encoding="utf-8") as f:
        for client, ms, args in records:
            line = {"t_us": T0 + ms * 1000, "db": 0, "client": client, "args": [*map(arg, args)]}
            f.write(json.dumps(line) + "\n")
    return path


def commandstats(redis: RedisServer) -> dict[str, int]:
    """``calls`` of each command the server ran (``INFO commandstats``), upper-cased."""
    text = str(redis.call("INFO", "commandstats"))
    return {
        m.group(1).upper(): int(m.group(2))
        for m in re.finditer(r"cmdstat_([a-z|_-]+):calls=(\d+)", text)
    }


def wait_for_monitor(redis: RedisServer) -> None:
    """Return once a client of ``redis`` is in MONITOR (the capture has begun recording)."""
    deadline = time.monotonic() + 20
    while "cmd=monitor" not in str(redis.call("CLIENT", "LIST")):
        assert time.monotonic() < deadline, "MONITOR never started"
        time.sleep(0.02)


def sequential_sets(redis: RedisServer, n: int) -> respload.Report:
    """``n`` SETs of keys seq:0 .. seq:{n-1} in order, on one connection, 32-byte values."""
    return respload.run(
        target=redis.target(),
        load={"connections": 1, "requests": n},
        keys={"prefix": "seq:", "range": [0, n - 1], "distribution": "sequential"},
        values={"size": 32},
        commands=[{"name": "set"}],
        observe={"info": False},
    )


def test_a_capture_holds_exactly_the_sets_respload_sent_in_order(
    redis: RedisServer, tmp_path: Path
) -> None:
    out = tmp_path / "capture.jsonl"
    with respload.Trace.start_capture(redis.url, out=out, duration="60s") as capture:
        assert capture.wait_started(timeout=20)
        assert capture.started
        # The signal is the server's word: it lists the capture in MONITOR at once.
        assert "cmd=monitor" in str(redis.call("CLIENT", "LIST"))
        sent = sequential_sets(redis, 300)
        # MONITOR writes a command after it ran: by now every reply is in, so is its line.
        time.sleep(0.3)
        report = capture.stop()

    assert sent.commands["SET"].ops == 300
    assert isinstance(report, respload.CaptureReport)
    assert report.interrupted is True
    assert report.out == str(out)
    assert report.malformed == 0
    assert len(report.nodes) == 1
    assert report.nodes[0].address == redis.address
    assert report.nodes[0].commands == report.commands
    assert capture.finished
    assert capture.stop() is report  # the same report again

    trace = report.trace()
    assert trace.format == "respload"
    records = list(trace)
    assert len(records) == report.commands
    assert all(isinstance(r, respload.TraceRecord) for r in records)
    sets = [r for r in records if r.command == "SET"]
    assert [r.args[1] for r in sets] == [f"seq:{i}" for i in range(300)]
    # One connection sent them, after naming itself, and nothing else: the other commands
    # (the test's own CLIENT LIST, respload's INFO reading the server's facts) came from
    # other connections.
    (client,) = {r.client for r in sets}
    (hello, *rest) = [r for r in records if r.client == client]
    assert hello.args == ["CLIENT", "SETNAME", "respload"]
    assert rest == sets
    assert all(len(r.args) == 3 and len(r.args[2]) == 32 for r in sets)
    assert all(isinstance(r.args[2], (str, bytes)) for r in sets)
    # Instants: the server's clock (microseconds), in order for the one client.
    instants = [r.t_us for r in sets]
    assert instants == sorted(instants)
    assert abs(instants[0] / 1e6 - time.time()) < 120
    assert trace.malformed == respload.Malformed(0, [])

    frame = trace.frame()
    assert list(frame.columns) == [
        "t_us",
        "t_s",
        "db",
        "client",
        "command",
        "key",
        "nargs",
        "value_size",
    ]
    assert len(frame) == len(records)
    set_rows = frame[(frame["client"] == client) & (frame["command"] == "SET")]
    assert len(set_rows) == 300
    assert list(set_rows["key"]) == [f"seq:{i}" for i in range(300)]
    assert list(set_rows["nargs"]) == [3] * 300
    assert list(set_rows["value_size"]) == [32] * 300
    assert list(set_rows["t_us"]) == instants
    assert frame["t_s"].iloc[0] == 0.0
    assert frame["t_s"].iloc[-1] == pytest.approx((records[-1].t_us - records[0].t_us) / 1e6)
    assert frame["db"].eq(0).all()
    # Commands that write no value have no value size.
    others = frame[frame["command"] != "SET"]
    assert others["value_size"].isna().all()


def test_a_refused_capture_never_starts_and_raises_why(redis: RedisServer, tmp_path: Path) -> None:
    redis.call("ACL", "SETUSER", "watcher", "on", ">pw", "~*", "+@all", "-monitor")
    url = f"redis://watcher:pw@127.0.0.1:{redis.port}"
    capture = respload.Trace.start_capture(url, out=tmp_path / "refused.jsonl", duration="30s")
    assert capture.wait_started(timeout=20) is False
    assert not capture.started
    with pytest.raises(respload.ProtocolError, match="MONITOR refused: NOPERM"):
        capture.wait()


def test_ctrl_c_ends_a_capture_with_its_report_and_the_file_kept(
    redis: RedisServer, tmp_path: Path
) -> None:
    out = tmp_path / "interrupted.jsonl.gz"

    def traffic_then_ctrl_c() -> None:
        other = connect_redis(redis.url)
        try:
            wait_for_monitor(other)
            other.call("SET", "during", "the capture")
            time.sleep(0.5)
        finally:
            other.stop()
            # A real SIGINT, as Ctrl-C sends, handled by Python's default handler.
            os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=traffic_then_ctrl_c)
    thread.start()
    started = time.monotonic()
    try:
        # No duration, no count: a capture that only Ctrl-C ends.
        report = respload.Trace.capture(url=redis.url, out=out)
    finally:
        thread.join()
    took = time.monotonic() - started

    assert report.interrupted is True
    assert took < 20, took
    assert out.exists()
    assert report.commands >= 1
    records = list(respload.Trace(out))
    assert len(records) == report.commands
    assert ["SET", "during", "the capture"] in [r.args for r in records]


def test_a_replay_sends_exactly_the_trace(redis: RedisServer, tmp_path: Path) -> None:
    recs: list[tuple[str, int, list[Any]]] = []
    for i in range(200):
        recs.append(("10.0.0.1:1", i, ["RPUSH", "list:a", str(i)]))
        recs.append(("10.0.0.2:2", i, ["SET", f"k{i}", "v" * (i % 7)]))
        if i % 4 == 0:
            recs.append(("10.0.0.3:3", i, ["INCR", "n"]))
            recs.append(("10.0.0.3:3", i, ["get", f"k{i}"]))
    recs.append(("10.0.0.3:3", 100, ["FLUSHALL"]))  # dropped by default
    recs.sort(key=lambda r: r[1])
    path = write_trace(tmp_path / "replay.jsonl", recs)
    # A line that is no record, at line 3: counted by line number, not replayed.
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(2, "this is not JSON\n")
    path.write_text("".join(lines))

    trace = respload.Trace.open(path)
    counts: dict[str, int] = {}
    for rec in trace:
        counts[rec.command] = counts.get(rec.command, 0) + 1
    assert counts == {"RPUSH": 200, "SET": 200, "INCR": 50, "GET": 50, "FLUSHALL": 1}
    malformed = trace.malformed
    assert malformed.count == 1
    assert malformed.lines[0].startswith("line 3:"), malformed.lines

    before = commandstats(redis)
    report = respload.replay(trace, redis.url, speed=10.0, prefill=False, observe={"info": False})
    after = commandstats(redis)

    def delta(name: str) -> int:
        return after.get(name, 0) - before.get(name, 0)

    for name in ("RPUSH", "SET", "INCR", "GET", "FLUSHALL"):
        assert delta(name) == (0 if name == "FLUSHALL" else counts[name]), name
    assert redis.call("LRANGE", "list:a", 0, -1) == [str(i) for i in range(200)]
    assert redis.call("GET", "n") == "50"
    assert report.totals.ops == 500
    assert report.totals.errors == 0
    assert {label: s.ops for label, s in report.commands.items()} == {
        "RPUSH": 200,
        "SET": 200,
        "INCR": 50,
        "GET": 50,
    }
    # Every field of the replay section is a typed attribute: rebuilt from them, it is equal.
    assert typed_json(report) == report.to_dict()
    fidelity = report.phases[0].replay
    assert isinstance(fidelity, respload.ReplayFidelity)
    assert fidelity.file == str(path)
    assert fidelity.format == "respload"
    assert (fidelity.traced, fidelity.planned, fidelity.replayed) == (501, 500, 500)
    assert fidelity.skipped == {"dropped: FLUSHALL": 1}
    assert fidelity.malformed == 1
    assert fidelity.malformed_lines == malformed.lines
    assert fidelity.speed == 10.0
    assert (fidelity.connections, fidelity.per_client) == (3, True)
    assert fidelity.loops == 1
    assert fidelity.prefill is None
    assert fidelity.schedule_ms is not None
    # 500 commands over the 199 ms the trace spans, 10 times as fast.
    assert fidelity.trace_rate == pytest.approx(500 / 0.199)
    assert fidelity.rate == pytest.approx(10 * 500 / 0.199)


def test_replay_options_reach_the_spec(redis: RedisServer, tmp_path: Path) -> None:
    recs: list[tuple[str, int, list[Any]]] = [
        (f"c:{i % 5}", i, ["GET", f"cold{i}"]) for i in range(40)
    ]
    recs += [("c:0", 50, ["DEL", "cold0"])]
    path = write_trace(tmp_path / "options.jsonl", recs)

    report = respload.replay(
        path,
        target=redis.target(),
        rate=2000,
        connections=2,
        key_prefix="r:",
        drop=["DEL"],
        loops=2,
        prefill_size=10,
    )

    assert typed_json(report) == report.to_dict()
    fidelity = report.phases[0].replay
    assert fidelity is not None
    assert (fidelity.connections, fidelity.per_client, fidelity.loops) == (2, False, 2)
    assert fidelity.rate == pytest.approx(2000)
    assert fidelity.skipped == {"dropped: DEL": 1}
    assert fidelity.replayed == 80
    assert fidelity.prefill is not None
    assert fidelity.prefill.keys == 40
    get = report.commands["GET"]
    assert (get.ops, get.hits, get.misses) == (80, 80, 0)
    assert redis.call("STRLEN", "r:cold7") == 10
    assert redis.call("EXISTS", "cold7") == 0

    with pytest.raises(respload.SpecError) as caught:
        respload.replay(path, redis.url, speed=2.0, rate=5.0)
    assert caught.value.path == "replay.rate"


def test_bytes_arguments_round_trip_as_bytes(redis: RedisServer, tmp_path: Path) -> None:
    binary = b"\x00\xff\r\n\x80binary"
    path = write_trace(
        tmp_path / "bytes.jsonl",
        [("c:1", 0, ["SET", b"key\xfe", binary]), ("c:1", 1, ["APPEND", b"key\xfe", b"\xc3"])],
    )
    records = list(respload.Trace(path))
    assert records == [
        respload.TraceRecord(T0, 0, "c:1", ["SET", b"key\xfe", binary]),
        respload.TraceRecord(T0 + 1000, 0, "c:1", ["APPEND", b"key\xfe", b"\xc3"]),
    ]
    frame = respload.Trace(path).frame()
    assert list(frame["key"]) == [b"key\xfe", b"key\xfe"]
    assert list(frame["value_size"]) == [len(binary), 1]

    # Replayed while captured: the server got the bytes, and the capture read them back.
    out = tmp_path / "captured.jsonl"
    with respload.Trace.start_capture(redis.url, out=out) as capture:
        assert capture.wait_started(timeout=20)
        respload.replay(path, redis.url, prefill=False, observe={"info": False})
        time.sleep(0.3)
    assert capture.report is not None
    assert capture.report.interrupted
    assert redis.call("STRLEN", b"key\xfe") == len(binary) + 1
    captured = [r.args for r in respload.Trace(out) if r.command in ("SET", "APPEND")]
    assert captured == [["SET", b"key\xfe", binary], ["APPEND", b"key\xfe", b"\xc3"]]


def test_a_twitter_trace_gives_value_sizes(tmp_path: Path) -> None:
    path = tmp_path / "cluster.csv"
    path.write_text(
        "0,nz:u:a,7,1052,7,set,3600\n"
        "0,nz:u:a,7,0,7,get,0\n"
        "1,nz:u:b,7,0,8,get,0\n"
        "1,nz:u:b,7,10,8,nope,0\n"
        "2,nz:u:a,7,0,7,delete,0\n"
    )
    trace = respload.Trace.open(path)
    assert trace.format == "twitter"
    records = list(trace)
    assert [r.args for r in records] == [
        ["SET", "nz:u:a", respload.ValueSize(1052), "EX", "3600"],
        ["GET", "nz:u:a"],
        ["GET", "nz:u:b"],
        ["DEL", "nz:u:a"],
    ]
    assert [r.client for r in records] == ["7", "7", "8", "7"]
    assert records[2].t_us == 1_000_000
    assert trace.malformed.count == 1
    assert trace.malformed.lines[0].startswith("line 4:")
    frame = trace.frame()
    assert frame["value_size"].iloc[0] == 1052
    assert list(frame["t_s"]) == [0.0, 0.0, 1.0, 2.0]


def test_a_model_of_a_trace_runs(redis: RedisServer, tmp_path: Path) -> None:
    # 2 s of traffic: GETs and SETs of 50 keys, the low ones far more popular.
    recs: list[tuple[str, int, list[Any]]] = []
    for i in range(2000):
        key = f"user:{(i * i) % 50 if i % 3 else i % 5}"
        cmd = ["SET", key, "x" * 100] if i % 4 == 0 else ["GET", key]
        recs.append((f"c:{i % 3}", i, cmd))
    path = write_trace(tmp_path / "model.jsonl", recs)
    trace = respload.Trace(path)

    model = trace.model(url=redis.url)

    assert isinstance(model, respload.Model)
    fit = model.fit
    assert fit["commands"] == 2000
    assert fit["distinct_keys"] == len({r[2][1] for r in recs})
    assert fit["duration_s"] == pytest.approx(1.999)
    assert {m["name"]: m["trace_share"] for m in fit["mix"]} == {"GET": 0.75, "SET": 0.25}
    assert fit["sizes"] == [(100, 1.0)]
    read = {r[2][1] for r in recs if r[2][0] == "GET"}
    written = {r[2][1] for r in recs if r[2][0] == "SET"}
    assert fit["key_spaces"] == respload.KeySpaces(
        read_only=len(read - written),
        written_only=len(written - read),
        read_and_written=len(read & written),
    )
    assert model.spec["target"] == {"url": redis.url}
    assert model.spec["keys"]["prefix"] == "user:"
    assert model.spec["load"]["rate"] == pytest.approx(2000 / 1.999, rel=1e-3)
    assert "2000 commands" in model.summary()
    assert respload.Workload.from_toml(model.to_toml()).to_dict() == model.workload().to_dict()
    doubled = trace.model(rate_x=2.0, keys_x=2.0)
    assert doubled.spec["load"]["rate"] == pytest.approx(2 * model.spec["load"]["rate"])
    assert "url" not in doubled.spec["target"]

    report = respload.run(model.workload(load={"duration": "500ms"}), observe={"info": False})
    assert report.totals.errors == 0
    assert set(report.commands) == {"GET", "SET"}
    ops = report.commands["GET"].ops + report.commands["SET"].ops
    assert ops == report.totals.ops > 0
    assert redis.calls("get") == report.commands["GET"].ops
    assert report.commands["SET"].ops / ops == pytest.approx(0.25, abs=0.15)


def test_plot_draws_the_rate_and_the_key_popularity(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    # 3 s: 10, 0 and 5 commands; key k0 used 8 times, k1 4 times, k2 3 times.
    keys = ["k0"] * 8 + ["k1"] * 4 + ["k2"] * 3
    offsets = [i * 50 for i in range(10)] + [2000 + i * 100 for i in range(5)]
    path = write_trace(
        tmp_path / "plot.jsonl", [("c", ms, ["GET", k]) for ms, k in zip(offsets, keys)]
    )
    fig = respload.Trace(path).plot()
    rate, popularity = fig.axes
    (line,) = rate.lines
    assert list(line.get_xdata()) == [0, 1, 2]
    assert list(line.get_ydata()) == [10, 0, 5]
    (points,) = popularity.lines
    assert list(points.get_xdata()) == [1, 2, 3]
    assert list(points.get_ydata()) == [8, 4, 3]
    assert popularity.get_xscale() == popularity.get_yscale() == "log"


def test_errors_name_the_file_and_the_field(redis: RedisServer, tmp_path: Path) -> None:
    with pytest.raises(respload.FileError) as caught:
        respload.Trace.open(tmp_path / "missing.jsonl")
    assert "missing.jsonl" in str(caught.value)
    path = write_trace(tmp_path / "t.jsonl", [("c", 0, ["PING"])])
    with pytest.raises(respload.SpecError) as spec_error:
        respload.Trace.open(path, format="csv")
    assert spec_error.value.path == "format"
    with pytest.raises(respload.SpecError) as spec_error:
        respload.Trace.capture(redis.url, out=tmp_path / "c.jsonl", max_commands=0)
    assert spec_error.value.path == "max_commands"
    with pytest.raises(respload.ConnectError):
        respload.Trace.capture("redis://127.0.0.1:1", out=tmp_path / "c.jsonl", duration=1)


def test_pandas_reads_a_gzipped_capture_without_respload(
    redis: RedisServer, tmp_path: Path
) -> None:
    """docs/traffic.md's promise: ``pandas.read_json(path, lines=True)`` reads a trace file
    as written (gzip too), row for row what respload's own reader gives."""
    import pandas as pd

    out = tmp_path / "captured.jsonl.gz"
    with respload.Trace.start_capture(redis.url, out=out) as capture:
        assert capture.wait_started(timeout=20)
        sequential_sets(redis, 50)
        time.sleep(0.3)
    frame = pd.read_json(out, lines=True)
    records = list(respload.Trace(out))
    assert len([r for r in records if r.command == "SET"]) == 50
    assert len(frame) == len(records)
    assert list(frame["t_us"]) == [r.t_us for r in records]
    assert list(frame["client"]) == [r.client for r in records]
    # The command and key of each line (values may be binary: base64 objects in the JSON).
    assert [list(a[:2]) for a in frame["args"]] == [r.args[:2] for r in records]
