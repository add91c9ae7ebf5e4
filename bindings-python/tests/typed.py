"""Rebuild a report's JSON from its typed attributes alone, to prove every field is typed."""

from __future__ import annotations

import dataclasses
from typing import Any

# Optional fields the core leaves out of the JSON when they are empty (skip_serializing_if).
_LEFT_OUT_WHEN = {
    "service_ms": None,
    "service_histogram": None,
    "target_rate": None,
    "server_load": None,
    "server_timeline": [],
    "nodes": {},
    "redirects": 0,
    "reconnects": None,
    "server_nodes": {},
    "events": [],
    "steps": [],
    "slo": None,
    "peak_node": None,
    "output_error": None,
    "error": None,
    "server": None,
    "waiting": None,
    "send_lag_ms": None,
    "send_lag_histogram": None,
    "behind_ms": None,
    "waiting_max": None,
    "behind_ms_max": None,
    "unsent": None,
    "client_lag_ms": None,
    "server_cpu_percent": None,
    "shard": None,
    "start_at": None,
    "start_skew_ms": None,
    "hosts": [],
    "partial": False,
    "thresholds": [],
    "stopped_by": None,
    "phase": None,
    "command": None,
    "value": None,
    "stopped_run": False,
    "replay": None,
    "malformed_lines": [],
    "prefill": None,
    "not_prefilled": {},
    "barrier_wait_s": None,
    "first_errors": {},
    "retries": 0,
}


def typed_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            if f.name.startswith("_"):
                continue
            v = getattr(value, f.name)
            if f.name in _LEFT_OUT_WHEN and v == _LEFT_OUT_WHEN[f.name]:
                continue
            out[f.name] = typed_json(v)
        return out
    if isinstance(value, dict):
        return {k: typed_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_json(v) for v in value]
    return value
