"""The in-memory model of one ARI run.

Every reader (checkpoint files, Letta server) produces these objects, and everything downstream
(search replay, audit, TUI, JSON output) consumes only these. All fields but identifiers are
optional, because ARI's files in the wild lack fields often (legacy trees, resumed runs,
half-written files).

The records are plain dataclasses (`Record`) and msgspec Structs, not pydantic models, and their
methods are not named as pydantic's: a big run holds hundreds of thousands of entries and access
events (kept as columns, model/columns/; `MemoryEntry` and `AccessEvent` are a row's record
form), and as pydantic models they would cost an order of magnitude more (200k entries: msgspec
Structs 24 MB and 0.8 s, pydantic models 293 MB and 7.5 s, measured 2026-12-06 with tracemalloc
on, load average 17: the ratios, not the times, are the point). The small records follow the
same rule: the run index restores a 10k-node run's nodes without a validation pass, and the
replay builds a node's hits per key press. Input is checked where it arrives, by the readers and
by msgspec (`from_data`), and `as_data` turns a record into the plain data that the run index
holds and that JSON output is built from: the JSON outputs are pydantic models
(render/outputs.py), which check that data at the edge.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, overload

import msgspec

NODE_LABELS = ("draft", "improve", "debug", "ablation", "validation", "other")
NODE_STATUSES = ("pending", "running", "success", "failed", "abandoned")

EntryKind = Literal["node_scope", "react_step"]


def _plain(value: Any) -> Any:
    """What `as_data` makes of a value msgspec does not know: a sequence (a node's
    `ParentChain`) as its list, a numpy scalar as its Python number."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"cannot dump a {type(value).__name__}")


def _defaults(cls: type) -> list[tuple[str, Any]]:
    """(name, default maker) of each field of the dataclass `cls` that has a default."""
    found = _DEFAULTS.get(cls)
    if found is None:
        found = _DEFAULTS[cls] = [
            (f.name, f.default_factory if f.default is MISSING else (lambda v=f.default: v))
            for f in fields(cls)
            if f.default is not MISSING or f.default_factory is not MISSING
        ]
    return found


_DEFAULTS: dict[type, list[tuple[str, Any]]] = {}


def _dumped(data: dict[str, Any], exclude: Collection[str]) -> dict[str, Any]:
    """`data` without the `exclude`d keys, as plain data (`_plain`): excluded before, so a
    rebuilt node's `ParentChain` (O(depth) to list) is not walked when the index leaves it out."""
    for name in exclude:
        data.pop(name, None)
    return msgspec.to_builtins(data, enc_hook=_plain)


class Record:
    """The base of the model's dataclasses: their plain data, checked construction, a copy.

    `FLOATS` and `INTS` name the number fields whose value is made a Python float / int at
    construction (a JSON 1 is a score of 1.0, a numpy rank a plain int), as pydantic did."""

    __slots__ = ()
    FLOATS: ClassVar[tuple[str, ...]] = ()
    INTS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for names, kind in ((self.FLOATS, float), (self.INTS, int)):
            for name in names:
                value = getattr(self, name)
                if value is not None and type(value) is not kind:
                    setattr(self, name, kind(value))

    def as_data(self, exclude: Collection[str] = ()) -> dict[str, Any]:
        """Every field as plain data (records as dicts, sequences as lists), in field order."""
        data = msgspec.to_builtins(self, enc_hook=_plain)
        for name in exclude:
            data.pop(name, None)
        return data

    @classmethod
    def from_data(cls, data: Any) -> Any:
        """The record a dict describes, each field checked against its type (a JSON "3" may be
        an int 3); msgspec.ValidationError names the field that is not."""
        if isinstance(data, cls):
            return data
        record = msgspec.convert(data, cls, strict=False)
        values = record.__dict__
        for name, default in _defaults(cls):  # msgspec leaves a plain default to the class
            if name not in values:
                values[name] = default()
        return record

    def __eq__(self, other: object) -> bool:
        """Equal dumps (a dataclass compares its fields instead: the same, without the dump)."""
        if type(other) is not type(self):
            return NotImplemented
        return self.as_data() == other.as_data()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def replaced(self, **changes: Any) -> Any:
        """A shallow copy, with the fields `changes` names replaced (not checked)."""
        twin = copy.copy(self)
        for name, value in changes.items():
            setattr(twin, name, value)
        return twin


@dataclass(kw_only=True)
class Problem(Record):
    """Something in the input that could not be read as it should; what was skipped and why."""

    file: str  # path relative to the checkpoint (or "letta:<url>") that holds the bad input
    where: str = ""  # "line 12", "node node_ab12cd34", "byte 40960", "record 3" ...
    what: str  # what was skipped or assumed, e.g. "skipped 1 line", "kept 120 records"
    why: str  # the reason, e.g. "truncated gzip (EOFError)"
    severity: Literal["info", "warning", "error"] = "warning"

    def line(self) -> str:
        where = f" {self.where}" if self.where else ""
        return f"{self.file}{where}: {self.what} ({self.why})"


class JsonStrings:
    """A JSON array of strings kept as its bytes, decoded when first used.

    The reader checks the array once (every item a string) and keeps only the bytes: a big
    run's tree.json is mostly `trace_log` lines, which nothing needs until a node is looked at.
    """

    __slots__ = ("raw", "scanned")

    def __init__(self, raw: bytes | msgspec.Raw | memoryview, scanned: Any = None) -> None:
        self.raw = raw  # a view of the file's bytes, or of a reopened run's mapped index
        # what the loader took from the lines when the reader decoded them to check them
        # (`trace_log.scanner`), until it is used: the loader does not decode them again
        self.scanned = scanned

    def decode(self) -> list[str]:
        try:
            return msgspec.json.decode(self.raw, type=list[str])
        except (
            msgspec.DecodeError
        ):  # msgspec refuses lone surrogates (`"\\ud800"`): json takes them
            return msgspec.convert(json.loads(bytes(self.raw)), list[str])

    def __reduce__(self):
        return (type(self), (bytes(self.raw),))


class JsonList(JsonStrings):
    """A JSON array of any values kept as its bytes (a node's `artifacts`), decoded when first
    used; the reader checked it is an array, not nested too deeply."""

    __slots__ = ()

    def decode(self) -> list[Any]:  # type: ignore[override]
        try:
            return msgspec.json.decode(self.raw)
        except msgspec.DecodeError:  # a lone surrogate, as in JsonStrings
            return json.loads(bytes(self.raw))


class ParentChain(Sequence[str]):
    """A node's ancestor ids (root first), read off the run's tree (its graph's parent links)
    when asked.

    A tree without `ancestor_ids` gets these instead of lists: a 20,000-deep chain would
    otherwise hold 200 million ids (quadratic). Length and parent are O(1); iterating and
    `in` walk the links, O(depth), and nothing is kept. Behaves like the list it stands for.
    """

    __slots__ = ("_len", "_pred", "_start")

    def __init__(self, graph: Any, node_id: str, length: int) -> None:
        """`graph`: the run's networkx DiGraph, a forest (each node one parent at most)."""
        self._pred = graph.pred  # node id -> {parent id: …}
        self._start = next(iter(self._pred[node_id]), None)
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._start is not None

    def _up(self) -> Iterator[str]:
        current, pred = self._start, self._pred
        while current is not None:
            yield current
            current = next(iter(pred[current]), None)

    def __iter__(self) -> Iterator[str]:
        chain = list(self._up())
        chain.reverse()
        return iter(chain)

    def __reversed__(self) -> Iterator[str]:
        return self._up()

    def __contains__(self, item: object) -> bool:
        return any(item == current for current in self._up())

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, int) and index in (-1, self._len - 1) and self._start is not None:
            return self._start  # the parent, without a walk
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ParentChain, list, tuple)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # like the list it stands for

    def __repr__(self) -> str:
        return repr(list(self))


_ABSENT = object()


class NodeFields(msgspec.Struct, kw_only=True):
    """A node's fields as `tree.json` holds them (§2.2), and their types: what `Node` checks
    its input against. The loader sets `scope_reconstructed`, never read from the file."""

    id: str
    parent_id: str | None = None
    depth: int | None = None
    status: str | None = None
    retry_count: int | None = None
    children: list[str] = msgspec.field(default_factory=list)
    created_at: str | None = None
    completed_at: str | None = None
    metrics: dict[str, Any] = msgspec.field(default_factory=dict)
    has_real_data: bool | None = None
    eval_summary: str | None = None
    label: str | None = None
    raw_label: str | None = None
    name: str | None = None
    error_log: str | None = None
    ancestor_ids: list[str] = msgspec.field(default_factory=list)
    original_direction: str | None = None
    node_report_path: str | None = None
    scope_reconstructed: bool = False  # ancestor_ids was missing and rebuilt from parent_id


NODE_FIELDS: tuple[str, ...] = NodeFields.__struct_fields__
_NODE_DEFAULTS = {
    f.name: f.default_factory if f.default is msgspec.NODEFAULT else (lambda v=f.default: v)
    for f in msgspec.structs.fields(NodeFields)
    if f.default is not msgspec.NODEFAULT or f.default_factory is not msgspec.NODEFAULT
}


class Node(Record):
    """One BFTS node, as `tree.json` holds it (§2.2), plus what the loader learnt about it.

    The fields are `NodeFields`'; keys the file has beyond them are kept in `extra_fields`
    (ARI's trees carry more than §2.2 lists). `trace_log` and `artifacts` are kept as the
    file's bytes until first read (`JsonStrings`, `JsonList`): a big run's tree.json is mostly
    trace lines, which nothing needs until a node is looked at.
    """

    id: str
    parent_id: str | None
    depth: int | None
    status: str | None
    retry_count: int | None
    children: list[str]
    created_at: str | None
    completed_at: str | None
    metrics: dict[str, Any]
    has_real_data: bool | None
    eval_summary: str | None
    label: str | None
    raw_label: str | None
    name: str | None
    error_log: str | None
    ancestor_ids: Sequence[str]  # a list, or the loader's ParentChain
    original_direction: str | None
    node_report_path: str | None
    scope_reconstructed: bool
    extra_fields: dict[str, Any]

    def __init__(self, **data: Any) -> None:
        """A node from its fields, each checked against its type (msgspec.ValidationError
        names the field that is not); other keys go to `extra_fields`."""
        trace = data.pop("trace_log", _ABSENT)
        artifacts = data.pop("artifacts", _ABSENT)
        known = {name: data.pop(name) for name in NODE_FIELDS if name in data}
        typed = msgspec.convert(known, NodeFields, strict=False)
        self.__dict__.update(zip(NODE_FIELDS, msgspec.structs.astuple(typed), strict=True))
        self.extra_fields = data
        # a list of strings, or the JsonStrings the reader left undecoded (None: [])
        self._trace: list[str] | JsonStrings | None = None
        # a list, or the JsonList the reader left undecoded (None: [])
        self._artifacts: list[Any] | JsonList | None = None
        if trace is not _ABSENT:
            self._trace = _trace_value(trace)
        if artifacts is not _ABSENT:
            self._artifacts = _artifacts_value(artifacts)

    @classmethod
    def from_data(cls, data: Any) -> Node:
        return data if isinstance(data, cls) else cls(**data)

    @classmethod
    def checked(cls, data: dict[str, Any]) -> Node:
        """A node from fields the tree reader has checked one by one against their types
        (checkpoint/tree.py `_check_types`, which drops what is not of its type), without
        msgspec's second pass over them (10k nodes: the sketch's CPU 0.36 s -> 0.32 s, the
        collector off). Other keys go to `extra_fields`."""
        trace = data.pop("trace_log", _ABSENT)
        artifacts = data.pop("artifacts", _ABSENT)
        node = cls.restore(data, None, None)  # type: ignore[arg-type]  # (None: none)
        if trace is not _ABSENT:
            node._trace = _trace_value(trace)
        if artifacts is not _ABSENT:
            node._artifacts = _artifacts_value(artifacts)
        return node

    @classmethod
    def restore(cls, fields: dict[str, Any], trace: JsonStrings, artifacts: JsonList) -> Node:
        """A node from the fields a Node of ours dumped (the run index, checked by its CRCs):
        without a validation pass, which would be most of a reopen's time at 10k nodes."""
        node = cls.__new__(cls)
        values = node.__dict__
        for name in NODE_FIELDS:  # (the rebuilt ancestors are not stored)
            values[name] = fields.pop(name) if name in fields else _NODE_DEFAULTS[name]()
        values["extra_fields"] = fields  # what is left: the file's other keys
        values["_trace"], values["_artifacts"] = trace, artifacts
        return node

    def as_data(self, exclude: Collection[str] = ()) -> dict[str, Any]:
        """The fields, then the file's other keys, then `artifacts` and `trace_log` (decoded
        only when not excluded), as plain data."""
        values = self.__dict__
        data = {name: values[name] for name in NODE_FIELDS}
        data.update(self.extra_fields)
        if "artifacts" not in exclude:
            data["artifacts"] = self.artifacts
        if "trace_log" not in exclude:
            data["trace_log"] = self.trace_log
        return _dumped(data, exclude)

    def __repr__(self) -> str:
        return f"Node(id={self.id!r}, parent_id={self.parent_id!r}, status={self.status!r})"

    @property
    def artifacts(self) -> list[Any]:
        """The node's artifacts (§2.2), decoded from the file on first use."""
        value = self._artifacts
        if type(value) is not list:
            value = self._artifacts = [] if value is None else value.decode()
        return value

    @artifacts.setter
    def artifacts(self, value: list[Any] | JsonList) -> None:
        self._artifacts = _artifacts_value(value)

    def artifacts_raw(self) -> bytes | msgspec.Raw | memoryview | None:
        """The file's JSON bytes of `artifacts` while still undecoded, else None."""
        value = self._artifacts
        return value.raw if type(value) is JsonList else None

    @property
    def trace_log(self) -> list[str]:
        """The node's trace lines (§2.7), decoded from the file on first use."""
        trace = self._trace
        if type(trace) is not list:
            trace = self._trace = [] if trace is None else trace.decode()
        return trace

    @trace_log.setter
    def trace_log(self, value: list[str] | JsonStrings) -> None:
        self._trace = _trace_value(value)

    def trace_json(self) -> bytes:
        """`trace_log` as JSON bytes (the file's own, when it is still undecoded)."""
        trace = self._trace
        if type(trace) is JsonStrings:
            return bytes(trace.raw)
        try:
            return msgspec.json.encode(trace or [])
        except UnicodeEncodeError:  # a lone surrogate: json writes it as its `\\ud800` escape
            return json.dumps(trace).encode()

    def trace_raw(self) -> bytes | msgspec.Raw | memoryview | None:
        """The file's JSON bytes of `trace_log` while still undecoded, else None."""
        trace = self._trace
        return trace.raw if type(trace) is JsonStrings else None

    def take_trace_scan(self) -> Any:
        """What the tree reader's scan took from the undecoded trace_log (None: nothing), once:
        it is dropped as it is given."""
        trace = self._trace
        if type(trace) is not JsonStrings:
            return None
        scanned, trace.scanned = trace.scanned, None
        return scanned

    def trace_lines(self) -> list[str]:
        """`trace_log` without keeping it decoded on the node (a one-off pass over a big run)."""
        trace = self._trace
        if type(trace) is list:
            return trace
        return [] if trace is None else trace.decode()

    @property
    def score(self) -> float | None:
        value = self.metrics.get("_scientific_score") if self.metrics else None
        if not isinstance(value, (int, float)):
            return None
        try:
            return float(value)
        except OverflowError:  # an integer past a float's range (1e309 written out)
            return None

    @property
    def short_id(self) -> str:
        return self.id[-8:]


def _trace_value(value: Any) -> list[str] | JsonStrings:
    return value if type(value) is JsonStrings else msgspec.convert(value, list[str])


def _artifacts_value(value: Any) -> list[Any] | JsonList:
    if type(value) is JsonList:
        return value
    if not isinstance(value, list):
        raise TypeError("artifacts must be a list")
    return value


class MemoryEntry(msgspec.Struct, kw_only=True, gc=False, array_like=True):
    """One memory record: a node-scope passage or a ReAct step (§3.2, §3.3).

    A msgspec Struct, not a pydantic model: a big run holds hundreds of thousands of these, and
    a Struct is a third of the memory, is built without a validation pass (the readers check
    every value first), and the run index (checkpoint/index.py) decodes straight into it.
    gc=False: it holds only strings, numbers and a metadata dict, so it can close no cycle.
    array_like: the index stores it as an array of values (no field names per record); the
    index's key holds this source, so a change of fields rebuilds it.
    """

    id: str  # our own stable id (backups carry none); deterministic across loads
    kind: EntryKind
    node_id: str  # owner; for react steps metadata.node_id or ""
    text: str
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    ts: float | None = None
    source: str  # the file (or "letta") it came from, e.g. "memory_backup.jsonl.gz"
    source_line: int | None = None  # 1-based line / record number in that source
    letta_id: str | None = None  # passage id: from Letta, or joined from an access-log write
    step: int | None = None  # react step, if any
    partial: bool = False  # text is a preview or capped copy, not the full entry
    ari_checkpoint: str | None = None  # footer hash (Letta); None = this checkpoint's own files

    @property
    def mem_kind(self) -> str | None:
        """Typed-memory kind as ARI reads it: `mem_kind`, falling back to `type`."""
        value = self.metadata.get("mem_kind") or self.metadata.get("type")
        return str(value) if value is not None else None


@dataclass(kw_only=True)
class CoreBlocks(Record):
    """The agent's core memory blocks (§3.5, §5.6)."""

    FLOATS = ("seeded_at",)
    persona: str = ""
    human: str = ""
    ari_context: dict[str, Any] = field(default_factory=dict)
    seeded_at: float | None = None
    source: str = ""  # "memory_backup.jsonl.gz", "letta", or the files of the approximation
    approximate: bool = False  # rebuilt from idea.json / evaluation_criteria.json / experiment.md

    @property
    def seeded(self) -> bool:
        return bool(self.ari_context)


class AccessFields(msgspec.Struct, kw_only=True, gc=False, forbid_unknown_fields=True):
    """What one line of `memory_access*.jsonl` holds (§4.2): exactly its keys, each of its type.

    The access-log reader decodes a well-formed line into this, in C (checkpoint/access_log.py);
    a line with other keys or other types takes the lenient reader.
    """

    ts: float
    node_id: str = ""  # as logged: the stale "current node" for reads (§4.5)
    op: Literal["read", "write"]
    collection: str = ""
    # write events
    entry_id: str | None = None
    text_preview: str | None = None
    metadata: dict[str, Any] | None = None
    # read events
    query: str | None = None
    ancestor_ids: list[str] | None = None
    limit: int | None = None
    results: list[dict[str, Any]] = msgspec.field(default_factory=list)


class AccessEvent(AccessFields, array_like=True):
    """One access-log line with what the loader inferred about it: a msgspec Struct for the
    reasons MemoryEntry is one (array_like likewise; the index holds no unknown fields)."""

    # provenance and inference (set by the loader)
    source: str = ""  # file name
    source_line: int = 0
    reader: str | None = None  # inferred real reader node id, "pipeline", "bfts-select", or None
    # why: "startup-search", "inherit-burst", "trace_log", "pipeline", "bfts-select", or
    # "unattributed" (no reader could be established: `node_id` is only the last writer)
    reader_how: str = ""
    joined_entry: str | None = None  # for writes: our MemoryEntry.id the event was joined to
    extra: dict[str, Any] | None = None  # the line's keys §4.2 does not list, kept as they were
    reader_note: str = ""  # what the attribution had to assume about this read, if anything

    @property
    def is_inherit(self) -> bool:
        return bool(self.query) and self.query.startswith("inherit:")


class TraceCall(Record):
    """One LLM tool call from a node's `trace_log` (§2.7): the call line and its result line.

    `result` (the decoded payload) may be left to a decoder the reader gives (`lazy`): it then
    decodes `result_raw` each time it is read, and holds nothing. A big run's read calls return
    passages; decoded and kept they were ~30 MB at 10k nodes, read only by the audit and the
    health view."""

    __slots__ = (
        "_decode",
        "_result",
        "args",
        "args_raw",
        "index",
        "node_id",
        "ok",
        "result_raw",
        "tool",
    )
    FIELDS = ("node_id", "index", "tool", "args_raw", "args", "result_raw", "ok")

    def __init__(
        self,
        *,
        node_id: str,
        index: int,  # position of the call line in trace_log
        tool: str,
        args_raw: str,
        args: dict[str, Any] | None = None,  # None when the (maybe truncated) JSON does not parse
        result_raw: str | None = None,
        ok: bool | None = None,  # for guarded writes: accepted or not, when the result says
        result: Any = None,
    ) -> None:
        self.node_id, self.index, self.tool, self.args_raw = node_id, index, tool, args_raw
        self.args, self.result_raw, self.ok = args, result_raw, ok
        self._result = result
        self._decode: Any = None  # result_raw -> result, when left to it

    @classmethod
    def from_data(cls, values: dict[str, Any]) -> TraceCall:
        """A call from the reader's values (trace_log.py builds each of its type)."""
        return cls(**values)

    @classmethod
    def lazy(cls, values: dict[str, Any], decode: Any) -> TraceCall:
        """A call whose `result` is `decode(result_raw)`, made when read."""
        call = cls(**values)
        call._decode = decode
        return call

    @property
    def result(self) -> Any:
        """The decoded result payload, where it could be decoded (else None)."""
        if self._decode is not None:
            return self._decode(self.result_raw) if self.result_raw is not None else None
        return self._result

    def as_data(self, exclude: Collection[str] = ()) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.FIELDS}
        data["result"] = self.result
        return _dumped(data, exclude)

    def __repr__(self) -> str:
        return f"TraceCall(node_id={self.node_id!r}, index={self.index!r}, tool={self.tool!r})"


@dataclass(kw_only=True)
class CowWrite(Record):
    """One row of the copy-on-write log (§4.6): an accepted or rejected memory write."""

    FLOATS = ("ts",)
    ts: float | None = None
    current_node: str
    target_node: str
    tool: str
    accepted: bool
    reason: str | None = None  # rejection reason, e.g. "node_id does not match current node ..."
    entry_id: str | None = None  # our MemoryEntry.id for accepted writes, when known
    letta_id: str | None = None
    text: str = ""  # full text or preview
    metadata: dict[str, Any] | None = None
    step: int | None = None
    source: str  # "access_log" | "backup" | "access_log+backup" | "trace_log" | "auto_entry"
    # a rejected write: the entry that is the node's own log of the refused call (ARI stores the
    # call's result, the refusal, as an ordinary accepted entry), when it was found
    logged_by: str | None = None


# ---- search replay results (produced by ari_mem_tui.search, shown by the CLI and the TUI) ----


@dataclass(kw_only=True)
class Hit(Record):
    FLOATS = ("score",)
    INTS = ("rank", "global_rank")
    rank: int  # 1-based position among the node's hits
    # 0-based position in the unfiltered window (ARI's score uses this); -1 = unknown (a recorded
    # score that does not encode a rank: in-memory keyword overlap, or 0.0 past rank 99)
    global_rank: int
    score: float  # max(0, 1 - 0.01 * global_rank), or the score as recorded
    entry_id: str
    node_id: str
    kind: str
    text: str
    # recorded vs replayed: "" (the same), "replay-only", "recorded-only", "moved" (another rank),
    # "changed" (same rank, another global rank or score)
    mark: str = ""
    differs: list[str] = field(default_factory=list)  # which of rank, global_rank, score differ
    # the same entry's rank, global_rank and score in the other list (None: not in it)
    counterpart: dict[str, float | int] | None = None


@dataclass(kw_only=True)
class Missed(Record):
    INTS = ("global_rank",)
    entry_id: str
    node_id: str
    global_rank: int | None  # rank in the whole pool; None when unknown (server window only)
    text: str


@dataclass(kw_only=True)
class TierLine(Record):
    text: str
    truncated: bool = False
    entry_id: str | None = None


@dataclass(kw_only=True)
class Tier(Record):
    key: Literal["1a", "1b", "1c", "2"]
    title: str
    header: str  # the exact header line ARI emits
    lines: list[TierLine] = field(default_factory=list)
    exact: bool = True
    note: str = ""  # why approximate, or why empty


@dataclass(kw_only=True)
class RecordedSearch(Record):
    """The node's start-up search as the access log recorded it."""

    FLOATS = ("ts",)
    ts: float
    query: str
    limit: int | None
    hits: list[Hit]  # resolved through the write-event join where possible
    # which memory backend recorded it, read off the scores (docs/ari-format.md §5.2):
    # "letta" (1 - 0.01 r on the 0.01 grid), "in_memory" (keyword overlap, off the grid),
    # "letta-substring" (v0.6: every score 0.0), "unknown" (no hits)
    backend: str = "unknown"
    ranker: str = ""  # in words: "a Letta server's embedder", "ARI's in-memory keyword overlap"
    differences: int = 0  # ENTRIES that differ between recording and replay (not sides)


@dataclass(kw_only=True)
class RankerFidelity(Record):
    """Whether hits were ranked the way the run ranked them: the one answer every view shows.

    Two questions, answered apart (search/fidelity.py says them in words, `word`):
    `own`: whether the ranker is the run's own (its Letta server, its embedding model with the
    run's footer hash, a local model the run's settings name, ARI's in-memory rule on a run
    that backend recorded): True, False (a stand-in), None (the files cannot tell).
    `verified`: whether the replay reproduced the node's recorded search (entries, order,
    scores): True, False, None (no recording to check it against).
    `exact` is True only when both are; False for a stand-in or a replay that differs; None
    where nothing checked it. `label` says it in one line ("exact: the run's embedding model
    (openai/text-embedding-3-small), its recorded search reproduced", "stand-in: local
    MiniLM"); `note`, when not exact, why the recording may differ and how to get the exact
    ranker; `cause`, when not reproduced, the likely cause.
    """

    exact: bool | None = False
    label: str = ""
    short: str = ""  # a title's few words: "exact: run:text-embedding-3-small", "stand-in: bm25"
    ranker: str = ""  # what ranked the replay, in words (endpoint without credentials)
    recorded: str = ""  # what ranked the recording, in words ("" when none was recorded)
    note: str = ""
    own: bool | None = False  # the ranker is the run's own (see above)
    verified: bool | None = None  # the node's recorded search was reproduced (see above)
    word: str = ""  # exact | run's ranker, unchecked | not reproduced | stand-in | unverified
    cause: str = ""  # not reproduced: the likely cause, in words
    # the run's embedding model only: the footer hash its texts were rebuilt with, and what
    # checked it (a model.origin.HashFinding; typed loosely here: origin builds on this module)
    hash: Any = None

    @property
    def kind(self) -> str:
        """The verdict's one word (search/fidelity.py's words): "exact", "stand-in" …"""
        if self.word:
            return self.word
        return {True: "exact", False: "stand-in"}.get(self.exact, "unverified")  # type: ignore[arg-type]


@dataclass(kw_only=True)
class Replay(Record):
    """Everything about what one node saw; the JSON of `ari-mem-tui saw`."""

    FLOATS = ("as_of",)
    node_id: str
    query: str
    # "start" (eval_summary at the node's start = its direction: ARI's own query), "now" (its
    # eval_summary today, e.g. the verdict) or "custom"; `query_field` says which field was used
    query_source: str
    query_field: str = ""  # "original_direction" | "eval_summary" | "goal" | "default" | ""
    params: dict[str, int | None]  # limit, overfetch, top_k (null: no window, in-memory)
    pool: dict[str, Any]  # size, node_scope, react_step, window composition, per branch
    hits: list[Hit]
    eligible: int
    missed: list[Missed]
    exact_scope: list[Hit]  # what a pre-filtered search would have returned
    recorded: RecordedSearch | None
    as_of: float | None = None  # the pool was cut at this time (None: today's whole pool)
    # always set: "start-up search" | "first start-up read" | "created_at" (as of the node's
    # start), "now" (today's pool, asked for), "now: start unknown" (as-of asked for, but no
    # start time is known)
    as_of_source: str | None = None
    tiers: list[Tier] = field(default_factory=list)
    core: CoreBlocks = field(default_factory=CoreBlocks)
    writes: list[CowWrite] = field(default_factory=list)
    embedder: str  # the ranker that produced these hits: "minilm", "bm25", "letta:<url>"
    # ranked by a backend rule without a window (ARI's in-memory one): no top_k, no global
    # ranks, nothing missed; `pool.window` is None
    windowless: bool = False
    fallback: bool = False  # another ranker stood in for the chosen one (not ready, failed)
    # whether `embedder` ranks as the run did, and if not why differences are expected
    fidelity: RankerFidelity = field(default_factory=RankerFidelity)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        # fills in global ranks left unknown by a fast replay (search.replay, exact_ranks=False)
        self._rank_resolver: Any = None

    def set_rank_resolver(self, resolver: Any) -> None:
        self._rank_resolver = resolver

    @property
    def ranks_pending(self) -> bool:
        return self._rank_resolver is not None

    def resolve_ranks(self) -> None:
        """Compute the deferred global ranks (missed entries, exact scope); idempotent."""
        resolver, self._rank_resolver = self._rank_resolver, None
        if resolver is not None:
            resolver(self)
