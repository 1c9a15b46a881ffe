"""Coercions for values read from JSON we do not control: never raise, say what went wrong."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any


def as_float(value: Any) -> float | None:
    """A finite float from a JSON number (not a bool), or None (an integer past a float's
    range, 1e309 written out, included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        result = float(value)
    except OverflowError:
        return None
    return result if math.isfinite(result) else None


def as_int(value: Any) -> int | None:
    """An int from a JSON int, an integral float or a decimal string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value.strip())
    return None


def parse_iso(value: Any) -> float | None:
    """Epoch seconds of an ISO-8601 string (naive means UTC), or None when it is not one."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def short(text: str, limit: int = 80) -> str:
    """A one-line excerpt for problem messages."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def nonfinite(value: Any, prefix: str = "") -> list[str]:
    """Where decoded JSON `value` holds a number JSON has no form for (NaN, Infinity: what
    `json` reads from `NaN`, `Infinity` or `1e400`), each as `path = value` (`context.n =
    NaN`, `nodes[2].metrics.x = Infinity`), in document order. Iterative: any depth."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(prefix, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                found.append(f"{path or 'the value'} = {_JSON_WORD.get(item, 'NaN')}")
        elif isinstance(item, dict):
            items = [(f"{path}.{key}" if path else str(key), v) for key, v in item.items()]
            stack.extend(reversed(items))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return found


_JSON_WORD = {math.inf: "Infinity", -math.inf: "-Infinity"}  # (NaN is no key: never equal)


def nonfinite_why(found: list[str]) -> str:
    """A problem's `why` for `nonfinite`'s findings: the first few, and the rule."""
    shown = "; ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return f"{shown}: no JSON number; JSON output writes null there"
