"""Indented JSON, byte for byte as `json.dumps(obj, indent=2, ensure_ascii=False)` writes it.

The stdlib falls back to its pure-Python encoder whenever `indent` is set, which is slow on a
big document (`health --json` of a 10,000-node run, the demo's tree.json). Here json's C
encoder writes the compact text and msgspec's `format` indents it in C: it changes only the
whitespace between tokens, which json.dumps lays out the same way (tested).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import msgspec


def indented(obj: Any, level: int = 0, default: Callable[[Any], Any] | None = None) -> str:
    """`json.dumps(obj, indent=2, ensure_ascii=False, default=default)`, as if nested `level`
    deep (each line after the first indented 2 × `level` more); json's errors for what it cannot
    encode. A number JSON has no form for (NaN, Infinity) is written `null`: json would write
    `NaN`, which no strict JSON reader takes (the one rule of every JSON output: README)."""
    try:
        compact = json.dumps(obj, ensure_ascii=False, default=default, allow_nan=False)
    except ValueError as exc:
        if "Out of range float" not in str(exc):  # a circular reference
            raise
        obj = finite(obj)  # (rare: the walk costs nothing when there is nothing to replace)
        compact = json.dumps(obj, ensure_ascii=False, default=default)
    try:
        text = msgspec.json.format(compact, indent=2)
    except UnicodeEncodeError:  # a lone surrogate, which has no UTF-8 for msgspec to read
        text = json.dumps(obj, indent=2, ensure_ascii=False, default=default)
    # (a newline inside a string is written "\n": every real one is between tokens)
    return text.replace("\n", "\n" + "  " * level) if level else text


def finite(value: Any) -> Any:
    """`value` with every NaN and ±Infinity replaced by None, as JSON can write it (keys are
    left: json writes a float key as a string, "NaN" included)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value
