"""respload: drive real load against Redis and RESP servers from Python.

::

    import respload

    report = respload.run(
        target={"url": "redis://127.0.0.1:6379"},
        load={"connections": 8, "requests": 10_000},
    )
    print(report.totals.ops_per_sec, report.totals.latency_ms.p99)

Your own traffic: :class:`Trace` captures, reads and models a trace file, :func:`replay`
replays one. See ``docs/python.md``. The library never prints, exits or installs signal
handlers.
"""

from __future__ import annotations

# Every exception class (`exceptions.__all__`): one per kind of core error, generated from the
# core's list so that a new kind is exported here without a hand edit, RespLoadError and
# UntrustedReportWarning.
from . import exceptions as _exceptions
from ._native import SCHEMA_VERSION, __version__
from .compare import Comparison, ComparisonRow, ReportLike, compare
from .exceptions import *  # noqa: F403
from .report import (
    Availability,
    ClientStats,
    EventReport,
    HostReport,
    HostRow,
    HtmlPage,
    IntervalLatency,
    Latency,
    NodeServer,
    PhaseReport,
    PrefillReport,
    RampStep,
    ReplayFidelity,
    Report,
    ServerFacts,
    ServerLoad,
    ServerSample,
    ShardOf,
    SloPoint,
    SloResult,
    Snapshot,
    Stats,
    Threshold,
    TimelineRow,
    Unsent,
    Validity,
    ValidityCheck,
    decode_histogram,
    merge_reports,
    set_display,
)
from .runner import ProgressCallback, Runner, run, run_async
from .trace import (
    Capture,
    CaptureReport,
    KeySpaces,
    Malformed,
    MixShare,
    Model,
    ModelFit,
    NodeCapture,
    Trace,
    TraceArg,
    TraceRecord,
    ValueSize,
    replay,
)
from .workload import StartAt, Workload, WorkloadLike

__all__ = [
    "SCHEMA_VERSION",
    "Availability",
    "Capture",
    "CaptureReport",
    "ClientStats",
    "Comparison",
    "ComparisonRow",
    "EventReport",
    "HostReport",
    "HostRow",
    "HtmlPage",
    "IntervalLatency",
    "KeySpaces",
    "Latency",
    "Malformed",
    "MixShare",
    "Model",
    "ModelFit",
    "NodeCapture",
    "NodeServer",
    "PhaseReport",
    "PrefillReport",
    "ProgressCallback",
    "RampStep",
    "ReplayFidelity",
    "Report",
    "ReportLike",
    "Runner",
    "ServerFacts",
    "ServerLoad",
    "ServerSample",
    "ShardOf",
    "SloPoint",
    "SloResult",
    "Snapshot",
    "StartAt",
    "Stats",
    "Threshold",
    "TimelineRow",
    "Trace",
    "TraceArg",
    "TraceRecord",
    "Unsent",
    "Validity",
    "ValidityCheck",
    "ValueSize",
    "Workload",
    "WorkloadLike",
    "__version__",
    "compare",
    "decode_histogram",
    "merge_reports",
    "replay",
    "run",
    "run_async",
    "set_display",
]
__all__ += _exceptions.__all__
