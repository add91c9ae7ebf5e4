"""Rebuild a report's JSON from its typed attributes alone, to prove every field is typed."""

from __future__ import annotations

import dataclasses
from typing import Any

# Optional fields the core leaves out of the JSON when they are empty (skip_serializing_if);
# a name two types use differently (`hosts`: a report's list, a replay's count) has a tuple
# of the values it is left out at.
_LEFT_OUT_WHEN: dict[str, Any] = {
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
    "hosts": ([], None),
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
    "first_errors": {},
    "retries": 0,
    "barrier_wait_s": None,
    "others": 0,
}


def _left_out(name: str, value: Any) -> bool:
    if name not in _LEFT_OUT_WHEN:
        return False
    empty = _LEFT_OUT_WHEN[name]
    return any(value == e for e in empty) if isinstance(empty, tuple) else value == empty


def typed_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            if f.name.startswith("_"):
                continue
            v = getattr(value, f.name)
            if _left_out(f.name, v):
                continue
            out[f.name] = typed_json(v)
        return out
    if isinstance(value, dict):
        return {k: typed_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_json(v) for v in value]
    return value
