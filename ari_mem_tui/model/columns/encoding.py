"""The encodings every column table shares: the codes of kinds and ops, None and absent
in a code column, an entry's content id, UTF-8 both ways, stored JSON bytes and their values
(`json_value`, `json_bytes`), and int columns packed in one call (`put`, `packed`)."""

from __future__ import annotations

import hashlib
import json
import math
import struct
from array import array
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

import msgspec

KINDS = ("node_scope", "react_step")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
OPS = ("read", "write")
OP_CODE = {op: code for code, op in enumerate(OPS)}
NONE = -1  # the code of None in every code column
DERIVED = -2  # a Texts start: the bytes are another table's (Events.derive_from)
ABSENT = -2  # a result row without that key
INHERIT = "inherit:"
NAN = math.nan
_decode_json = msgspec.json.Decoder().decode
_encode_json = msgspec.json.Encoder().encode
DIGITS = 4300  # Python's limit for an int from a string: the readers read a longer one as null


def json_value(raw: bytes | memoryview) -> Any:
    """Stored JSON bytes (metadata as its line had it) as their value: msgspec in C, else json
    for what msgspec refuses and the readers keep (an integer past 64 bits, a lone surrogate's
    escape), an integer of more than 4,300 digits read as null as the readers read it. An
    integer of 4,301 digits in one write's metadata made the run unreadable."""
    try:
        return _decode_json(raw)
    except msgspec.MsgspecError:
        pass
    try:
        return json.loads(bytes(raw), parse_int=_bounded_int)
    except (ValueError, RecursionError):
        return None


def _bounded_int(digits: str) -> int | None:
    return int(digits) if len(digits.lstrip("-")) <= DIGITS else None


def content_id(kind: str, node_id: str, ts: float | None, text: str) -> str:
    """Our id of an entry: what it is (kind, owner, ts, text), not where it sits in a file."""
    key = f"{kind}|{node_id}|{ts!r}|{text}"
    return "e" + hashlib.sha1(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def decoded(data: Any) -> str:
    return str(data, "utf-8", "surrogatepass")


def holding(column: Any, code: int) -> bytes:
    """Selectors for `compress` over a column of bytes: 1 where it holds `code`, else 0, made
    in one C pass (a comparison per item took twice as long at 230k events)."""
    table = bytearray(256)
    table[code] = 1
    return bytes(column).translate(table)


def put(column: array, values: Sequence[Any]) -> None:
    """`column.extend(values)`, the values packed by struct in one call: array's own
    conversion, item by item, costs twice as much, and a load converts millions of them.
    Raises struct.error for a value the column cannot hold."""
    column.frombytes(struct.pack(f"{len(values)}{column.typecode}", *values))


def packed(kind: str, values: Sequence[Any]) -> array:
    """`array(kind, values)`, packed as `put` packs."""
    column = array(kind)
    put(column, values)
    return column


def opt_ts(value: float) -> float | None:
    return None if math.isnan(value) else value  # NaN stands for "no ts"


def json_at(raw: memoryview | None, side: Mapping[int, Any], row: int) -> Any:
    if row in side:
        return side[row]
    return None if raw is None else json_value(raw)


def json_bytes(value: Any) -> bytes | None:
    """`value` as JSON that decodes back to an equal value, else None (NaN, odd keys …)."""
    try:
        data = _encode_json(value)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        return None
    try:
        return data if _decode_json(data) == value else None
    except (msgspec.MsgspecError, RecursionError):
        return None


def writable(column: Any, kind: str) -> Any:
    """`column` itself when it can be written, else an array copy (a reopen's mapped columns
    are read-only; the few writes after a load, a Letta swap's re-join, copy first)."""
    return column if isinstance(column, (array, bytearray)) else array(kind, column)


def fields_of(items: Sequence[Any], names: Sequence[str]) -> list[list[Any]]:
    """Each named attribute of every item, one list per name, read in C (a list per name is
    about half the cost of a tuple per item taken apart by zip)."""
    return [list(map(attrgetter(name), items)) for name in names]
