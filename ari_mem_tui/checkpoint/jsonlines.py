"""The one JSON Lines read loop of the loader (access logs, the backup, the v0.5 store).

Each line is decoded from its bytes by msgspec (in C, no intermediate str). A line msgspec
refuses is decoded again the slow way (UTF-8 text, then `json`), so a bad line gets the same
named problem as ever, and the few values only `json` accepts (NaN, Infinity, integers past
64 bits) still load as they did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from ari_mem_tui.checkpoint.jsonfile import MAX_DEPTH, depth_exceeds, json_error
from ari_mem_tui.checkpoint.problems import FileProblems

_DECODE = msgspec.json.Decoder().decode


def loads_record(raw: bytes | str) -> Any:
    """One JSON value, as `json.loads` would give it.

    Raises ValueError with json's message (JSONDecodeError, or a plain ValueError for an
    integer over Python's digit limit), and RecursionError for a value nested deeper than
    MAX_DEPTH.
    """
    try:
        value = _DECODE(raw)
    except (msgspec.DecodeError, RecursionError):
        value = json.loads(raw)  # json's own error message, or a value msgspec refuses
    brackets = raw.count(b"[") + raw.count(b"{") if type(raw) is bytes else None
    if brackets is None:
        brackets = raw.count("[") + raw.count("{")
    # counting brackets is C-fast; the walk runs only for the rare line that could be that deep
    if brackets > MAX_DEPTH and depth_exceeds(value):
        raise RecursionError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def json_records(lines: Iterable[bytes], sink: FileProblems) -> Iterator[tuple[int, Any]]:
    """(1-based line number, decoded value) of each line; blank lines are skipped silently, and a
    line that is not UTF-8 or not JSON becomes a problem in `sink` ("skipped the line")."""
    for line_no, raw in enumerate(lines, start=1):
        try:
            value = _DECODE(raw)
        except (msgspec.DecodeError, RecursionError):
            if not raw.strip():
                continue
            value = _slow(raw, line_no, sink)
            if value is _SKIP:
                continue
        else:
            if (raw.count(b"[") + raw.count(b"{")) > MAX_DEPTH and depth_exceeds(value):
                sink.add(f"line {line_no}", "skipped the line", "not JSON (nested too deeply)")
                continue
        yield line_no, value


_SKIP = object()


def _slow(raw: bytes, line_no: int, sink: FileProblems) -> Any:
    text = sink.decode_line(raw, line_no)
    if text is None:
        return _SKIP
    try:
        return loads_record(text)
    except (ValueError, RecursionError) as exc:
        sink.add(f"line {line_no}", "skipped the line", f"not JSON ({json_error(exc)})")
        return _SKIP
