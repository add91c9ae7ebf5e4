"""Values on their way to the core as JSON: what JSON cannot carry is refused by field path."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from .exceptions import SpecError

# The widest integers any spec field takes (u64 seeds, i64 offsets); serde reads larger ones
# as floats or, past a float's range, fails on the whole text without a field path.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _shown(value: int) -> str:
    text = str(value)
    digits = len(text.lstrip("-"))
    return text if digits <= 24 else f"{text[:13]}... ({digits} digits)"


def _unsendable(value: Any, path: str) -> tuple[str, str] | None:
    """The first value under ``value`` that JSON cannot carry: its path and why."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if _INT_MIN <= value <= _INT_MAX:
            return None
        return path, f"{_shown(value)} is out of range (integers from -2^63 to 2^64-1)"
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, f"{value} is not a finite number")
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _unsendable(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _unsendable(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def check_sendable(value: Any, path: str) -> None:
    """Raise :class:`SpecError` naming the first number under ``value`` (at ``path``) that JSON
    cannot carry to the core: NaN, an infinity, an integer beyond 64 bits."""
    found = _unsendable(value, path)
    if found is not None:
        where, reason = found
        raise SpecError(f"invalid spec at `{where}`: {reason}", path=where, reason=reason)


def dumps(value: Any, what: str, root: str | None = None) -> str:
    """``value`` as JSON for the core. Errors name ``what`` (a field path), or the path of
    the bad number within ``value``, counted from ``root`` (default ``what``)."""
    check_sendable(value, what if root is None else root)
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SpecError(
            f"invalid spec at `{what}`: {exc} (use str, int, float, bool, list and dict values)",
            path=what,
            reason=str(exc),
        ) from None
