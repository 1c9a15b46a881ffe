"""The in-memory model of one ARI run.

Every reader (checkpoint files, Letta server) produces these objects, and everything downstream
(search replay, audit, TUI, JSON output) consumes only these. Pydantic is used because these are
the edges of the program: data arrives from files and servers we do not control, and leaves as
JSON. All fields but identifiers are optional, because ARI's files in the wild lack fields often
(legacy trees, resumed runs, half-written files).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, overload

import msgspec
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    computed_field,
    field_serializer,
    model_validator,
)

NODE_LABELS = ("draft", "improve", "debug", "ablation", "validation", "other")
NODE_STATUSES = ("pending", "running", "success", "failed", "abandoned")

EntryKind = Literal["node_scope", "react_step"]


class Problem(BaseModel):
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

    __slots__ = ("raw",)

    def __init__(self, raw: bytes | msgspec.Raw | memoryview) -> None:
        self.raw = raw  # a view of the file's bytes, or of a reopened run's mapped index

    def decode(self) -> list[str]:
        try:
            return msgspec.json.decode(self.raw, type=list[str])
        except (
            msgspec.DecodeError
        ):  # msgspec refuses lone surrogates (`"\\ud800"`): json takes them
            return _STRINGS.validate_python(json.loads(bytes(self.raw)))

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
    """A node's ancestor ids (root first), read off the run's parent links when asked.

    A tree without `ancestor_ids` gets these instead of lists: a 20,000-deep chain would
    otherwise hold 200 million ids (quadratic). Length and parent are O(1); iterating and
    `in` walk the links, O(depth), and nothing is kept. Behaves like the list it stands for.
    """

    __slots__ = ("_len", "_parent", "_start")

    def __init__(self, parent: Mapping[str, str | None], node_id: str, length: int) -> None:
        self._parent = parent  # child id -> parent id (None for a root); acyclic
        self._start = parent.get(node_id)
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._start is not None

    def _up(self) -> Iterator[str]:
        current, parent = self._start, self._parent
        while current is not None:
            yield current
            current = parent.get(current)

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


_STRINGS = TypeAdapter(list[str])
_ABSENT = object()


class Node(BaseModel):
    """One BFTS node, as `tree.json` holds it (§2.2), plus what the loader learnt about it."""

    model_config = ConfigDict(extra="allow")

    id: str
    parent_id: str | None = None
    depth: int | None = None
    status: str | None = None
    retry_count: int | None = None
    children: list[str] = Field(default_factory=list)
    created_at: str | None = None
    completed_at: str | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)
    has_real_data: bool | None = None
    eval_summary: str | None = None
    label: str | None = None
    raw_label: str | None = None
    name: str | None = None
    error_log: str | None = None
    ancestor_ids: list[str] = Field(default_factory=list)
    original_direction: str | None = None
    node_report_path: str | None = None
    # set by the loader, never read from the file
    scope_reconstructed: bool = False  # ancestor_ids was missing and rebuilt from parent_id
    # `trace_log` (below): a list of strings, or the JsonStrings the reader left undecoded
    # (None until set: a default_factory would cost an inspect.signature per node in pydantic)
    _trace: list[str] | JsonStrings | None = PrivateAttr(default=None)
    # `artifacts` (below): a list, or the JsonList the reader left undecoded (None: [])
    _artifacts: list[Any] | JsonList | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _take_lazy_fields(cls, data: Any, handler: Any) -> Node:
        trace = artifacts = _ABSENT
        if isinstance(data, dict) and ("trace_log" in data or "artifacts" in data):
            data = dict(data)
            trace = data.pop("trace_log", _ABSENT)
            artifacts = data.pop("artifacts", _ABSENT)
        node = handler(data)
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
        names = cls.model_fields
        extra = {key: fields.pop(key) for key in [k for k in fields if k not in names]}
        for name in names.keys() - fields.keys():  # (the rebuilt ancestors, not stored)
            fields[name] = [] if name == "ancestor_ids" else names[name].get_default()
        object.__setattr__(node, "__dict__", fields)
        object.__setattr__(node, "__pydantic_fields_set__", set(fields))
        object.__setattr__(node, "__pydantic_extra__", extra)
        object.__setattr__(node, "__pydantic_private__", {"_trace": trace, "_artifacts": artifacts})
        return node

    @computed_field  # type: ignore[prop-decorator]
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

    @field_serializer("ancestor_ids")
    def _ancestors_out(self, value: Sequence[str]) -> list[str]:
        return value if type(value) is list else list(value)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def trace_log(self) -> list[str]:
        """The node's trace lines (§2.7), decoded from the file on first use."""
        trace = self._trace
        if type(trace) is not list:
            trace = self._trace = [] if trace is None else trace.decode()
        return trace

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

    def trace_lines(self) -> list[str]:
        """`trace_log` without keeping it decoded on the node (a one-off pass over a big run)."""
        trace = self._trace
        if type(trace) is list:
            return trace
        return [] if trace is None else trace.decode()

    @trace_log.setter
    def trace_log(self, value: list[str] | JsonStrings) -> None:
        self._trace = _trace_value(value)

    @property
    def score(self) -> float | None:
        value = self.metrics.get("_scientific_score") if self.metrics else None
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def short_id(self) -> str:
        return self.id[-8:]


def _trace_value(value: Any) -> list[str] | JsonStrings:
    return value if type(value) is JsonStrings else _STRINGS.validate_python(value)


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


class CoreBlocks(BaseModel):
    """The agent's core memory blocks (§3.5, §5.6)."""

    persona: str = ""
    human: str = ""
    ari_context: dict[str, Any] = Field(default_factory=dict)
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


class TraceCall(BaseModel):
    """One LLM tool call from a node's `trace_log` (§2.7): the call line and its result line.

    `result` (the decoded payload) may be left to a decoder the reader gives (`lazy`): it then
    decodes `result_raw` each time it is read, and holds nothing. A big run's read calls return
    passages; decoded and kept they were ~30 MB at 10k nodes, read only by the audit and the
    health view."""

    node_id: str
    index: int  # position of the call line in trace_log
    tool: str
    args_raw: str
    args: dict[str, Any] | None = None  # None when the (maybe truncated) JSON does not parse
    result_raw: str | None = None
    ok: bool | None = None  # for guarded writes: accepted or not, when the result says
    _result: Any = PrivateAttr(default=None)
    _decode: Any = PrivateAttr(default=None)  # result_raw -> result, when left to it

    @model_validator(mode="wrap")
    @classmethod
    def _take_result(cls, data: Any, handler: Any) -> TraceCall:
        result = None
        if isinstance(data, dict) and "result" in data:
            data = dict(data)
            result = data.pop("result")
        call = handler(data)
        call._result = result
        return call

    @classmethod
    def lazy(cls, values: dict[str, Any], decode: Any) -> TraceCall:
        """A call whose `result` is `decode(result_raw)`, made when read."""
        call = cls.model_validate(values)
        call._decode = decode
        return call

    @computed_field  # type: ignore[prop-decorator]
    @property
    def result(self) -> Any:
        """The decoded result payload, where it could be decoded (else None)."""
        if self._decode is not None:
            return self._decode(self.result_raw) if self.result_raw is not None else None
        return self._result

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TraceCall):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]


class CowWrite(BaseModel):
    """One row of the copy-on-write log (§4.6): an accepted or rejected memory write."""

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


# ---- search replay results (produced by ari_mem_tui.search, shown by the CLI and the TUI) ----


class Hit(BaseModel):
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
    differs: list[str] = Field(default_factory=list)  # which of rank, global_rank, score differ
    # the same entry's rank, global_rank and score in the other list (None: not in it)
    counterpart: dict[str, float | int] | None = None


class Missed(BaseModel):
    entry_id: str
    node_id: str
    global_rank: int | None  # rank in the whole pool; None when unknown (server window only)
    text: str


class TierLine(BaseModel):
    text: str
    truncated: bool = False
    entry_id: str | None = None


class Tier(BaseModel):
    key: Literal["1a", "1b", "1c", "2"]
    title: str
    header: str  # the exact header line ARI emits
    lines: list[TierLine] = Field(default_factory=list)
    exact: bool = True
    note: str = ""  # why approximate, or why empty


class RecordedSearch(BaseModel):
    """The node's start-up search as the access log recorded it."""

    ts: float
    query: str
    limit: int | None
    hits: list[Hit]  # resolved through the write-event join where possible
    # which memory backend recorded it, read off the scores (ari-checkpoint-format.md §5.2):
    # "letta" (1 - 0.01 r on the 0.01 grid), "in_memory" (keyword overlap, off the grid),
    # "letta-substring" (v0.6: every score 0.0), "unknown" (no hits)
    backend: str = "unknown"
    ranker: str = ""  # in words: "a Letta server's embedder", "ARI's in-memory keyword overlap"
    differences: int = 0  # ENTRIES that differ between recording and replay (not sides)


class RankerFidelity(BaseModel):
    """Whether hits were ranked the way the run ranked them: the one answer every view shows.

    `exact`: True when the ranker is the run's own (its Letta server, its embedding model, a
    local model the run's settings name), False for a stand-in, None when the files cannot
    tell (no embedding handle recorded). `label` says it in one line ("exact: the run's
    embedding model (openai/text-embedding-3-small)", "stand-in: local MiniLM"); `note`, when
    not exact, why the recording may differ and how to get the exact ranker.
    """

    exact: bool | None = False
    label: str = ""
    short: str = ""  # a title's few words: "exact: run:text-embedding-3-small", "stand-in: bm25"
    ranker: str = ""  # what ranked the replay, in words (endpoint without credentials)
    recorded: str = ""  # what ranked the recording, in words ("" when none was recorded)
    note: str = ""

    @property
    def kind(self) -> str:
        """ "exact", "stand-in" or "unverified": a title's one word."""
        return {True: "exact", False: "stand-in"}.get(self.exact, "unverified")  # type: ignore[arg-type]


class Replay(BaseModel):
    """Everything about what one node saw; the JSON of `ari-mem-tui saw`."""

    node_id: str
    query: str
    # "start" (eval_summary at the node's start = its direction: ARI's own query), "now" (its
    # eval_summary today, e.g. the verdict) or "custom"; `query_field` says which field was used
    query_source: str
    query_field: str = ""  # "original_direction" | "eval_summary" | "goal" | "default" | ""
    params: dict[str, int]  # limit, overfetch, top_k
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
    tiers: list[Tier] = Field(default_factory=list)
    core: CoreBlocks = Field(default_factory=CoreBlocks)
    writes: list[CowWrite] = Field(default_factory=list)
    embedder: str  # the ranker that produced these hits: "minilm", "bm25", "letta:<url>"
    # ranked by a backend rule without a window (ARI's in-memory one): no top_k, no global
    # ranks, nothing missed; `pool.window` is None
    windowless: bool = False
    fallback: bool = False  # another ranker stood in for the chosen one (not ready, failed)
    # whether `embedder` ranks as the run did, and if not why differences are expected
    fidelity: RankerFidelity = Field(default_factory=RankerFidelity)
    notes: list[str] = Field(default_factory=list)
    # fills in global ranks left unknown by a fast replay (search.replay, exact_ranks=False)
    _rank_resolver: Any = PrivateAttr(default=None)

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
