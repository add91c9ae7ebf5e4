"""The live display of a run (``run(..., progress=True)``): in a Jupyter kernel one display
updated each interval (a bar per phase for its requests or duration, ops/s, p50/p99,
errors), in a terminal the CLI's live line on stderr, nothing else otherwise.

The figures and the line come from the core (``_native.Progress``, the CLI's
``progress_line``): this module only lays them out.
"""

from __future__ import annotations

import html
import importlib
import json
import sys
from typing import Any, Literal

from . import _native

__all__ = ["LiveProgress", "ProgressView", "in_jupyter", "progress_mode"]

Mode = Literal["jupyter", "terminal"]


def in_jupyter() -> bool:
    """Whether this code runs inside a Jupyter kernel (IPython with a kernel attached)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def progress_mode(progress: bool | None) -> Mode | None:
    """Where ``progress`` shows: ``None`` (the default) means on in a Jupyter kernel only;
    ``True`` shows in Jupyter, else on stderr when it is a terminal; never elsewhere."""
    if progress is None:
        progress = in_jupyter()
    if not progress:
        return None
    if in_jupyter():
        return "jupyter"
    isatty = getattr(sys.stderr, "isatty", None)
    if isatty is not None and isatty():
        return "terminal"
    return None


def _number(x: float) -> str:
    return f"{x:,.0f}"


class ProgressView:
    """What the notebook display shows: the phases' progress (the core's figures), as HTML
    with a bar per phase, and as text (one line per phase) for front ends without HTML."""

    def __init__(
        self, phases: list[dict[str, Any]], history: dict[str, list[float]] | None = None
    ) -> None:
        self.phases = phases
        self.history = history or {}

    def _sparkline(self, phase: str) -> str:
        """The phase's ops/s, second by second, as a small inline SVG line (the growing
        timeline); empty before its second second."""
        points = self.history.get(phase, [])
        if len(points) < 2:
            return ""
        w, h = 160, 28
        top = max(points) or 1.0
        step = w / (len(points) - 1)
        line = " ".join(
            f"{i * step:.1f},{h - 2 - (v / top) * (h - 4):.1f}" for i, v in enumerate(points)
        )
        return (
            f'<svg class="respload-timeline" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{line}"/>'
            "</svg>"
        )

    def _bar_text(self, p: dict[str, Any]) -> str:
        if p["total"] is None:
            return ""
        if p["bound"] == "duration":
            return f"{p['done']:.1f}/{p['total']:.1f} s"
        return f"{_number(p['done'])}/{_number(p['total'])} requests"

    def __repr__(self) -> str:
        lines = []
        for p in self.phases:
            if not p["started"]:
                lines.append(f"[{p['phase']}] waiting")
                continue
            percent = "" if p["fraction"] is None else f"{p['fraction'] * 100:5.1f}% "
            state = " done" if p["finished"] else ""
            lines.append(f"{percent}{self._bar_text(p)}  {p['line']}{state}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for p in self.phases:
            name = html.escape(p["phase"])
            if p["fraction"] is None:
                bar = "<progress></progress>" if p["started"] and not p["finished"] else ""
            else:
                bar = f'<progress value="{p["fraction"]:.4f}" max="1"></progress>'
            if not p["started"]:
                figures = "<td colspan='5'>waiting</td>"
            else:
                figures = (
                    f"<td>{html.escape(self._bar_text(p))}</td>"
                    f"<td>{_number(p['ops_per_sec'])}</td>"
                    f"<td>{p['p50_ms']:.3f}</td><td>{p['p99_ms']:.3f}</td>"
                    f"<td>{p['errors']}</td>"
                )
            state = "done" if p["finished"] else ("running" if p["started"] else "")
            spark = self._sparkline(p["phase"])
            rows.append(
                f"<tr><td>{name}</td><td>{bar}</td>{figures}<td>{spark}</td><td>{state}</td></tr>"
            )
        head = (
            "<tr><th>phase</th><th></th><th>progress</th><th>ops/s</th><th>p50 ms</th>"
            "<th>p99 ms</th><th>errors</th><th>ops/s over time</th><th></th></tr>"
        )
        return '<table class="respload-progress">' + head + "".join(rows) + "</table>"


class LiveProgress:
    """Shows a run's progress where ``mode`` says, fed with its snapshots' JSON text."""

    def __init__(self, workload: _native.Workload, mode: Mode) -> None:
        self.mode = mode
        self._progress = _native.Progress(workload)
        self._handle: Any = None
        # Each phase's ops/s, second by second: the growing timeline of the display.
        self._history: dict[str, list[float]] = {}

    def update(self, snapshot_json: str) -> None:
        phases = json.loads(self._progress.update(snapshot_json))
        snapshot = json.loads(snapshot_json)
        self._history.setdefault(snapshot["phase"], []).append(float(snapshot["ops_per_sec"]))
        if self.mode == "terminal":
            print(_native.progress_line(snapshot_json), file=sys.stderr, flush=True)
        else:
            self._show(phases)

    def finish(self) -> None:
        phases = json.loads(self._progress.finish())
        if self.mode == "jupyter" and self._handle is not None:
            self._show(phases)

    def _show(self, phases: list[dict[str, Any]]) -> None:
        # IPython is there in a kernel; it is no dependency of respload.
        display: Any = importlib.import_module("IPython.display").display
        view = ProgressView(phases, self._history)
        if self._handle is None:
            self._handle = display(view, display_id=True)
        else:
            self._handle.update(view)
