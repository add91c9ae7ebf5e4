"""The CLI's --hdr-log and --json, and Report.hdr_log(), decoded by Python's `hdrhistogram`
package, give the same counts and percentiles as the report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

import respload
from respload.testing import RedisServer

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "respload"


def test_hdr_log_and_json_histograms_decode_to_the_reported_percentiles(
    redis: RedisServer, tmp_path: Path
) -> None:
    if not BIN.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "respload"], cwd=ROOT, check=True)
    report_path, log_path = tmp_path / "r.json", tmp_path / "r.hlog"
    subprocess.run(
        [
            str(BIN),
            "run",
            "-q",
            "--port",
            str(redis.port),
            "-c",
            "4",
            "--duration",
            "2500ms",
            "--json",
            str(report_path),
            "--hdr-log",
            str(log_path),
        ],
        check=True,
        capture_output=True,
    )
    report = json.loads(report_path.read_text())
    rows = report["timeline"]
    assert len(rows) >= 3

    reader = HistogramLogReader(str(log_path), HdrHistogram(1, 3_600_000_000_000, 3))
    decoded = 0
    while (h := reader.get_next_interval_histogram()) is not None:
        row = rows[decoded]
        assert h.get_total_count() == row["ops"] > 0
        top = row["latency_ms"]["max"]
        for pct, key in ((50.0, "p50"), (99.0, "p99")):
            # Percentiles are the histogram's, capped at the exact maximum.
            assert min(h.get_value_at_percentile(pct) / 1e6, top) == row["latency_ms"][key]
        decoded += 1
    assert decoded == len(rows)

    totals = report["totals"]
    h = HdrHistogram.decode(totals["histogram"])
    assert h.get_total_count() == totals["ops"]
    for pct, key in ((50.0, "p50"), (90.0, "p90"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99_9")):
        assert (
            min(h.get_value_at_percentile(pct) / 1e6, totals["latency_ms"]["max"])
            == totals["latency_ms"][key]
        )


def test_the_reports_interval_log_decodes_to_its_timeline(
    redis: RedisServer, tmp_path: Path
) -> None:
    report = respload.run(
        target=redis.target(),
        load={"connections": 2, "duration": "2500ms"},
        output={"interval_histograms": True},
    )
    path = tmp_path / "r.hlog"
    report.write_hdr_log(path)
    assert path.read_text() == report.hdr_log()
    reader = HistogramLogReader(str(path), HdrHistogram(1, 3_600_000_000_000, 3))
    counts = []
    while (h := reader.get_next_interval_histogram()) is not None:
        counts.append(h.get_total_count())
    assert counts == [row.ops for row in report.timeline]
    assert len(counts) >= 3
    assert sum(counts) == report.totals.ops

    # Without interval histograms there is no log to write: the option is named.
    plain = respload.run(target=redis.target(), load={"requests": 100})
    with pytest.raises(respload.SpecError) as caught:
        plain.hdr_log()
    assert caught.value.path == "output.interval_histograms"
