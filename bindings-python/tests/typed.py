"""Rebuild a report's JSON from its typed attributes alone, to prove every field is typed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

# When the core leaves a key out of the JSON (serde's skip_serializing_if): read from the
# report's JSON Schema, where such a key is not `required`; it is left out at its type's
# empty value. Nothing here is kept by hand, so a new optional field cannot be forgotten.
_SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs/reference/report.schema.json").read_text(encoding="utf-8")
)


def _empty(prop: dict[str, Any]) -> Any:
    ty = prop.get("type")
    kinds = set(ty) if isinstance(ty, list) else {ty}
    if "null" in kinds or "anyOf" in prop:
        return None
    empty = {"array": [], "object": {}, "integer": 0, "boolean": False}
    for kind, value in empty.items():
        if kind in kinds:
            return value
    raise AssertionError(f"no empty value known for {prop}: teach typed.py")


def _left_out_of(schema: dict[str, Any]) -> dict[str, Any]:
    required = set(schema.get("required", []))
    props = schema.get("properties", {})
    return {key: _empty(prop) for key, prop in props.items() if key not in required}


# Class name (the Rust type's) -> optional key -> the value at which it is left out.
_LEFT_OUT_WHEN: dict[str, dict[str, Any]] = {
    name: _left_out_of(schema) for name, schema in _SCHEMA["$defs"].items()
} | {"Report": _left_out_of(_SCHEMA)}


def _left_out(cls: str, name: str, value: Any) -> bool:
    left_out = _LEFT_OUT_WHEN.get(cls, {})
    return name in left_out and value == left_out[name]


def typed_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            if f.name.startswith("_"):
                continue
            v = getattr(value, f.name)
            if _left_out(type(value).__name__, f.name, v):
                continue
            out[f.name] = typed_json(v)
        return out
    if isinstance(value, dict):
        return {k: typed_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_json(v) for v in value]
    return value
