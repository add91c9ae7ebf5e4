"""respload: drive real load against Redis and RESP servers from Python.

::

    import respload

    report = respload.run(
        target={"url": "redis://127.0.0.1:6379"},
        load={"connections": 8, "requests": 10_000},
    )
    print(report.totals.ops_per_sec, report.totals.latency_ms.p99)

See ``docs/python.md``. The library never prints, exits or installs signal handlers.
"""

from __future__ import annotations

from ._native import SCHEMA_VERSION, __version__
from .compare import Comparison, ComparisonRow, ReportLike, compare
from .exceptions import (
    AuthError,
    ConnectError,
    FileError,
    InternalError,
    ProtocolError,
    RespLoadError,
    SpecError,
    TlsError,
    UntrustedReportWarning,
)
from .report import (
    Availability,
    ClientStats,
    EventReport,
    HostReport,
    IntervalLatency,
    Latency,
    NodeServer,
    PhaseReport,
    RampStep,
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
)
from .runner import ProgressCallback, Runner, run, run_async
from .workload import StartAt, Workload, WorkloadLike

__all__ = [
    "SCHEMA_VERSION",
    "AuthError",
    "Availability",
    "ClientStats",
    "Comparison",
    "ComparisonRow",
    "ConnectError",
    "EventReport",
    "FileError",
    "HostReport",
    "InternalError",
    "IntervalLatency",
    "Latency",
    "NodeServer",
    "PhaseReport",
    "ProgressCallback",
    "ProtocolError",
    "RampStep",
    "Report",
    "ReportLike",
    "RespLoadError",
    "Runner",
    "ServerFacts",
    "ServerLoad",
    "ServerSample",
    "ShardOf",
    "SloPoint",
    "SloResult",
    "Snapshot",
    "SpecError",
    "StartAt",
    "Stats",
    "Threshold",
    "TimelineRow",
    "TlsError",
    "Unsent",
    "UntrustedReportWarning",
    "Validity",
    "ValidityCheck",
    "Workload",
    "WorkloadLike",
    "__version__",
    "compare",
    "decode_histogram",
    "merge_reports",
    "run",
    "run_async",
]
