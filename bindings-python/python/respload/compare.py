"""Comparing reports: a baseline against later runs (:func:`compare`), as
``respload compare`` does. The comparison and its noise rules are the core's
(docs/report.md, "Comparing reports"); this module types it and draws it."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _native
from .report import Report, _matplotlib, _pandas, _percentile_axis, _percentile_curve

if TYPE_CHECKING:
    import pandas
    from matplotlib.figure import Figure
    from typing_extensions import Unpack

    from ._limits import CompareLimits

__all__ = ["Comparison", "ComparisonRow", "ReportLike", "compare"]

_Json = dict[str, Any]

ReportLike = Union[Report, str, "os.PathLike[str]"]
"""A :class:`Report`, or the path of a report file."""


# generated: ComparisonRow (from core/src/report/compare.rs by scripts/gen_reference.py)
@dataclass(frozen=True)
class ComparisonRow:
    """One metric of one command of one phase, in every report."""

    phase: str
    """The phase (by name; a phase a report does not have leaves its value ``null``)."""
    command: str
    """The command's label, or ``ALL`` for the phase's totals."""
    metric: str
    """One of the limit names (``LIMITS``): ``p50_ms``, ``p90_ms``, ``p99_ms``, ``p99_9_ms``,
    ``max_ms`` (latencies in ms), ``error_rate`` or ``ops_per_sec``."""
    values: list[float | None]
    """The value in each report, the baseline's first."""
    changes: list[float | None]
    """Each report's change against the baseline: relative (0.1 is +10%) for every metric but
    ``error_rate``, whose change is the difference; ``null`` for the baseline itself and where
    either value is missing (or the baseline's is 0 for a relative change)."""
    worse: list[bool]
    """Whether each report is worse than the baseline beyond noise (the baseline's: false)."""

    @classmethod
    def from_dict(cls, d: _Json) -> ComparisonRow:
        """A ComparisonRow from its JSON object."""
        return cls(
            phase=d["phase"],
            command=d["command"],
            metric=d["metric"],
            values=list(d["values"]),
            changes=list(d["changes"]),
            worse=list(d["worse"]),
        )

    # end generated: ComparisonRow


# generated: Comparison (from core/src/report/compare.rs by scripts/gen_reference.py)
@dataclass(frozen=True, repr=False)
class Comparison:
    """Reports compared: a baseline and later runs."""

    labels: list[str]
    """The reports' labels (file names by default), the baseline first."""
    rows: list[ComparisonRow]
    """One row per measured phase, command (``ALL`` for the phase's totals) and metric."""
    limits: list[str]
    """The limits given, as read (``p99_ms=+10%``)."""
    failures: list[str]
    """Each limit a later run crossed, one sentence each; empty when none was."""
    text: str
    """The comparison as ``respload compare`` prints it (also ``str(comparison)``): a table
    per phase, each value with its change, ``worse`` where worse beyond noise."""
    _reports: list[Report] = field(compare=False)
    # end generated: Comparison

    @classmethod
    def _of(cls, reports: list[Report], labels: list[str], limits: list[str]) -> Comparison:
        texts = [r.to_json() for r in reports]
        d = json.loads(_native.compare_reports(texts, labels, limits))
        return cls(
            labels=d["labels"],
            rows=[ComparisonRow.from_dict(r) for r in d["rows"]],
            limits=d["limits"],
            failures=d["failures"],
            text=d["text"],
            _reports=reports,
        )

    def to_html(self) -> str:
        """The compared reports as one self-contained HTML page (what ``respload report
        A.json B.json --html`` writes): this comparison's verdicts, and each report's timeline
        and latency percentiles overlaid."""
        return _native.reports_html([r.to_json() for r in self._reports], list(self.labels))

    @property
    def worse(self) -> list[ComparisonRow]:
        """The rows where a later run is worse than the baseline beyond noise."""
        return [r for r in self.rows if any(r.worse)]

    def check(self, **limits: Unpack[CompareLimits]) -> Comparison:
        """Assert that no later run moved past ``limits`` against the baseline, for test
        suites: ``check(p99_ms="+10%", ops_per_sec="-5%", error_rate=0.001)`` (a percentage
        is relative; a number is in the metric's unit, ms for latencies; without a sign a
        change counts the bad way). Raises ``AssertionError`` naming every phase, command
        and metric that regressed; returns the comparison when all hold. A bad limit
        raises :class:`~respload.SpecError`."""
        given = [f"{name}={value}" for name, value in limits.items()]
        checked = Comparison._of(self._reports, self.labels, given)
        if checked.failures:
            raise AssertionError(
                f"{len(checked.failures)} limit(s) crossed:\n"
                + "\n".join(f"  - {f}" for f in checked.failures)
            )
        return checked

    def frame(self) -> pandas.DataFrame:
        """The comparison as a pandas DataFrame, one row per phase, command, metric and
        report: columns ``phase``, ``command``, ``metric``, ``report`` (its label),
        ``value``, ``change`` and ``worse``."""
        pd = _pandas()
        records = [
            {
                "phase": r.phase,
                "command": r.command,
                "metric": r.metric,
                "report": label,
                "value": r.values[i],
                "change": r.changes[i],
                "worse": r.worse[i],
            }
            for r in self.rows
            for i, label in enumerate(self.labels)
        ]
        return pd.DataFrame.from_records(
            records, columns=["phase", "command", "metric", "report", "value", "change", "worse"]
        )

    def plot(self, figure: Figure | None = None) -> Figure:
        """Draw the reports side by side with matplotlib: the whole latency distributions of
        their totals overlaid on HdrHistogram's percentile axis (log scale of 1/(1-p)), and
        throughput over time. Returns the figure (a new one unless ``figure`` is given)."""
        _Figure, FixedLocator, NullLocator = _matplotlib()
        fig = figure if figure is not None else _Figure(figsize=(11, 4.5), layout="constrained")
        dist, throughput = fig.subplots(1, 2)
        for label, report in zip(self.labels, self._reports):
            dist.plot(*_percentile_curve(report.to_json()), label=label)
            rows = [r for r in report.timeline if not r.partial]
            throughput.plot(
                [r.t for r in rows], [r.ops_per_sec for r in rows], marker=".", label=label
            )
        _percentile_axis(dist, FixedLocator, NullLocator)
        dist.set(title="Latency by percentile (all commands)", xlabel="percentile", ylabel="ms")
        dist.set_ylim(bottom=0)
        dist.legend()
        throughput.set(title="Throughput", xlabel="time (s)", ylabel="ops/s")
        throughput.set_ylim(bottom=0)
        throughput.legend()
        return fig

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return (
            f"<Comparison of {', '.join(self.labels)}: {len(self.rows)} rows, "
            f"{len(self.worse)} worse beyond noise, {len(self.failures)} limit(s) crossed>"
        )

    def _repr_html_(self) -> str:
        """A table per phase for Jupyter, worse cells in red."""
        from html import escape

        out = ['<div class="respload-comparison">']
        phase = None
        for r in self.rows:
            if r.phase != phase:
                if phase is not None:
                    out.append("</table>")
                phase = r.phase
                head = "".join(f"<th>{escape(label)}</th>" for label in self.labels)
                out.append(
                    f"<h4>Phase {escape(r.phase)}</h4><table><tr><th>command</th>"
                    f"<th>metric</th>{head}</tr>"
                )
            cells = []
            for v, c, w in zip(r.values, r.changes, r.worse):
                text = "-" if v is None else f"{v:.4g}"
                if c is not None:
                    text += f" ({c:+.4f})" if r.metric == "error_rate" else f" ({c * 100:+.1f}%)"
                style = ' style="color:#c00;font-weight:bold"' if w else ""
                cells.append(f"<td{style}>{escape(text)}</td>")
            out.append(
                f"<tr><td>{escape(r.command)}</td><td>{escape(r.metric)}</td>{''.join(cells)}</tr>"
            )
        if phase is not None:
            out.append("</table>")
        out.append("</div>")
        return "".join(out)


def compare(
    baseline: ReportLike,
    current: ReportLike,
    *more: ReportLike,
    labels: Sequence[str] | None = None,
) -> Comparison:
    """Compare a baseline report with one or more later ones, phase by phase and command by
    command: ops/s, p50, p90, p99, p99.9, max and error rate, each change marked ``worse`` when
    beyond noise (the core's rules: a percentile's confidence interval from its histogram,
    throughput's spread over the timeline, a two-proportion test for errors). Reports are
    :class:`Report` objects or report files; ``labels`` name them (default: a file's name,
    else ``baseline`` and ``current``, or ``run 1``, ``run 2``, ...).
    ``compare(a, b).check(p99_ms="+10%")`` fails a test on a regression."""
    given = [baseline, current, *more]
    reports = [r if isinstance(r, Report) else Report.load(r) for r in given]
    if labels is None:
        names = ["baseline"] + (
            ["current"] if len(given) == 2 else [f"run {i}" for i in range(1, len(given))]
        )
        labels = [
            names[i] if isinstance(r, Report) else Path(os.fspath(r)).name
            for i, r in enumerate(given)
        ]
    return Comparison._of(reports, list(labels), [])
