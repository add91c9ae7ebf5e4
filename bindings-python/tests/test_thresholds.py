"""Thresholds in the spec from Python: ``report.passed``, each threshold judged on the
report's own figures, ``abort_on_fail`` stopping the run, the HTML summary listing them."""

from __future__ import annotations

import json
import time

import pytest

import respload
from respload.testing import RedisServer
from typed import typed_json


def test_thresholds_are_judged_and_listed(redis: RedisServer) -> None:
    report = respload.run(
        {
            "target": redis.target(),
            "load": {"requests": 500, "connections": 2},
            "thresholds": {
                "p99_ms": 10_000,
                "max_ms": 0.000001,
                "commands": {"GET": {"ops_per_sec": 1}},
            },
        }
    )
    assert redis.calls("get") + redis.calls("set") == 500
    by_name = {t.name: t for t in report.thresholds}
    assert list(by_name) == ["p99_ms", "max_ms", "commands.GET.ops_per_sec"]
    assert by_name["p99_ms"].value == report.totals.latency_ms.p99
    assert by_name["max_ms"].value == report.totals.latency_ms.max
    assert by_name["commands.GET.ops_per_sec"].value == report.commands["GET"].ops_per_sec
    assert [t.passed for t in report.thresholds] == [True, False, True]
    assert report.passed is False
    assert "thresholds FAILED" in repr(report)
    html = report._repr_html_()
    assert "Thresholds: 1 of 3 FAILED" in html
    assert "<td>max_ms</td>" in html
    # Every field typed: the JSON rebuilt from the attributes alone is the core's.
    assert typed_json(report) == json.loads(report.to_json())
    # Saved and loaded, the verdicts stay.
    again = respload.Report.from_json(report.to_json())
    assert again.thresholds == report.thresholds
    assert not again.passed


def test_abort_on_fail_stops_the_run_early(redis: RedisServer) -> None:
    started = time.monotonic()
    report = respload.run(
        {
            "target": redis.target(),
            "load": {"rate": 1000, "duration": "30s", "connections": 1},
            "observe": {"info": False},
            "thresholds": {"p50_ms": 0.000001, "abort_on_fail": True},
        }
    )
    assert time.monotonic() - started < 6
    assert report.stopped_by is not None
    assert "threshold `p50_ms`" in report.stopped_by
    assert report.thresholds[0].stopped_run
    assert not report.passed
    assert not report.interrupted
    assert redis.calls("get") + redis.calls("set") == report.totals.ops


def test_check_takes_p90_and_max(redis: RedisServer) -> None:
    report = respload.run(target=redis.target(), load={"requests": 200})
    assert report.passed
    assert report.thresholds == []
    report.check(p90_ms=10_000, max_ms=10_000)
    with pytest.raises(
        AssertionError, match=r"totals: max latency .* over the budget of 0\.000001 ms"
    ):
        report.check(max_ms=0.000001)
    with pytest.raises(respload.SpecError, match=r"thresholds.p99_ms`: `\"x\"` is not a number"):
        respload.run({"target": redis.target(), "thresholds": {"p99_ms": "x"}})
