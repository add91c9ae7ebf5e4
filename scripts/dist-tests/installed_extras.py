"""Each extra as a user gets it (scripts/test-dist.sh runs this once per extra, each in a fresh
venv holding only the wheel installed with that extra, from a directory outside the
repository, with no cargo or rustc on PATH): what the extra is for works from it alone.

    python installed_extras.py EXTRA     # pandas, plot, hdrhistogram or ray

- ``pandas``: a report's frames (timeline and per command) hold the report's own figures.
- ``plot``: ``Report.plot()`` draws a figure with the Agg backend, with no ``hdrhistogram``
  package installed (the percentile curves come from the core).
- ``hdrhistogram``: a report's histogram decodes, and counts every measured request.
- ``ray``: ``respload.distributed.run`` runs a workload from one host of a local Ray cluster.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import respload
from respload.testing import redis_server

REQUESTS = 4_000


def workload(url: str) -> dict[str, object]:
    """An open-loop run of 2 s (a timeline of a few rows): SET and GET on a small key range."""
    return {
        "target": {"url": url},
        "load": {"connections": 2, "requests": REQUESTS, "rate": 2_000},
        "keys": {"prefix": "extra:", "range": [0, 99]},
        "commands": [{"name": "set"}, {"name": "get"}],
    }


def absent(module: str) -> None:
    """``module`` is not installed: what is checked works without it."""
    assert importlib.util.find_spec(module) is None, f"{module} is installed in this venv"


def check_pandas(report: respload.Report) -> None:
    absent("matplotlib")
    frame = report.timeline_frame()
    assert len(frame) == len(report.timeline), (len(frame), len(report.timeline))
    assert int(frame["ops"].sum()) == sum(r.ops for r in report.timeline)
    latency = report.latency_frame()
    assert list(latency.index) == [*report.commands, "total"], list(latency.index)
    assert int(latency.loc["total", "ops"]) == report.totals.ops == REQUESTS


def check_plot(report: respload.Report) -> None:
    absent("hdrh")  # the module the `hdrhistogram` package installs
    import matplotlib

    matplotlib.use("Agg")
    figure = report.plot()
    with tempfile.TemporaryDirectory() as d:
        png = Path(d) / "report.png"
        figure.savefig(png)
        size = png.stat().st_size
    assert size > 10_000, f"the plot is {size} bytes"
    assert figure.axes, "the figure has no axes"


def check_hdrhistogram(report: respload.Report) -> None:
    absent("pandas")
    histogram = report.histogram()
    assert histogram.get_total_count() == report.totals.ops == REQUESTS
    p99_ms = histogram.get_value_at_percentile(99.0) / 1e6
    assert abs(p99_ms - report.totals.latency_ms.p99) <= 0.01 * report.totals.latency_ms.p99 + 1e-3


def check_ray(url: str) -> None:
    import respload.distributed

    report = respload.distributed.run(workload(url), hosts=1, placement="pack", start_delay=1.0)
    assert report.totals.ops == REQUESTS, report.totals.ops
    assert [h.shard for h in report.hosts] == [0], report.hosts


def main(extra: str) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    with redis_server() as server:
        if extra == "ray":
            check_ray(server.url)
        else:
            report = respload.run(workload(server.url))
            assert report.totals.ops == REQUESTS, report.totals
            assert report.totals.errors == 0, report.totals.errors_by_kind
            {"pandas": check_pandas, "plot": check_plot, "hdrhistogram": check_hdrhistogram}[extra](
                report
            )
    print(f"installed_extras: [{extra}] works from the wheel", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
