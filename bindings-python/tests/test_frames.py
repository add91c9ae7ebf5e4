"""DataFrames and plots of a run of several phases: the run's timeline frame says which phase
each interval belongs to and when it ended on the wall clock, and each phase has its own
frames and plot."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

import respload
from respload.report import _histogram_curve, _percentile_curve
from respload.testing import start_redis


@pytest.fixture(scope="module")
def report() -> Iterator[respload.Report]:
    """A populate phase (not measured), then two measured phases: GETs, then SETs."""
    redis = start_redis()
    try:
        yield respload.run(
            target=redis.target(),
            load={"connections": 2},
            keys={"prefix": "f:", "range": [0, 499]},
            phases=[
                {
                    "name": "populate",
                    "measured": False,
                    "load": {"requests": 500},
                    "keys": {"distribution": "sequential"},
                    "commands": [{"name": "set"}],
                },
                {"name": "reads", "load": {"duration": "2s"}, "commands": [{"name": "get"}]},
                {"name": "writes", "load": {"duration": "2s"}, "commands": [{"name": "set"}]},
            ],
        )
    finally:
        redis.stop()


def whole(rows: list[respload.TimelineRow]) -> list[respload.TimelineRow]:
    return [r for r in rows if not r.partial]


def test_the_runs_timeline_frame_names_each_rows_phase(report: respload.Report) -> None:
    df = report.timeline_frame()
    reads, writes = report.phase("reads"), report.phase("writes")

    assert list(df.columns[:3]) == ["phase", "t", "unix_s"]
    # The measured phases' rows, one phase after the other; the populate phase has none.
    expected = ["reads"] * len(whole(reads.timeline)) + ["writes"] * len(whole(writes.timeline))
    assert list(df["phase"]) == expected
    assert len(whole(reads.timeline)) >= 2
    assert len(whole(writes.timeline)) >= 2
    by_phase = df.groupby("phase", sort=False)["ops"].sum()
    for p in (reads, writes):
        partial = sum(r.ops for r in p.timeline if r.partial)
        assert by_phase[p.name] + partial == p.totals.ops
    # `t` counts on across phases; `unix_s` is each row's own wall-clock end.
    second = df[df["phase"] == "writes"]
    assert list(second["t"]) == pytest.approx(
        [r.t + reads.duration_s for r in whole(writes.timeline)]
    )
    assert list(df["unix_s"]) == [r.unix_s for p in (reads, writes) for r in whole(p.timeline)]
    assert df["unix_s"].is_monotonic_increasing
    # The wall clock agrees with the phase's start and the row's time within it.
    for p in (reads, writes):
        rows = df[df["phase"] == p.name]
        starts = rows["unix_s"] - rows["t"] + (0.0 if p is reads else reads.duration_s)
        assert list(starts) == pytest.approx([p.started_at] * len(rows), abs=0.05)
    assert pd.to_datetime(df["unix_s"], unit="s").dt.year.min() >= 2024


def test_a_phase_has_its_own_frames(report: respload.Report) -> None:
    writes = report.phase("writes")

    df = writes.timeline_frame()
    assert set(df["phase"]) == {"writes"}
    rows = whole(writes.timeline)
    assert list(df["t"]) == [r.t for r in rows]  # the phase's own seconds
    assert list(df["ops"]) == [r.ops for r in rows]
    assert list(df["latency_ms_p99"]) == [r.latency_ms.p99 for r in rows]
    assert list(df["unix_s"]) == [r.unix_s for r in rows]
    assert list(df.columns) == list(report.timeline_frame().columns)

    latency = writes.latency_frame()
    assert list(latency.index) == ["SET", "total"]
    assert latency.loc["total", "ops"] == writes.totals.ops
    assert latency.loc["SET", "p99"] == writes.commands["SET"].latency_ms.p99
    assert latency.loc["SET", "ops"] == writes.totals.ops
    # An unmeasured phase has frames too.
    assert report.phase("populate").latency_frame().loc["total", "ops"] == 500


def test_a_phase_plots_its_own_figures(report: respload.Report) -> None:
    reads = report.phase("reads")

    fig = reads.plot()
    throughput, _latency, dist = fig.axes
    rows = whole(reads.timeline)
    x, y = throughput.lines[0].get_data()
    assert list(x) == [r.t for r in rows]
    assert list(y) == [r.ops_per_sec for r in rows]
    assert [line.get_label() for line in dist.lines] == ["GET", "all"]
    # The phase's GETs are the run's only GETs: its curve is the run's GET curve exactly,
    # drawn from the phase's own histogram.
    gx, gy = dist.lines[0].get_data()
    assert (list(gx), list(gy)) == _percentile_curve(report.to_json(), "GET")
    assert len(gx) > 10
    assert list(gy) == sorted(gy)
    assert _histogram_curve(reads.totals.histogram) == (list(gx), list(gy))

    # The run's plot marks where its second measured phase begins.
    run_fig = report.plot()
    marks = [line.get_xdata()[0] for line in run_fig.axes[0].lines[1:]]
    assert marks == [pytest.approx(reads.duration_s)]
