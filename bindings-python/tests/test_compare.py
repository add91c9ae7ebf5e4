"""Comparing reports (issue 28): a server made slower by a known amount, against a real one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import respload
import respload.cli
from respload.testing import RedisServer

SPIN = (
    "local s = redis.call('TIME') local t0 = tonumber(s[1]) * 1000000 + tonumber(s[2]) "
    "repeat local t = redis.call('TIME') "
    "if tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 >= tonumber(ARGV[1]) then return 1 end "
    "until false"
)


def _spins(redis: RedisServer, sha: str, us: int) -> respload.Report:
    return respload.run(
        target=redis.target(),
        load={"connections": 1, "requests": 1000},
        commands=[{"template": f"EVALSHA {sha} 0 {us}", "label": "spin"}],
        observe={"info": False},
    )


def test_a_slower_run_is_worse_and_check_names_it(
    redis: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = redis.call("SCRIPT", "LOAD", SPIN)
    base, slow = _spins(redis, sha, 100), _spins(redis, sha, 500)
    c = respload.compare(base, slow)
    assert c.labels == ["baseline", "current"]
    p50 = next(r for r in c.rows if r.command == "SPIN" and r.metric == "p50_ms")
    assert p50.values == [
        base.commands["SPIN"].latency_ms.p50,
        slow.commands["SPIN"].latency_ms.p50,
    ]
    assert p50.changes[0] is None
    assert p50.changes[1] is not None
    assert p50.changes[1] > 1.5
    assert p50.worse == [False, True]
    assert p50 in c.worse
    with pytest.raises(AssertionError) as caught:
        c.check(p50_ms="+50%", error_rate=0.01)
    message = str(caught.value)
    assert "current: SPIN p50_ms of phase `main`" in message
    assert "past the limit p50_ms=+50%" in message
    assert c.check(p50_ms="+100000%").failures == []
    with pytest.raises(respload.SpecError) as bad:
        c.check(p42="+1%")
    assert "unknown limit `p42` (allowed: p50_ms, p90_ms, p99_ms, p99_9_ms" in bad.value.reason
    # Files are labelled by name; a frame has one row per phase, command, metric and report.
    base.save(tmp_path / "base.json")
    slow.save(tmp_path / "slow.json")
    by_file = respload.compare(tmp_path / "base.json", str(tmp_path / "slow.json"), base)
    assert by_file.labels == ["base.json", "slow.json", "run 2"]
    # str() is the table `respload compare` prints for the same files (labelled as given:
    # by name, from their directory).
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    files = ["base.json", "slow.json"]
    assert respload.cli.main(["compare", *files], stdout=printed) == 0
    two = respload.compare(*files)
    assert str(two) == two.text == printed.getvalue()
    assert "SPIN" in two.text
    assert "worse" in two.text
    frame = by_file.frame()
    assert list(frame.columns) == [
        "phase",
        "command",
        "metric",
        "report",
        "value",
        "change",
        "worse",
    ]
    assert len(frame) == len(by_file.rows) * 3
    worse = frame[(frame.command == "SPIN") & (frame.metric == "p50_ms") & frame.worse]
    assert list(worse.report) == ["slow.json"]
    html = c._repr_html_()
    assert "<table>" in html
    assert html.startswith('<div class="respload-comparison">')  # what run-notebook.py finds
    assert "color:#c00" in html
    assert "1 limit" not in repr(c)
    assert "worse beyond noise" in repr(c)
    fig = c.plot()
    assert len(fig.axes) == 2
    assert [len(ax.get_lines()) for ax in fig.axes] == [2, 2]


def test_percentile_distribution_is_the_whole_histogram_as_hgrm(redis: RedisServer) -> None:
    r = respload.run(
        target=redis.target(),
        load={"connections": 2, "requests": 3000},
        commands=[{"name": "set"}, {"name": "get"}],
        observe={"info": False},
    )
    rows = [
        [float(w) for w in line.split()]
        for line in r.percentile_distribution().splitlines()
        if line.strip()[:1].isdigit()
    ]
    assert len(rows) > 10
    assert rows[-1][1:3] == [1.0, 3000.0]
    # Values rise with the percentile; the median and the last row are the report's p50, max.
    assert all(b[0] >= a[0] and b[1] > a[1] for a, b in zip(rows, rows[1:]))
    median = next(row for row in rows if row[1] >= 0.5)
    lat = r.totals.latency_ms
    assert median[0] == pytest.approx(lat.p50, abs=0.001, rel=0.002)
    assert rows[-1][0] == pytest.approx(lat.max, abs=0.001, rel=0.002)
    gets = r.percentile_distribution("GET").splitlines()
    assert f"Total count    = {r.commands['GET'].ops:>12}]" in gets[-1]
    with pytest.raises(respload.SpecError, match="no command `HSET`") as e:
        r.percentile_distribution("HSET")
    assert e.value.path == "command"


def test_a_partial_last_row_is_left_out_of_frames_and_plots(redis: RedisServer) -> None:
    r = respload.run(
        target=redis.target(), load={"connections": 2, "duration": "1s"}, observe={"info": False}
    )
    whole = [row for row in r.timeline if not row.partial]
    assert len(whole) >= 1
    assert all(row.interval_s > 0.9 for row in whole)
    assert r.timeline[-1].partial == (r.timeline[-1].interval_s < 0.5)
    assert len(r.timeline_frame()) == len(whole)
    fig = r.plot()
    throughput, _, dist = fig.axes
    assert len(throughput.get_lines()[0].get_xdata()) == len(whole)
    # The whole distribution, decoded: far more than the six summary percentiles.
    assert len(dist.get_lines()[-1].get_xdata()) > 30
