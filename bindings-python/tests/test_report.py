"""respload.Report: typed access, the core's JSON, histograms and DataFrames."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

import respload
from respload.testing import RedisServer, redis_server, start_redis
from typed import typed_json


@pytest.fixture(scope="module")
def report() -> Iterator[respload.Report]:
    redis = start_redis()
    try:
        yield respload.run(
            target=redis.target(),
            load={"connections": 4, "duration": "2s"},
            keys={"prefix": "r:", "range": [0, 999]},
            commands=[{"name": "set", "weight": 1}, {"name": "get", "weight": 3}],
            seed=11,
        )
    finally:
        redis.stop()


def test_typed_access_mirrors_the_json(report: respload.Report) -> None:
    d = json.loads(report.to_json())

    assert report.to_dict() == d
    assert d["schema_version"] == report.schema_version == respload.SCHEMA_VERSION
    assert report.totals.ops == d["totals"]["ops"] > 0
    assert report.totals.ops_per_sec == d["totals"]["ops_per_sec"] > 0
    assert report.totals.latency_ms.p99 == d["totals"]["latency_ms"]["p99"] > 0
    assert report.totals.latency_ms.p99_9 == d["totals"]["latency_ms"]["p99_9"]
    assert set(report.commands) == set(d["commands"]) == {"GET", "SET"}
    assert report.commands["GET"].hits == d["commands"]["GET"]["hits"]
    assert report.commands["GET"].ops + report.commands["SET"].ops == report.totals.ops
    assert len(report.timeline) == len(d["timeline"]) >= 2
    assert report.timeline[0].ops_per_sec == d["timeline"][0]["ops_per_sec"] > 0
    assert report.timeline[-1].t == pytest.approx(report.duration_s)
    assert report.phases[0].name == "main"
    # A one-phase run's rows are its phase's rows: built once, shared.
    assert len(report.phases[0].timeline) == len(report.timeline)
    assert all(a is b for a, b in zip(report.timeline, report.phases[0].timeline))
    assert report.client.connections == 4
    assert report.server.version == d["server"]["version"] != ""
    assert report.workload == d["workload"]
    assert report.seed == 11
    assert "ops/s" in repr(report)


def test_a_run_row_unlike_its_phase_row_is_read_as_written(report: respload.Report) -> None:
    d = report.to_dict()
    d["timeline"][0]["ops"] += 1
    back = respload.Report.from_json(json.dumps(d))
    assert back.timeline[0].ops == report.timeline[0].ops + 1
    assert back.phases[0].timeline[0].ops == report.phases[0].timeline[0].ops
    assert back.timeline[1] is back.phases[0].timeline[1]


def test_json_round_trip(report: respload.Report) -> None:
    # Every field of the core's JSON is a typed attribute: rebuilt from them alone, it is equal.
    assert typed_json(report) == report.to_dict()
    again = respload.Report.from_json(report.to_json())
    assert again == report
    assert respload.Report.from_dict(report.to_dict()) == report


SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "reference" / "report.schema.json"


def undeclared(value: object, schema: dict, defs: dict, at: str) -> list[str]:
    """The keys of `value` that the schema does not name (JSON Schema allows any by default)."""
    if "$ref" in schema:
        return undeclared(value, defs[schema["$ref"].removeprefix("#/$defs/")], defs, at)
    for option in schema.get("anyOf", []):
        if option != {"type": "null"} and value is not None:
            return undeclared(value, option, defs, at)
    out = []
    if isinstance(value, dict) and "properties" in schema:
        for key, v in value.items():
            if key not in schema["properties"]:
                out.append(f"{at}.{key}")
            else:
                out += undeclared(v, schema["properties"][key], defs, f"{at}.{key}")
    elif isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for key, v in value.items():
            out += undeclared(v, schema["additionalProperties"], defs, f"{at}[{key}]")
    elif isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            out += undeclared(v, schema["items"], defs, f"{at}[{i}]")
    return out


def test_reports_hold_to_the_published_json_schema(report: respload.Report) -> None:
    # docs/reference/report.schema.json (`respload schema report`, derived from the Rust
    # types) describes what runs write: closed and open loop, keys and types.
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    redis = start_redis()
    try:
        open_loop = respload.run(
            target=redis.target(),
            load={"connections": 2, "rate": 500, "duration": "1s"},
            commands=[{"name": "get"}],
        )
    finally:
        redis.stop()
    for r in (report, open_loop):
        d = r.to_dict()
        assert sorted(validator.iter_errors(d), key=str) == []
        assert undeclared(d, schema, schema["$defs"], "report") == []
    assert open_loop.totals.send_lag_ms is not None
    # Not a schema that takes anything: a missing key, a wrong type and a stray key are seen.
    d = report.to_dict()
    del d["totals"]
    d["timeline"][0]["ops"] = "many"
    d["client"]["surprise"] = 1
    errors = sorted(e.message for e in validator.iter_errors(d))
    assert any("'totals' is a required property" in e for e in errors), errors
    assert any("'many' is not of type 'integer'" in e for e in errors), errors
    assert undeclared(d, schema, schema["$defs"], "report") == ["report.client.surprise"]


def test_histogram_decodes_to_the_reported_percentiles(report: respload.Report) -> None:
    h = report.histogram()

    assert h.get_total_count() == report.totals.ops
    max_ns = round(report.totals.latency_ms.max * 1e6)
    for pct, reported in [(50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p99_9")]:
        # Values are ns, the report's are ms (capped at the exact max).
        decoded_ms = min(h.get_value_at_percentile(pct), max_ns) / 1e6
        assert decoded_ms == getattr(report.totals.latency_ms, reported), pct
    get = report.histogram("GET")
    assert get.get_total_count() == report.commands["GET"].ops


def test_timeline_frame_has_one_row_per_interval(report: respload.Report) -> None:
    df = report.timeline_frame()

    assert isinstance(df, pd.DataFrame)
    # The partial last row (the replies after the measured time) is left out, still counted.
    whole = [r for r in report.timeline if not r.partial]
    assert len(df) == len(whole) >= 2
    assert list(df["ops"]) == [r.ops for r in whole]
    partial_ops = sum(r.ops for r in report.timeline if r.partial)
    assert df["ops"].sum() + partial_ops == report.totals.ops
    assert list(df["latency_ms_p99"]) == [r.latency_ms.p99 for r in whole]
    assert (df["ops_per_sec"] > 0).all()
    assert list(df["reconnects"]) == [0] * len(whole)
    # Closed loop: no open-loop columns.
    assert "target_rate" not in df.columns
    assert "send_lag_ms_p99" not in df.columns
    # The server's CPU per interval, as its samples say (the last, short interval may lack
    # one when the observer was late).
    joined = [r.server_cpu_percent for r in report.timeline]
    assert joined[0] == report.server_timeline[0].cpu_percent
    assert joined[:-1].count(None) == 0
    assert {c for c in joined if c is not None} <= {s.cpu_percent for s in report.server_timeline}
    kept = [r.server_cpu_percent for r in whole if r.server_cpu_percent is not None]
    assert list(df["server_cpu_percent"].dropna()) == kept


def test_latency_frame_has_a_row_per_command_and_total(report: respload.Report) -> None:
    df = report.latency_frame()

    assert list(df.index) == ["GET", "SET", "total"]
    assert df.loc["total", "ops"] == report.totals.ops
    assert df.loc["GET", "p99"] == report.commands["GET"].latency_ms.p99
    assert df["ops"].drop("total").sum() == report.totals.ops


def test_check_passes_and_fails_as_it_should(report: respload.Report) -> None:
    t = report.totals
    p99 = t.latency_ms.p99
    assert report.check(p99_ms=p99, error_rate=0.0, ops_per_sec=1) is report
    every = {"p50_ms": t.latency_ms.p50, "p99_ms": p99, "p99_9_ms": t.latency_ms.p99_9}
    assert report.check(**every, commands={"GET": {"error_rate": 0}}) is report

    over = r"totals: p99 latency .* ms is over the budget of 0\.000001 ms"
    with pytest.raises(AssertionError, match=over):
        report.check(p99_ms=1e-6)
    under = r"totals: throughput .* ops/s \(\d+ requests in .* s\) is under the budget of "
    with pytest.raises(AssertionError, match=under + "1000000000 ops/s"):
        report.check(ops_per_sec=1e9)
    with pytest.raises(AssertionError) as caught:
        report.check(p99_ms=1e-6, ops_per_sec=1e9, commands={"GET": {"p50_ms": 0}, "DEL": {}})
    message = str(caught.value)
    assert message.startswith(f"respload budget not met ({t.ops} requests in ")
    assert "totals: p99 latency" in message
    assert "totals: throughput" in message
    assert "commands.GET: p50 latency" in message
    assert "commands.DEL: not in the report (commands: GET, SET)" in message

    # A bad limit names itself; a typo never passes silently.
    with pytest.raises(respload.SpecError) as bad:
        report.check(commands={"GET": {"p99": 1}})
    assert bad.value.path == "check.commands.GET"
    assert "unknown limit `p99`" in str(bad.value)
    with pytest.raises(respload.SpecError, match="0 to 1"):
        report.check(error_rate=5)
    with pytest.raises(respload.SpecError) as bad:
        report.check(commands={"GET": {"p99_ms": float("nan")}})
    assert bad.value.path == "check.commands.GET.p99_ms"


def test_check_fails_on_errors_and_on_a_partial_run(
    redis_with_password: RedisServer, report: respload.Report
) -> None:
    # A server that refuses GET: every request is an error reply, counted, not raised.
    redis_with_password.call("ACL", "SETUSER", "default", "-get")
    failing = respload.run(
        target={"url": redis_with_password.url, "password": "hunter2"},
        load={"requests": 200, "connections": 2},
        commands=[{"name": "get"}],
    )
    assert failing.totals.errors == 200 == failing.totals.ops
    assert failing.totals.error_rate == 1.0
    rate = r"totals: error rate 100% \(200 of 200 requests: NOPERM 200\) is over the budget of 1%"
    with pytest.raises(AssertionError, match=rate):
        failing.check(error_rate=0.01)
    # The same report, marked interrupted, fails every check.
    partial = respload.Report.from_dict({**report.to_dict(), "interrupted": True})
    with pytest.raises(AssertionError, match="the run was interrupted: its report is partial"):
        partial.check()


def test_html_summary(report: respload.Report) -> None:
    html = report._repr_html_()
    assert "<table>" in html
    assert "GET" in html
    assert "SET" in html
    assert f"{report.totals.ops:,}" in html


def test_plot_draws_throughput_latency_and_the_distribution(report: respload.Report) -> None:
    fig = report.plot()

    throughput, latency, dist = fig.axes
    # The drain after the measured time (a partial row of milliseconds) is not drawn as a rate.
    rows = [r for r in report.timeline if not r.partial]
    assert len(rows) >= 2
    assert all(r.interval_s > 0.5 for r in rows)
    (line,) = throughput.get_lines()
    assert list(line.get_ydata()) == [r.ops_per_sec for r in rows]
    p50, p99 = latency.get_lines()
    assert list(p50.get_ydata()) == [r.latency_ms.p50 for r in rows]
    assert list(p99.get_ydata()) == [r.latency_ms.p99 for r in rows]
    assert [ln.get_label() for ln in dist.get_lines()] == ["GET", "SET", "all"]
    assert dist.get_xscale() == "log"
    # HdrHistogram's percentile axis: ticks at 1/(1-p), labelled as percentiles.
    labels = [t.get_text() for t in dist.get_xticklabels()]
    assert labels[:4] == ["0%", "90%", "99%", "99.9%"]
    assert list(dist.get_xticks()[:4]) == pytest.approx([1, 10, 100, 1000])
    # The whole distribution: the core's percentile distribution (the .hgrm rows but the
    # last, p = 1), each point the histogram's own value at its percentile.
    xs, ys = dist.get_lines()[-1].get_xdata(), dist.get_lines()[-1].get_ydata()
    assert len(xs) > 30
    table = [ln.split() for ln in report.percentile_distribution().splitlines()]
    hgrm = [(float(r[3]), float(r[0])) for r in table if len(r) == 4 and r[0][0].isdigit()]
    assert list(zip(xs, ys)) == hgrm
    h = report.totals.decode_histogram()
    at_p99 = min(range(len(xs)), key=lambda i: abs(xs[i] - 100))
    p = (1 - 1 / xs[at_p99]) * 100
    assert ys[at_p99] == pytest.approx(h.get_value_at_percentile(p) / 1e6, abs=0.0015)
    # One command's curve is that command's distribution.
    gets = [ln.split() for ln in report.percentile_distribution("GET").splitlines()]
    get_curve = [(float(r[3]), float(r[0])) for r in gets if len(r) == 4 and r[0][0].isdigit()]
    gx, gy = dist.get_lines()[0].get_data()
    assert list(zip(gx, gy)) == get_curve


def test_plots_need_only_matplotlib(
    report: respload.Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pip install 'respload[plot]'` installs matplotlib, not the hdrhistogram package: the
    # plots take their curves from the core.
    monkeypatch.setitem(sys.modules, "hdrh", None)
    monkeypatch.setitem(sys.modules, "hdrh.histogram", None)
    with pytest.raises(ImportError, match="hdrhistogram"):
        report.totals.decode_histogram()
    fig = report.plot()
    assert [len(ln.get_xdata()) > 30 for ln in fig.axes[2].get_lines()] == [True] * 3
    fig = respload.compare(report, report, labels=["a", "b"]).plot()
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == ["a", "b"]


def test_open_loop_and_server_samples_are_typed(redis: RedisServer) -> None:
    report = respload.run(
        target=redis.target(),
        load={"connections": 4, "rate": 400, "duration": "2s"},
        commands=[{"name": "get"}],
    )
    phase = report.phases[0]
    assert phase.target_rate == 400
    assert report.totals.service_ms is not None
    assert report.totals.service_ms.p50 <= report.totals.latency_ms.max
    assert abs(report.totals.ops_per_sec / 400 - 1) < 0.05
    assert all(row.service_ms is not None for row in report.timeline if row.ops > 0)
    df = report.timeline_frame()
    timeline = [row for row in report.timeline if not row.partial]
    assert len(df) == len(timeline)
    assert (df["target_rate"] == 400).sum() >= 2
    for rate, p99, row in zip(df["target_rate"], df["service_ms_p99"], timeline):
        # pandas holds a None of a float column as NaN.
        assert row.target_rate == rate or (row.target_rate is None and pd.isna(rate))
        assert (row.service_ms is None and pd.isna(p99)) or row.service_ms.p99 == p99
    # An unloaded server keeps up: requests hardly wait to be sent, and the columns are typed.
    waiting = [row.waiting for row in report.timeline]
    assert all(w is not None and w <= 40 for w in waiting), waiting
    assert list(df["waiting"]) == [row.waiting for row in timeline]
    assert report.client.waiting_max == max(waiting)
    assert report.client.behind_ms_max == max(r.behind_ms or 0 for r in report.timeline)
    assert list(df["behind_ms"].fillna(0)) == [r.behind_ms or 0 for r in timeline]
    assert "send_lag_ms" not in df.columns
    for p50, p99, row in zip(df["send_lag_ms_p50"], df["send_lag_ms_p99"], timeline):
        if row.send_lag_ms is None:
            assert pd.isna(p50)
            assert pd.isna(p99)
        else:
            assert (row.send_lag_ms.p50, row.send_lag_ms.p99) == (p50, p99)
    assert len(report.server_timeline) >= 2
    assert report.server_timeline[0].role == "master"
    assert report.server_load is not None
    assert report.server_load.cpu_limit_percent == 80
    assert report.server_load.samples == len(report.server_timeline)
    assert typed_json(report) == report.to_dict()


def test_closed_loop_has_no_send_lag_and_checks_the_client_only(report: respload.Report) -> None:
    assert report.totals.send_lag_ms is None
    assert report.totals.send_lag_histogram is None
    assert all(s.send_lag_ms is None for s in report.commands.values())
    assert all(r.send_lag_ms is None and r.behind_ms is None for r in report.timeline)
    assert report.unsent is None
    assert 0 < report.client.busy_max <= 1
    with pytest.raises(ValueError, match="open loop only"):
        report.totals.decode_send_lag_histogram()
    # Closed loop has no schedule to keep: only the client's CPU is checked.
    assert [c.check for c in report.validity.checks] == ["client_busy"]
    (busy,) = report.validity.checks
    assert busy.phase == "main"
    assert busy.value == report.client.busy_max
    assert busy.limit == 0.8
    assert report.validity.trusted == busy.passed
    assert report.phases[0].validity == report.validity


def test_open_loop_reports_send_lag_and_validity() -> None:
    with redis_server() as server:
        report = respload.run(
            target=server.target(),
            load={"connections": 4, "rate": 1000, "duration": "2s"},
            commands=[{"name": "set", "weight": 1}, {"name": "get", "weight": 1}],
        )
    lag = report.totals.send_lag_ms
    assert lag is not None
    assert lag.p99 >= lag.p50 > 0
    assert lag.max >= lag.p99
    # The send lag is part of the latency, which counts from the intended send time.
    assert lag.p50 <= report.totals.latency_ms.max
    h = report.totals.decode_send_lag_histogram()
    assert h.get_total_count() > 0
    for label in ("GET", "SET"):
        assert report.commands[label].send_lag_ms is not None
    phase = report.phases[0]
    assert phase.totals.send_lag_ms == lag
    rows = [r for r in report.timeline if r.ops > 0]
    assert rows
    for row in rows:
        assert row.send_lag_ms is not None
        assert row.send_lag_ms.max >= row.send_lag_ms.p99 >= row.send_lag_ms.p50 >= 0
    assert 0 < report.client.busy_max <= 1

    checks = {c.check: c for c in report.validity.checks}
    assert {"client_lag", "rate", "client_busy"} <= set(checks)
    assert "arrivals" not in checks  # uniform arrivals: no distribution to test
    send_lag = checks["client_lag"]
    assert send_lag.phase == "main"
    assert report.client_lag_ms is not None
    assert send_lag.value == report.client_lag_ms.p99
    # The client's own part of the send lag, never more than the whole.
    assert report.client_lag_ms.max <= lag.max
    assert send_lag.limit == max(0.1 * report.totals.latency_ms.p50, 0.05)
    assert send_lag.passed == (send_lag.value <= send_lag.limit)
    assert send_lag.detail
    assert report.validity.trusted == all(c.passed for c in report.validity.checks)
    assert report.validity.failed == [c for c in report.validity.checks if not c.passed]
    assert phase.validity == report.validity
    assert typed_json(report) == report.to_dict()


def _untrusted_copy(report: respload.Report, check: str, detail: str) -> respload.Report:
    """The report with one validity check (report-level and its phase's) marked failed."""
    d = report.to_dict()
    for validity in [d["validity"], *(p["validity"] for p in d["phases"])]:
        for c in validity["checks"]:
            c["passed"] = c["check"] != check
            if c["check"] == check:
                c["detail"] = detail
        validity["trusted"] = all(c["passed"] for c in validity["checks"])
    return respload.Report.from_dict(d)


def test_check_warns_on_an_untrusted_report(report: respload.Report) -> None:
    detail = "the busiest worker thread was busy 97% of the time: the client is in these figures"
    untrusted = _untrusted_copy(report, "client_busy", detail)
    assert not untrusted.validity.trusted
    with pytest.warns(respload.UntrustedReportWarning) as caught:
        # The warning alone does not fail the check.
        assert untrusted.check(error_rate=0) is untrusted
    (warning,) = caught
    assert issubclass(warning.category, RuntimeWarning)
    assert warning.filename == __file__  # points at the caller
    message = str(warning.message)
    assert message.startswith("respload: this report's figures are not trusted (1 of 1 ")
    assert message.endswith(f"validity checks failed):\n  - client_busy (main): {detail}")
    assert isinstance(warning.message, respload.UntrustedReportWarning)
    assert warning.message.checks == untrusted.validity.failed
    # A budget missed still fails, after the warning.
    with pytest.warns(respload.UntrustedReportWarning), pytest.raises(AssertionError):
        untrusted.check(p99_ms=1e-6)
    # A trusted report does not warn.
    trusted = _untrusted_copy(report, "none", "")
    assert trusted.validity.trusted
    # A report written before schema 2 has no validity: read as trusted, with no checks.
    d = report.to_dict()
    del d["validity"]
    for p in d["phases"]:
        del p["validity"]
    older = respload.Report.from_dict(d)
    assert older.validity == respload.Validity(trusted=True, checks=[])
    with warnings.catch_warnings():
        warnings.simplefilter("error", respload.UntrustedReportWarning)
        assert trusted.check() is trusted
        assert older.check() is older


def test_a_phase_on_another_server_has_its_own_facts(
    redis: RedisServer, redis_with_password: RedisServer
) -> None:
    report = respload.run(
        target=redis.target(),
        load={"requests": 100, "connections": 1},
        commands=[{"name": "set"}],
        phases=[
            {"name": "here"},
            {"name": "there", "target": {"url": redis_with_password.url, "password": "hunter2"}},
        ],
    )
    assert report.server.address == redis.address
    assert report.phases[0].server is None
    there = report.phases[1].server
    assert there is not None
    assert there.address == redis_with_password.address
    assert there.version == report.server.version
    assert typed_json(report) == report.to_dict()


def test_a_saved_report_loads_back_and_finds_its_phases(
    report: respload.Report, tmp_path: Path
) -> None:
    path = tmp_path / "report.json"
    report.save(path)
    back = respload.Report.load(path)
    assert back.to_dict() == report.to_dict()
    name = report.phases[0].name
    assert back.phase(name).totals.ops == report.phases[0].totals.ops
    with pytest.raises(KeyError, match=r"no phase 'nope' in this report \(phases: "):
        back.phase("nope")
    # A newer schema version is refused by its version; a missing file is a FileError.
    newer = report.to_dict()
    newer["schema_version"] = 99
    path.write_text(json.dumps(newer))
    with pytest.raises(respload.SpecError, match=r"99: this report was written by a newer"):
        respload.Report.load(path)
    with pytest.raises(respload.FileError):
        respload.Report.load(tmp_path / "missing.json")


def test_a_schema_1_report_loads_upgraded(report: respload.Report, tmp_path: Path) -> None:
    old = report.to_dict()
    old["schema_version"] = 1
    for row in old["timeline"]:
        row.pop("send_lag_ms", None)
        row["send_lag_ms"] = 1.5  # schema 1's gauge, a number
    old["client"]["send_lag_ms_max"] = 1.5
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    back = respload.Report.load(path)
    assert back.schema_version == respload.SCHEMA_VERSION
    assert all(r.behind_ms == 1.5 and r.send_lag_ms is None for r in back.timeline)
    assert back.client.behind_ms_max == 1.5
