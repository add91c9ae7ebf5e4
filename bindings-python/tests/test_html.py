"""The HTML report from Python (issue 46): the page of a run and of a comparison carries the
reports' own figures; the browser test is the core's (core/tests/html.rs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import respload
from respload.testing import RedisServer


def _data(page: str) -> dict:
    start = page.index('id="respload-data">') + len('id="respload-data">')
    return json.loads(page[start : page.index("</script>", start)])


def _run(redis: RedisServer, requests: int) -> respload.Report:
    return respload.run(
        target=redis.target(),
        load={"connections": 2, "requests": requests},
        commands=[{"name": "set"}, {"name": "get"}],
    )


def test_a_reports_page_holds_its_figures(redis: RedisServer, tmp_path: Path) -> None:
    report = _run(redis, 2000)
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script src" not in page
    run = _data(page)["runs"][0]
    assert run["totals"]["ops"] == report.totals.ops == 2000
    assert {c["label"]: c["ops"] for c in run["commands"]} == {
        label: s.ops for label, s in report.commands.items()
    }
    out = tmp_path / "run.html"
    report.write_html(out)
    assert out.read_text(encoding="utf-8") == page


def test_a_comparisons_page_holds_both_reports_and_the_verdicts(redis: RedisServer) -> None:
    a, b = _run(redis, 1000), _run(redis, 3000)
    page = respload.compare(a, b, labels=["small", "large"]).to_html()
    data = _data(page)
    assert [r["label"] for r in data["runs"]] == ["small", "large"]
    assert [r["totals"]["ops"] for r in data["runs"]] == [1000, 3000]
    assert data["comparison"]["labels"] == ["small", "large"]
    assert any(r["metric"] == "p99_ms" for r in data["comparison"]["rows"])


def test_a_notebook_shows_the_table_or_the_interactive_page(redis: RedisServer) -> None:
    report = _run(redis, 500)
    assert report._repr_html_().startswith("<div><p>respload")
    frame = report.interactive(height=700)._repr_html_()
    assert frame.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    assert "height: 700px" in frame
    try:
        respload.set_display("interactive")
        assert report._repr_html_().startswith("<iframe srcdoc=")
    finally:
        respload.set_display("table")
    assert report._repr_html_().startswith("<div>")
    with pytest.raises(ValueError, match="expected 'table' or 'interactive'"):
        respload.set_display("charts")  # type: ignore[arg-type]


def test_the_live_progress_grows_a_timeline_per_phase() -> None:
    from respload._progress import ProgressView

    phase = {
        "phase": "main",
        "started": True,
        "finished": False,
        "fraction": 0.5,
        "total": 10.0,
        "done": 5.0,
        "bound": "duration",
        "ops_per_sec": 900.0,
        "p50_ms": 0.1,
        "p99_ms": 0.5,
        "errors": 0,
        "line": "",
    }
    assert "<svg" not in ProgressView([phase], {"main": [1000.0]})._repr_html_()
    view = ProgressView([phase], {"main": [1000.0, 500.0, 900.0]})._repr_html_()
    points = view.split('points="')[1].split('"')[0].split()
    # One point per second, the highest at the top (y = 2), half of it halfway down.
    assert len(points) == 3
    assert [float(p.split(",")[1]) for p in points] == [2.0, 14.0, 4.4]
