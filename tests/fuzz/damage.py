"""Damage as hostile input does it, drawn from Hypothesis: structure first, then bytes.

Every function takes a `Chooser` (the fuzzer's: a `random.Random` seeded for one input, or for
one answer a server makes while the input runs; the tests': Hypothesis's draws) and returns the damaged bytes with the steps in words (what a failure's report and its reproducer name). Structure-aware damage parses
the file as what it is (a JSON document, JSON lines, gzip of JSON lines, a string holding JSON),
changes one value (a number past every range, another type, a deep nest, a lone surrogate, a huge
string, a duplicate key, a cycle of ids ...) and writes it back; byte damage then may flip bits,
cut the file, or put bad UTF-8 into it. Bulk bytes come from a `random.Random` seeded by one
draw, so an example is reproduced by its Hypothesis seed alone.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import struct
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

MIB = 1 << 20
FLOATS = [
    1e308,
    -1e308,
    1.7976931348623157e308,
    5e-324,
    -5e-324,
    -0.0,
    1e-320,
    math.nan,
    math.inf,
    -math.inf,
    1e20,
    -1e20,
]
# the numbers of ARI's files that readers compute with (ranks, times, windows, sizes)
FIELDS = {"score", "ts", "limit", "step", "depth", "retry_count", "_scientific_score", "top_k"}
FIELDS |= {"seeded_at", "opened", "created", "size", "count", "index", "n", "dim"}
HUGE_FLOATS = [1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 1e307]
INTS = [
    -1,
    0,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    -(2**63) - 1,
    10**400,  # past a float's range, under the 4,300-digit limit
    -(10**400),
]
# written as they are: past Python's 4,300 digits, and what json writes for non-finite floats
RAW_NUMBERS = ["1" + "0" * 4300, "-" + "9" * 5000, "1e400", "-1e400", "NaN", "-Infinity", "1E999"]
ESCAPES = [
    "\x1b[2J\x1b[H",
    "\x1b]52;c;aGVsbG8=\x07",
    "\x9b31m",
    "\u202eevil\u202c",
    "[/x]",
    "[red]x[/red]",
    "\x00",
    "\r\n",
    "\u2028",
]
SURROGATES = ["\ud800", "\udfff", "\udc80", "a\ud83dz", "\udbff\udbff"]
BAD_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]
HUGE_SIZES = [64 * 1024, MIB, 4 * MIB, 9 * MIB]
DEPTHS = [99, 101, 1000, 20000, 200000]
DOC_OPS = {
    "number": 4,
    "type": 2,
    "string": 2,
    "inner": 2,
    "delete": 1,
    "nest": 1,
    "dup": 1,
    "swap": 1,
}
MAX_PATHS = 20000  # values a document offers for damage (a breadth-first sample)


@dataclass
class Damage:
    """What one example did to one file: the damaged bytes and the steps in words."""

    data: bytes
    steps: list[str] = field(default_factory=list)


class Raw:
    """Text written into a JSON document as it is (a deep nest, `NaN`, 4,301 digits)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r}{'…' if len(self.text) > 40 else ''})"


class Dup:
    """An object whose pairs may repeat a key (a dict cannot)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def dumps(value: Any) -> str:
    """JSON text of `value` with Raw and Dup in place, non-finite floats as Python's json
    writes them, any integer as its digits."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Dup):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)  # (past 4,300 digits only as Raw: no parsed value is)
    return json.dumps(value)  # floats: NaN, Infinity as Python writes them


# ---------------------------------------------------------------- choices
class Chooser:
    """Where damage comes from: a seeded Random (`Seeded`: the fuzzer's inputs and server
    answers), or Hypothesis's draws of one example (`Drawn`: the damage's own tests)."""

    def pick(self, choices: list[Any]) -> Any:
        raise NotImplementedError

    def weighted(self, weights: dict[Any, int]) -> Any:
        """One key of `weights`, each as often as its weight says."""
        return self.pick([key for key, weight in weights.items() for _ in range(weight)])

    def integer(self, low: int, high: int) -> int:
        raise NotImplementedError

    def boolean(self) -> bool:
        return self.integer(0, 1) == 1

    def any_float(self) -> float:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def random(self) -> random.Random:
        """A Random for bulk bytes (bit positions, garbage), seeded by one choice."""
        return random.Random(self.integer(0, 2**32 - 1))


class Drawn(Chooser):
    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def pick(self, choices: list[Any]) -> Any:
        return self.data.draw(st.sampled_from(choices))

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))

    def any_float(self) -> float:
        return self.data.draw(st.floats())

    def text(self) -> str:
        return self.data.draw(st.text(max_size=40))


class Seeded(Chooser):
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, choices: list[Any]) -> Any:
        return self.rng.choice(choices)

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def any_float(self) -> float:
        return struct.unpack("<d", self.rng.randbytes(8))[0]

    def text(self) -> str:
        return "".join(chr(self.rng.randrange(0x110000)) for _ in range(self.rng.randrange(40)))


# ---------------------------------------------------------------- values
def hostile_number(data: Chooser) -> Any:
    kind = data.weighted({"huge": 3, "float": 2, "int": 3, "raw": 2, "any float": 1, "any int": 1})
    if kind == "huge":  # finite, yet x * 100 or x - y is not: round() and int() raise
        return data.pick(HUGE_FLOATS)
    if kind == "float":
        return data.pick(FLOATS)
    if kind == "int":
        return data.pick(INTS)
    if kind == "raw":
        return Raw(data.pick(RAW_NUMBERS))
    if kind == "any float":
        return data.any_float()
    return data.integer(-(2**80), 2**80)


def huge_string(rng: random.Random, size: int) -> str:
    unit = "".join(rng.choice("abc xyz\u65e5\u672c\n") for _ in range(64))
    return (unit * (size // len(unit) + 1))[:size]


def hostile_string(data: Chooser, rng: random.Random) -> str:
    kind = data.pick(["escape", "surrogate", "huge", "empty", "text", "blank"])
    if kind == "escape":
        return "x" + data.pick(ESCAPES) + "y"
    if kind == "surrogate":
        return "pre " + data.pick(SURROGATES) + " post"
    if kind == "huge":
        return huge_string(rng, data.pick(HUGE_SIZES))
    if kind == "empty":
        return ""
    if kind == "blank":
        return " \t\n "
    return data.text()


def deep_nest(data: Chooser) -> Raw:
    depth = data.pick(DEPTHS)
    if data.boolean():
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a": ' * depth + "1" + "}" * depth)


def other_value(data: Chooser, rng: random.Random, old: Any) -> Any:
    """A value of another type than `old`, or one past every range."""
    kinds = ["number", "string", "null", "bool", "list", "object", "nest"]
    kind = data.pick(kinds)
    if kind == "number":
        return hostile_number(data)
    if kind == "string":
        return hostile_string(data, rng) if not isinstance(old, str) else str(old) + "\ud800"
    if kind == "null":
        return None
    if kind == "bool":
        return data.boolean()
    if kind == "list":
        return [old, old] if data.boolean() else []
    if kind == "object":
        return {"": old, "nested": {"x": old}} if data.boolean() else {}
    return deep_nest(data)


# ---------------------------------------------------------------- a JSON document
Path_ = tuple[Any, ...]


def paths(doc: Any, limit: int = MAX_PATHS) -> list[Path_]:
    """Paths to values in `doc`, breadth first, at most `limit`."""
    found: list[Path_] = []
    queue: list[tuple[Path_, Any]] = [((), doc)]
    while queue and len(found) < limit:
        here, value = queue.pop(0)
        found.append(here)
        if isinstance(value, dict):
            queue += [((*here, k), v) for k, v in value.items()]
        elif isinstance(value, list):
            queue += [((*here, i), v) for i, v in enumerate(value)]
    return found


def get(doc: Any, where: Path_) -> Any:
    for key in where:
        doc = doc[key]
    return doc


def put(doc: Any, where: Path_, value: Any) -> Any:
    if not where:
        return value
    get(doc, where[:-1])[where[-1]] = value
    return doc


def _pick(data: Chooser, choices: list[Path_]) -> Path_:
    return choices[data.integer(0, len(choices) - 1)]


def damage_doc(data: Chooser, rng: random.Random, doc: Any, steps: list[str]) -> Any:
    """One structural change to a parsed JSON document."""
    every = paths(doc)
    op = data.weighted(DOC_OPS)
    numbers = [p for p in every if _is_number(get(doc, p))]
    strings = [p for p in every if isinstance(get(doc, p), str)]
    if op == "number" and numbers:
        where = _pick(data, numbers)
        value = hostile_number(data)
        steps.append(f"{_show(where)}: number {_brief(get(doc, where))} -> {_brief(value)}")
        return put(doc, where, value)
    if op in ("string", "inner") and strings:
        return _damage_string(data, rng, doc, _pick(data, strings), op, steps)
    return _damage_at(data, rng, doc, every, op, steps)


def _damage_at(
    data: Chooser, rng: random.Random, doc: Any, every: list[Path_], op: str, steps: list[str]
) -> Any:
    """`op` on a value anywhere: deleted, nested deep, a key twice, swapped, another type."""
    where = _pick(data, every)
    old = get(doc, where)
    if op == "delete" and where:
        del get(doc, where[:-1])[where[-1]]
        steps.append(f"{_show(where)}: deleted")
        return doc
    if op == "nest":
        steps.append(f"{_show(where)}: nested deep")
        return put(doc, where, deep_nest(data))
    if op == "dup" and isinstance(old, dict) and old:
        key = data.pick(sorted(old))
        pairs = [*old.items(), (key, other_value(data, rng, old[key]))]
        steps.append(f"{_show(where)}: key {key!r} twice")
        return put(doc, where, Dup(pairs))
    if op == "swap" and len(every) > 2:
        other = _pick(data, every)
        if not _nested(where, other):
            steps.append(f"{_show(where)} <-> {_show(other)}")
            first, second = old, get(doc, other)
            put(doc, where, second)
            return put(doc, other, first)
    value = other_value(data, rng, old)
    steps.append(f"{_show(where)}: {type(old).__name__} -> {_brief(value)}")
    return put(doc, where, value)


def _damage_string(
    data: Chooser, rng: random.Random, doc: Any, where: Path_, op: str, steps: list[str]
) -> Any:
    old = get(doc, where)
    if op == "inner":
        inner = inner_json(old)
        if inner is not None:
            start, end, value = inner
            damaged = damage_doc(data, rng, value, steps)
            steps.append(f"{_show(where)}: (inside its JSON)")
            return put(doc, where, old[:start] + dumps(damaged) + old[end:])
    value = hostile_string(data, rng)
    at = data.integer(0, len(old))
    new = old[:at] + value + old[at:] if data.boolean() else value
    steps.append(f"{_show(where)}: string with {_brief(value)}")
    return put(doc, where, new)


def inner_json(text: str) -> tuple[int, int, Any] | None:
    """(start, end, value) of the first JSON object or array inside `text` (a trace_log line's
    arguments, a passage's footer, a block's value), else None."""
    decoder = json.JSONDecoder()
    for opener in ("{", "["):
        start = text.find(opener)
        if start < 0:
            continue
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        return start, end, value
    return None


def _nested(a: Path_, b: Path_) -> bool:
    return a[: len(b)] == b or b[: len(a)] == a


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(where: Path_) -> str:
    return "/" + "/".join(str(k) for k in where)


def _brief(value: Any) -> str:
    if isinstance(value, str):
        return f"str[{len(value)}] {value[:24]!r}" if len(value) > 24 else repr(value)
    text = repr(value)
    return text if len(text) <= 48 else text[:47] + "…"


def leaf_pattern(data: Chooser, docs: list[Any]) -> tuple[Path_, Any] | None:
    """A field of the records (a path to a leaf, list indices as "*": every node's, every
    result's) and one value it has; a number most often. Each field of the first 2,000 records
    is as likely as another, however often it occurs."""
    leaves: dict[Path_, Any] = {}
    for doc in docs[:2000]:
        for where in paths(doc, 2000):
            value = get(doc, where)
            if where and not isinstance(value, (dict, list)):
                leaves.setdefault(_wild(where), value)
    numbers = [p for p, value in leaves.items() if _is_number(value)]
    chosen = numbers if numbers and data.integer(0, 3) else list(leaves)
    known = [p for p in chosen if p[-1] in FIELDS]
    if known and data.boolean():  # the fields readers compute with, first
        chosen = known
    if not chosen:
        return None
    pattern = _pick(data, sorted(chosen, key=repr))
    return pattern, leaves[pattern]


def _wild(where: Path_) -> Path_:
    return tuple("*" if isinstance(k, int) else k for k in where)


def set_all(doc: Any, pattern: Path_, value: Any) -> int:
    """`value` wherever `pattern` matches in `doc`; how many places."""
    if not pattern:
        return 0
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        children = list(range(len(doc))) if isinstance(doc, list) else []
    else:
        children = [head] if isinstance(doc, dict) and head in doc else []
    count = 0
    for key in children:
        if rest:
            count += set_all(doc[key], rest, value)
        else:
            doc[key] = value
            count += 1
    return count


def damage_column(data: Chooser, rng: random.Random, docs: list[Any], steps: list[str]) -> None:
    """One field set to one hostile value in every record that has it (a writer's bug writes
    every score, every ts the same wrong way)."""
    found = leaf_pattern(data, docs)
    if found is None:
        return
    pattern, old = found
    value = hostile_number(data) if _is_number(old) else other_value(data, rng, old)
    count = sum(set_all(doc, pattern, value) for doc in docs)
    steps.append(f"{_show(pattern)} everywhere ({count}): {_brief(value)}")


def damage_tree_links(data: Chooser, doc: Any, steps: list[str]) -> Any:
    """ARI's tree made inconsistent: a parent that is the node itself, its own child, or
    missing; ancestor_ids naming strangers; two nodes with one id."""
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    if not isinstance(nodes, list) or len(nodes) < 2:
        return doc
    i = data.integer(0, len(nodes) - 1)
    j = data.integer(0, len(nodes) - 1)
    a, b = nodes[i], nodes[j]
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return doc
    op = data.pick(["cycle", "self", "orphan", "ancestors", "same id"])
    if op == "cycle":
        a["parent_id"], b["parent_id"] = b.get("id"), a.get("id")
    elif op == "self":
        a["parent_id"] = a.get("id")
    elif op == "orphan":
        a["parent_id"] = "node_missing_parent"
    elif op == "ancestors":
        a["ancestor_ids"] = [b.get("id"), a.get("id"), "node_nobody"]
    else:
        a["id"] = b.get("id")
    steps.append(f"nodes[{i}] {op} nodes[{j}]")
    return doc


# ---------------------------------------------------------------- bytes
def damage_bytes(data: Chooser, rng: random.Random, raw: bytes, steps: list[str]) -> bytes:
    """One byte-level change: bit flips, a cut, bad UTF-8, NULs, a BOM, a slice repeated."""
    op = data.pick(["flip", "cut", "utf8", "nul", "bom", "repeat", "zero", "crlf"])
    size = len(raw)
    at = rng.randrange(size + 1)
    if op == "flip" and size:
        out = bytearray(raw)
        count = data.integer(1, 8)
        for _ in range(count):
            out[rng.randrange(size)] ^= 1 << rng.randrange(8)
        steps.append(f"{count} bits flipped")
        return bytes(out)
    if op == "cut":
        steps.append(f"cut at byte {at} of {size}")
        return raw[:at]
    if op == "utf8":
        bad = data.pick(BAD_UTF8)
        steps.append(f"bad UTF-8 {bad!r} at byte {at}")
        return raw[:at] + bad + raw[at:]
    if op == "nul":
        steps.append(f"NULs at byte {at}")
        return raw[:at] + b"\0" * rng.randrange(1, 4096) + raw[at:]
    if op == "bom":
        steps.append("a UTF-8 BOM in front")
        return b"\xef\xbb\xbf" + raw
    if op == "repeat" and size:
        end = min(size, at + rng.randrange(1, 4096))
        steps.append(f"bytes {at}-{end} repeated")
        return raw[:end] + raw[at:end] + raw[end:]
    if op == "zero" and size:
        end = min(size, at + rng.randrange(1, 512))
        steps.append(f"bytes {at}-{end} zeroed")
        return raw[:at] + b"\0" * (end - at) + raw[end:]
    steps.append("CRLF line ends")
    return raw.replace(b"\n", b"\r\n")


def maybe_bytes(data: Chooser, rng: random.Random, raw: bytes, steps: list[str]) -> bytes:
    """Byte damage on top of structural damage, one time in four."""
    if data.integer(0, 3) == 0:
        return damage_bytes(data, rng, raw, steps)
    return raw


# ---------------------------------------------------------------- file kinds
def damage_json(data: Chooser, raw: bytes, tree: bool = False) -> Damage:
    """A JSON file: a structural change (or a broken tree) and maybe bytes; bytes alone when it
    does not parse."""
    rng = data.random()
    steps: list[str] = []
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return Damage(damage_bytes(data, rng, raw, steps), steps)
    for _ in range(data.integer(1, 3)):
        way = data.weighted({"links": 1 if tree else 0, "column": 1, "value": 3})
        if way == "links":
            doc = damage_tree_links(data, doc, steps)
        elif way == "column" and isinstance(doc, (dict, list)):
            damage_column(data, rng, [doc], steps)
        else:
            doc = damage_doc(data, rng, doc, steps)
    text = dumps(doc).encode("utf-8", "surrogatepass")
    return Damage(maybe_bytes(data, rng, text, steps), steps)


def damage_lines(data: Chooser, raw: bytes) -> Damage:
    """JSON lines: one to three lines changed in structure, or lines dropped, repeated,
    swapped, joined, blank or garbage; then maybe bytes."""
    rng = data.random()
    steps: list[str] = []
    lines = raw.split(b"\n")
    for _ in range(data.integer(1, 3)):
        i = data.integer(0, max(0, len(lines) - 1))
        op = data.weighted(LINE_OPS)
        if op in ("column", "value"):
            _line_values(data, rng, lines, i, op, steps)
        else:
            _line_order(data, rng, lines, i, op, steps)
    out = b"\n".join(lines)
    return Damage(maybe_bytes(data, rng, out, steps), steps)


def _line_values(
    data: Chooser, rng: random.Random, lines: list[bytes], i: int, op: str, steps: list[str]
) -> None:
    """A field of every line (`column`), or one value of line `i`."""
    if op == "column":
        docs = _parsed(lines)
        if docs:
            damage_column(data, rng, [doc for _, doc in docs], steps)
            for at, doc in docs:
                lines[at] = dumps(doc).encode("utf-8", "surrogatepass")
        return
    try:
        doc = json.loads(lines[i])
    except (ValueError, RecursionError):
        return
    doc = damage_doc(data, rng, doc, steps)
    lines[i] = dumps(doc).encode("utf-8", "surrogatepass")
    steps[-1] = f"line {i + 1} {steps[-1]}"


def _line_order(
    data: Chooser, rng: random.Random, lines: list[bytes], i: int, op: str, steps: list[str]
) -> None:
    """Line `i` dropped, repeated, swapped, joined to the next, or garbage put before it."""
    if op == "drop" and lines:
        del lines[i]
        steps.append(f"line {i + 1} dropped")
    elif op == "dup" and lines:
        lines.insert(i, lines[i])
        steps.append(f"line {i + 1} twice")
    elif op == "swap" and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        steps.append(f"lines {i + 1} and {j + 1} swapped")
    elif op == "join" and i + 1 < len(lines):
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
        steps.append(f"lines {i + 1} and {i + 2} joined")
    else:
        garbage = data.pick([b"", b"   ", b"null", b"[]", b"{", b"\x00"])
        lines.insert(i, garbage)
        steps.append(f"line {i + 1}: {garbage!r} inserted")


LINE_OPS = {"value": 3, "column": 2, "drop": 1, "dup": 1, "swap": 1, "join": 1, "garbage": 1}


def _parsed(lines: list[bytes]) -> list[tuple[int, Any]]:
    """(index, value) of each line that parses as a JSON object."""
    found = []
    for at, line in enumerate(lines):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append((at, value))
    return found


def damage_gzip(data: Chooser, raw: bytes) -> Damage:
    """gzip of JSON lines: the lines damaged and compressed again, or the compressed bytes
    damaged, or a second member, or a bomb of zeros."""
    op = data.pick(["lines", "lines", "lines", "bytes", "member", "bomb"])
    body = gzip.decompress(raw)
    if op == "lines":
        inner = damage_lines(data, body)
        return Damage(
            gzip.compress(inner.data, 6, mtime=0),
            [f"(decompressed) {step}" for step in inner.steps],
        )
    rng = data.random()
    steps: list[str] = []
    if op == "bytes":
        return Damage(damage_bytes(data, rng, raw, steps), steps)
    if op == "member":
        extra = data.pick([b"garbage", gzip.compress(b"{}\n\xff\n", mtime=0)])
        steps.append(f"{len(extra)} bytes after the gzip member")
        return Damage(raw + extra, steps)
    size = data.pick([80 * MIB, 300 * MIB])
    steps.append(f"a gzip bomb: {size // MIB} MiB of zeros after the lines")
    return Damage(gzip.compress(body + b"\0" * size, 1, mtime=0), steps)


def damage_text(data: Chooser, raw: bytes) -> Damage:
    """A text file (experiment.md, a run's log): bytes, escapes, surrogates, a huge line."""
    rng = data.random()
    steps: list[str] = []
    if data.boolean():
        value = hostile_string(data, rng).encode("utf-8", "surrogatepass")
        at = rng.randrange(len(raw) + 1)
        steps.append(f"{_brief(value.decode('utf-8', 'replace'))} at byte {at}")
        raw = raw[:at] + value + raw[at:]
    return Damage(damage_bytes(data, rng, raw, steps), steps)


# ---------------------------------------------------------------- every number of a file
def numbers_past_range(data: Chooser) -> list[Any]:
    """Two to five numbers past some range, the same for the whole run."""
    pool = [*HUGE_FLOATS, *INTS[2:], 5e-324, -0.0, math.nan, math.inf]
    return [data.pick(pool) for _ in range(data.integer(2, 5))]


def past_range(value: Any, values: list[Any], count: list[int]) -> Any:
    """`value` with every number (not a bool) replaced by the next of `values`."""
    if isinstance(value, dict):
        return {k: past_range(v, values, count) for k, v in value.items()}
    if isinstance(value, list):
        return [past_range(v, values, count) for v in value]
    if _is_number(value):
        count[0] += 1
        return values[count[0] % len(values)]
    return value


def every_number(path: Any, values: list[Any], count: list[int]) -> None:
    """Every number of a JSON, JSON lines or gzip'd JSON lines file replaced, in turn."""
    raw = path.read_bytes()
    packed = path.name.endswith(".gz")
    body = gzip.decompress(raw) if packed else raw
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        lines = []
        for line in body.splitlines():
            try:
                lines.append(dumps(past_range(json.loads(line), values, count)).encode())
            except (ValueError, RecursionError):
                lines.append(line)
        body = b"\n".join(lines) + b"\n"
    else:
        try:
            body = dumps(past_range(json.loads(body), values, count)).encode()
        except (ValueError, RecursionError):
            return
    path.write_bytes(gzip.compress(body, mtime=0) if packed else body)
