"""Audit of a whole run: scope violations, leaks, second-hand leaks, rejected copy-on-write
writes, load problems.

ARI guards writes (copy-on-write) but not reads (§4.6): the LLM may pass any `ancestor_ids` to
`search_memory` or any id to `get_node_memory`. This module finds the reads whose scope is not
the reader's lineage, the hits and inherited entries that came from outside it, and lists the
rejected writes and the problems met while loading. Readers come from the loader's attribution
(AccessEvent.reader) and from each node's own trace_log calls (Checkpoint.trace_calls).
Pipeline and BFTS-select reads are the run's own machinery, never leaks. A read whose reader
could not be established is judged on nobody (its logged node_id is only the last writer): it
makes no finding and is listed apart, as unattributed.

A leak also leaves a trace in the leaking node's own memory: ARI keeps every LLM tool call's
result as an automatic entry of the caller (`Tool search_memory: {…}`, checkpoint/tool_entries.py),
so an entry may quote passages of another branch. Such an entry is *tainted*; every node that
later read it (its descendants inherit it at their start, a search may rank it) received that
branch's memory second-hand. Only LLM reads leave such entries, and an entry quotes a prefix of
what its call returned (the trace_log keeps the whole), so the entries looked at are those of
the nodes whose LLM reads leaked: nothing is parsed on a run without leaks.
"""

from __future__ import annotations

import hashlib
import sys
from bisect import bisect_left
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import lt
from pathlib import Path
from typing import Any, Literal

import msgspec

from ari_mem_tui.checkpoint import tool_entries
from ari_mem_tui.checkpoint.attribution import call_key, read_key
from ari_mem_tui.checkpoint.kept import KeptBeside
from ari_mem_tui.checkpoint.tool_entries import (
    INHERIT_TOOLS,
    SEARCH_TOOLS,
    STORED_READS,
    Quoted,
    stored_read,
    stored_texts,
    stored_tool,
)
from ari_mem_tui.checkpoint.trace_log import result_text
from ari_mem_tui.model import AccessEvent, Checkpoint, EventView, TraceCall
from ari_mem_tui.model.checkpoint import TreeAbove
from ari_mem_tui.model.records import ParentChain, Record

Severity = Literal["info", "warning", "error"]
# the bulk read whose trace_log calls are judged here (get_verified_context's bulk reads are
# judged on their access-log events; tool_entries.BULK_TOOLS has both, as kept results)
BULK_TOOLS = ("bulk_get_node_memory",)
INHERIT = "inherit:get_node_memory"
BULK = "inherit:bulk_get_node_memory"
# an automatic entry is written right after its call returned; the read event's ts is taken
# as the read ends, by the same process: the entry is not older than this
STORED_AFTER_READ_S = 1.0


@dataclass(kw_only=True)
class Passage(Record):
    """One passage a flagged read returned, its text joined from the backup (or the trace)."""

    entry_id: str | None = None  # our MemoryEntry.id, when it could be joined
    letta_id: str | None = None  # the passage id the access log / trace recorded
    node_id: str = ""  # the node whose memory it is
    text: str = ""  # "" when it could not be joined
    outside: bool = False  # not the reader's ancestor or itself: this passage leaked


@dataclass(kw_only=True)
class Finding(Record):
    FLOATS = ("ts",)
    severity: Severity
    kind: str = ""  # "problem" | "leak" | "scope_violation" | "rejected_write" | "second_hand"
    node_id: str = ""  # the reader / writer to jump to ("" when none)
    explanation: str  # one line
    ref: str = ""  # where it was seen: "memory_access.jsonl line 12", "trace_log of node_x #4"
    ts: float | None = None
    targets: list[str] = field(default_factory=list)  # node ids out of scope, or the write target
    # the read itself: tool, query (or the inherit sentinel), scope as passed, what it returned
    tool: str = ""
    query: str | None = None
    scope: list[str] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    # a rejected write: its text and the reason ARI gave
    text: str = ""
    reason: str = ""


@dataclass(kw_only=True)
class Tainted(Record):
    """An entry that carries another branch's memory: ARI's automatic entry of an LLM read
    that returned passages from outside its writer's lineage (a leak), quoting one or more of
    them (checkpoint/tool_entries.py says what quoting is)."""

    FLOATS = ("ts", "read_ts")
    entry_id: str  # our MemoryEntry.id
    letta_id: str | None = None  # its passage id, where a write event gave one
    node_id: str  # its writer: the node whose leaking read it keeps
    ts: float | None = None  # when it was written
    tool: str  # the read it keeps
    origin_nodes: list[str] = field(default_factory=list)  # whose memory, outside the writer's
    read_ref: str = ""  # where the leaking read was seen ("" when no record of it was found)
    read_ts: float | None = None  # when it was made (None: a trace_log call, untimed)
    passages: list[Passage] = field(default_factory=list)  # the quoted passages of origin_nodes


@dataclass(kw_only=True)
class SecondHand(Finding):
    """A node that received another branch's memory second-hand: a read of it (`tool`,
    `query`, `ref`, `ts`) returned a tainted entry, and the entry quotes passages of
    `origin_nodes`, outside the reader's lineage. The chain: origin → `via_node`'s leaking read
    (`leak_ref`, `leak_ts`) → the entry (`entry_id`, written `entry_ts`) → this reader."""

    FLOATS = ("ts", "entry_ts", "leak_ts")
    entry_id: str = ""
    via_node: str = ""  # the entry's writer, whose read leaked
    origin_nodes: list[str] = field(default_factory=list)  # = targets: whose memory it was
    entry_ts: float | None = None
    entry_tool: str = ""  # the read the entry keeps
    leak_ref: str = ""
    leak_ts: float | None = None


@dataclass(kw_only=True)
class AuditReport(Record):
    problems: list[Finding] = field(default_factory=list)
    scope_violations: list[Finding] = field(default_factory=list)
    leaks: list[Finding] = field(default_factory=list)
    rejected_writes: list[Finding] = field(default_factory=list)
    # reads no reader could be found for: not findings, but where a reader may hide
    unattributed: list[Finding] = field(default_factory=list)
    # readers of tainted entries, and the tainted entries themselves (read or not)
    second_hand: list[SecondHand] = field(default_factory=list)
    tainted: list[Tainted] = field(default_factory=list)

    @property
    def has_findings(self) -> bool:
        """Leaks or scope violations: what makes `ari-mem-tui audit` exit 1 (second-hand leaks
        do not: each follows from a leak, which does)."""
        return bool(self.leaks or self.scope_violations)


# ---- who may read whose memory ----


class Lineage:
    """Who may read whose memory: a node its ancestors' and its own (§4.6), in O(1) a pair.

    Ancestor lists written in the file become a set per reader. Scopes rebuilt from the tree
    (`ParentChain`) are tested by the tree's preorder numbers and subtree sizes, numbered once
    (`Checkpoint.tree_numbers`): walking a chain costs its depth, and a 20,000-deep chain whose
    nodes each read once walked 200 million links (the audit took 43 s)."""

    def __init__(self, ckpt: Checkpoint) -> None:
        self.ckpt, self.nodes = ckpt, ckpt.nodes
        self._scopes: dict[str, Container[str]] = {}
        self._numbers: tuple[dict[str, int], dict[str, int]] | None = None

    def allows(self, reader: str, owner: str) -> bool:
        return owner == reader or owner in self.scope(reader)

    def outside(self, reader: str, ids: Iterable[str]) -> list[str]:
        """`ids` the reader may not read, once each, in their order."""
        scope = self.scope(reader)
        return list(dict.fromkeys(i for i in ids if i and i != reader and i not in scope))

    def scope(self, reader: str) -> Container[str]:
        """The reader's ancestors (not itself)."""
        found = self._scopes.get(reader)
        if found is None:
            node = self.nodes.get(reader)
            ancestors = node.ancestor_ids if node is not None else []
            if isinstance(ancestors, ParentChain):
                if self._numbers is None:
                    self._numbers = self.ckpt.tree_numbers()
                tin, size = self._numbers
                # (a node the tree's walk from its roots does not reach: its chain, walked)
                found = TreeAbove(tin, size, reader) if reader in tin else frozenset(ancestors)
            else:
                found = frozenset(ancestors)
            self._scopes[reader] = found
        return found


def allowed_scope(ckpt: Checkpoint, reader: str) -> set[str]:
    """What a node may read: its ancestors and itself (§4.6), as a set (O(depth): one node's)."""
    node = ckpt.nodes[reader]
    return {*node.ancestor_ids, reader}


# ---- one pass over the reads ----


@dataclass
class LeakingRead:
    """An LLM read that returned memory from outside its reader's lineage: the one kind of
    read whose result ARI keeps in the reader's own memory (an automatic entry)."""

    node_id: str
    kind: str  # "search" | "inherit" | "bulk" (tool_entries.STORED_READS)
    outside: list[str]  # the nodes outside the lineage it read or was returned
    ref: str
    ts: float | None  # None: a trace_log call
    letta_ids: list[str]  # for a search, the passages it returned, in rank order
    key: tuple | None  # what the read was (attribution.read_key): a call and its event share it
    call: TraceCall | None = None  # the trace_log call, when that is the record


class _Pass:
    """What one audit carries: the report being filled, the findings seen (one per distinct
    read), who may read whom, the reads' rows, and the LLM reads that leaked."""

    def __init__(self, ckpt: Checkpoint, report: AuditReport) -> None:
        self.ckpt, self.report = ckpt, report
        self.seen: set[tuple] = set()
        self.lineage = Lineage(ckpt)
        self.reads: list[int] = []  # the access log's read rows
        self.leaking: dict[str, list[LeakingRead]] = {}

    def note(self, reader: str, outside: list[str], read: Read, ids: list[str], key: Any) -> None:
        """`reader`'s LLM read `read` returned (or read) memory of the `outside` nodes."""
        call = key if isinstance(key, TraceCall) else None
        key = call_key(call) if call is not None else key
        kind = STORED_READS[read.tool]
        leak = LeakingRead(reader, kind, outside, read.ref, read.ts, ids, key, call)
        self.leaking.setdefault(reader, []).append(leak)


def audit(ckpt: Checkpoint) -> AuditReport:
    report = AuditReport()
    report.problems = [
        Finding(severity=p.severity, kind="problem", explanation=p.line(), ref=p.file)
        for p in ckpt.problems
    ]
    state = _Pass(ckpt, report)
    events = ckpt.access_events
    state.reads = list(events.rows_of_op("read"))
    for row in state.reads:
        event = events[row]
        _audit_event(state, event)
        if event.reader_how == "unattributed":
            report.unattributed.append(_unattributed(event))
    for node_id, calls in ckpt.read_tool_calls().items():  # what _audit_call can judge
        for call in calls:
            _audit_call(state, node_id, call)
    report.rejected_writes = [
        Finding(
            severity="warning",
            kind="rejected_write",
            node_id=w.current_node,
            tool=w.tool,
            text=w.text,
            reason=w.reason or "CoW violation",
            explanation=(
                f"{w.tool} by {w.current_node or '(no current node)'} targeting {w.target_node}"
                f" rejected: {w.reason or 'CoW violation'}"
            ),
            ref=w.source,
            ts=w.ts,
            targets=[w.target_node],
        )
        for w in ckpt.rejected_writes()  # (not ckpt.writes: one row per memory entry)
    ]
    report.tainted = _tainted(state)
    report.second_hand = _second_hand(state, report.tainted) if report.tainted else []
    return report


def _unattributed(event: AccessEvent) -> Finding:
    tool = {INHERIT: "get_node_memory", BULK: "bulk_get_node_memory"}.get(
        event.query or "", "search_memory"
    )
    logged = event.node_id or '""'
    return Finding(
        severity="info",
        kind="unattributed",
        explanation=(
            f"{tool} read logged under {logged} (the last writer, not the reader): no reader "
            f"could be established, so it is judged on nobody"
        ),
        ref=_event_ref(event),
        ts=event.ts,
        targets=list(event.ancestor_ids or []),
        tool=tool,
        query=event.query,
        scope=list(event.ancestor_ids or []),
    )


def _event_ref(event: AccessEvent | EventView) -> str:
    return f"{event.source or 'memory_access.jsonl'} line {event.source_line}"


def _audit_event(state: _Pass, event: AccessEvent | EventView) -> None:
    ckpt, reader = state.ckpt, event.reader
    if event.op != "read" or not reader or reader not in ckpt.nodes:
        return  # writes, pipeline / bfts-select reads and unattributed reads are not judged
    if event.collection == "react_step":
        return  # the react store is flat by design (§0)
    ref = _event_ref(event)
    how = f" ({event.reader_how})" if event.reader_how else ""
    scope = list(event.ancestor_ids or [])
    join = lambda: _event_passages(state, event, reader)
    if event.query in (INHERIT, BULK):
        tool = "get_node_memory" if event.query == INHERIT else "bulk_get_node_memory"
        read = Read(tool, event.query, scope, join, ref + how, event.ts)
        wrong = _leak_targets(state, reader, read, scope)
    else:
        hit_nodes = [str(r.get("src_node_id") or "") for r in event.results]
        read = Read("search_memory", event.query or "", scope, join, ref + how, event.ts)
        wrong = _judge_search(state, reader, read, hit_nodes)
    if wrong and how == " (trace_log)":  # an LLM read: its result was kept
        _note_event(state, event, reader, wrong, read)


def _note_event(
    state: _Pass, event: AccessEvent | EventView, reader: str, wrong: list[str], read: Read
) -> None:
    search = read.tool == "search_memory"
    ids = [str(r.get("entry_id") or "") for r in event.results] if search else []
    state.note(reader, wrong, read, ids, read_key(event))  # type: ignore[arg-type]


class Read:
    """One read under judgement: how it was made and what it returned, joined only when a
    finding asks (`passages`): most reads give none, and a big run has hundreds of thousands."""

    def __init__(
        self,
        tool: str,
        query: str | None,
        scope: list[str],
        join: Callable[[], list[Passage]],
        ref: str,
        ts: float | None,
    ) -> None:
        self.tool, self.query, self.scope, self.join = tool, query, scope, join
        self.ref, self.ts = ref, ts
        self._passages: list[Passage] | None = None

    @property
    def passages(self) -> list[Passage]:
        if self._passages is None:
            self._passages = self.join()
        return self._passages


def _passage(
    state: _Pass, reader: str, node_id: str, letta_id: str | None, text: str = ""
) -> Passage:
    entry = state.ckpt.entries_by_letta_id.get(letta_id or "") if letta_id else None
    if entry is not None:
        node_id, text = node_id or entry.node_id, entry.text
    return Passage(
        entry_id=entry.id if entry is not None else None,
        letta_id=letta_id or None,
        node_id=node_id,
        text=text,
        outside=bool(node_id) and not state.lineage.allows(reader, node_id),
    )


def _event_passages(state: _Pass, event: AccessEvent | EventView, reader: str) -> list[Passage]:
    """What a logged read returned, texts joined through the write events to the backup."""
    if event.query == BULK:
        # the log keeps only counts per node: list that node's entries written before the read
        out = []
        for row in event.results:
            node_id = str(row.get("src_node_id") or "")
            for entry in state.ckpt.entries_by_node.get(node_id, []):
                if entry.kind == "node_scope" and (entry.ts is None or entry.ts < event.ts):
                    out.append(
                        Passage(
                            entry_id=entry.id,
                            letta_id=entry.letta_id,
                            node_id=node_id,
                            text=entry.text,
                            outside=not state.lineage.allows(reader, node_id),
                        )
                    )
        return out
    return [
        _passage(state, reader, str(r.get("src_node_id") or ""), str(r.get("entry_id") or ""))
        for r in event.results
        if isinstance(r, dict)
    ]


def _call_passages(state: _Pass, call: TraceCall, reader: str) -> list[Passage]:
    """What a traced call returned (its result line, decoded where it could be), by the
    tool's shape: a search's rows, one node's inherited entries, a bulk read's rows per node."""
    result = call.result if isinstance(call.result, dict) else {}
    if call.tool in SEARCH_TOOLS:
        return [_row_passage(state, reader, _row_node(row), row) for row in _result_rows(result)]
    if call.tool in INHERIT_TOOLS:
        # the entries carry no node: they are the one node the call named
        node_id = str((call.args or {}).get("node_id") or "")
        return [
            _passage(state, reader, node_id, None, str(row.get("text") or ""))
            for row in _objects(result.get("entries"))
        ]
    if call.tool in BULK_TOOLS:
        by_node = result.get("by_node")
        return [
            _row_passage(state, reader, str(node_id), row)
            for node_id, rows in (by_node.items() if isinstance(by_node, dict) else ())
            for row in _objects(rows)
        ]
    return []


def _row_passage(state: _Pass, reader: str, node_id: str, row: dict) -> Passage:
    """One returned row of `node_id` as a passage: its passage id (if any) and its text."""
    letta_id = str(row.get("entry_id") or "") or None
    return _passage(state, reader, node_id, letta_id, str(row.get("text") or ""))


def _audit_call(state: _Pass, node_id: str, call: TraceCall) -> None:
    if node_id not in state.ckpt.nodes or call.args is None:
        return
    ref = f"trace_log of {node_id} #{call.index}"
    join = lambda: _call_passages(state, call, node_id)
    if call.tool in SEARCH_TOOLS:
        scope = [str(a) for a in call.args.get("ancestor_ids") or []]
        query = str(call.args.get("query") or "")
        read = Read(call.tool, query, scope, join, ref, None)
        rows = _result_rows(call.result)
        wrong = _judge_search(state, node_id, read, [_row_node(r) for r in rows])
        if wrong:
            state.note(node_id, wrong, read, [str(r.get("entry_id") or "") for r in rows], call)
        return
    targets = _call_targets(call)
    if targets is None:
        return
    read = Read(call.tool, None, targets, join, ref, None)
    wrong = _leak_targets(state, node_id, read, targets)
    if wrong:
        state.note(node_id, wrong, read, [], call)


def _call_targets(call: TraceCall) -> list[str] | None:
    """The nodes a get_node_memory / bulk read call asked for (None: another tool)."""
    args = call.args or {}
    if call.tool in INHERIT_TOOLS:
        return [str(args.get("node_id") or "")]
    if call.tool in BULK_TOOLS:
        return [str(t) for t in args.get("node_ids") or args.get("ids") or []]
    return None


def _result_rows(result: Any) -> list[dict]:
    """The rows of a decoded search_memory result ({"results": [{node_id, ...}]})."""
    return _objects(result.get("results") if isinstance(result, dict) else None)


def _objects(value: Any) -> list[dict]:
    """The objects of a decoded JSON list; none when it is not a list (a hostile line's)."""
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _row_node(row: dict) -> str:
    return str(row.get("node_id") or row.get("src_node_id") or "")


def _judge_search(state: _Pass, reader: str, read: Read, hit_nodes: list[str]) -> list[str]:
    """Add the search's scope violation and leak, if any; the nodes it leaked."""
    query = read.query or ""
    wrong = state.lineage.outside(reader, read.scope)
    _add(
        state,
        "scope_violation",
        ("scope", reader, query[:200], tuple(read.scope)),
        reader,
        wrong,
        f"{reader} searched with a scope outside its lineage: "
        f"{_names(wrong)} not among its ancestors",
        read,
    )
    leaked = state.lineage.outside(reader, hit_nodes)
    _add(
        state,
        "leak",
        ("hits", reader, query[:200], tuple(leaked)),
        reader,
        leaked,
        f"{reader}'s search returned memory of {_names(leaked)}, outside its lineage",
        read,
    )
    return leaked


def _leak_targets(state: _Pass, reader: str, read: Read, targets: list[str]) -> list[str]:
    """Add the read's leak, if it read outside the lineage; the nodes it read there."""
    wrong = state.lineage.outside(reader, targets)
    _add(
        state,
        "leak",
        ("read", reader, read.tool.removeprefix("bulk_"), tuple(wrong)),
        reader,
        wrong,
        f"{reader} read the memory of {_names(wrong)} ({read.tool}), outside its lineage",
        read,
    )
    return wrong


def _add(
    state: _Pass,
    kind: str,
    key: tuple,
    reader: str,
    targets: list[str],
    explanation: str,
    read: Read,
) -> None:
    """One error finding per distinct (kind, reader, query or tool, targets); none if no target."""
    if not targets or key in state.seen:
        return
    state.seen.add(key)
    found = state.report.leaks if kind == "leak" else state.report.scope_violations
    found.append(
        Finding(
            severity="error",
            kind=kind,
            node_id=reader,
            explanation=explanation,
            ref=read.ref,
            ts=read.ts,
            targets=targets,
            tool=read.tool,
            query=read.query,
            scope=read.scope,
            passages=read.passages,
        )
    )


# ---- second-hand leaks: entries that keep a leaking read's result, and who read them ----


def _tainted(state: _Pass) -> list[Tainted]:
    """The automatic entries of the nodes whose LLM reads leaked that quote a passage from
    outside their writer's lineage, in time order."""
    out: list[Tainted] = []
    for writer, leaks in state.leaking.items():
        kinds = {leak.kind for leak in leaks}
        for entry in state.ckpt.entries_by_node.get(writer, []):
            if entry.kind != "node_scope":
                continue
            tool = stored_tool(entry.text, entry.metadata)
            if tool is not None and STORED_READS[tool] in kinds:
                found = _taint(state, writer, entry, tool, leaks)
                if found is not None:
                    out.append(found)
    out.sort(key=lambda t: (t.ts is None, t.ts or 0.0, t.node_id, t.entry_id))
    return out


def _taint(
    state: _Pass, writer: str, entry: Any, tool: str, leaks: list[LeakingRead]
) -> Tainted | None:
    reads = [leak for leak in leaks if leak.kind == STORED_READS[tool]]
    call = _stored_call(state.ckpt, writer, tool, entry.text, entry.partial)
    stored = stored_read(entry.text, entry.metadata, _node_read(call))
    quoted = list(stored.quoted) if stored is not None else []
    outside = [q for q in quoted if q.node_id and not state.lineage.allows(writer, q.node_id)]
    if not outside:
        return None  # it quotes its own lineage only (or the cut left the rest out)
    origins = list(dict.fromkeys(q.node_id for q in outside if q.node_id))
    leak = _leak_of_call(reads, call, entry.ts) if call is not None else None
    leak = leak or _leaking_read(reads, origins, quoted, entry.ts)
    return Tainted(
        entry_id=entry.id,
        letta_id=entry.letta_id,
        node_id=writer,
        ts=entry.ts,
        tool=tool,
        origin_nodes=origins,
        read_ref=leak.ref if leak else "",
        read_ts=leak.ts if leak else None,
        passages=[_quoted_passage(state.ckpt, q) for q in outside],
    )


def _node_read(call: TraceCall | None) -> str | None:
    """The node a get_node_memory call read (its `node_id` argument)."""
    args = call.args if call is not None and isinstance(call.args, dict) else {}
    node_id = args.get("node_id")
    return node_id if isinstance(node_id, str) else None


def _stored_call(
    ckpt: Checkpoint, writer: str, tool: str, text: str, partial: bool = False
) -> TraceCall | None:
    """The writer's trace_log call whose result the automatic entry `text` keeps: the one
    whose result, encoded as ARI encodes it, is that text (a get_node_memory result names no
    node: only its call says which node it read). An entry known only by its write event's
    200-character preview (`partial`) is the start of that text: it names a call only when
    every call it could start agrees on the node read."""
    found = []
    for call in ckpt.read_tool_calls().get(writer, ()):
        if call.tool == tool and call.result_raw:
            output = result_text(call.result_raw)
            kept = stored_texts(tool, output) if output is not None else ()
            if text in kept or (partial and any(k.startswith(text) for k in kept)):
                found.append(call)
    if not partial:
        return found[0] if found else None
    return found[0] if len({_node_read(c) for c in found}) == 1 else None


def _leak_of_call(
    reads: list[LeakingRead], call: TraceCall, written: float | None
) -> LeakingRead | None:
    """The leaking read `call` is, as the access log timed it where it can: a node's calls and
    its trace-attributed events of one key pair up in order (as the attribution paired them).
    An event that returned other passages, or is later than the entry that keeps its result
    (the attribution gave it another node's read of the same node), is not taken: the call
    (untimed) is."""
    mine = next((r for r in reads if r.call is call), None)
    event = _paired_event(reads, mine) if mine is not None else None
    if event is None or event.letta_ids != mine.letta_ids:  # type: ignore[union-attr]
        return mine
    late = written is not None and (event.ts or 0.0) > written + STORED_AFTER_READ_S
    return mine if late else event


def _paired_event(reads: list[LeakingRead], mine: LeakingRead) -> LeakingRead | None:
    """The access-log event of the call `mine`: the k-th event of its key for the k-th call."""
    if mine.key is None:
        return None
    calls = [r for r in reads if r.call is not None and r.key == mine.key]
    events = [r for r in reads if r.call is None and r.key == mine.key and r.ts is not None]
    place = next(i for i, r in enumerate(calls) if r is mine)
    return sorted(events, key=lambda r: r.ts or 0.0)[place] if place < len(events) else None


def _leaking_read(
    reads: list[LeakingRead], origins: list[str], quoted: list[Quoted], written: float | None
) -> LeakingRead | None:
    """The leaking read an entry keeps: one that reached every origin, made before the entry
    was written, and (a search) returned the quoted passages first, in their order; the
    latest timed one (an access-log event), else the first trace_log call."""
    ids = [q.letta_id for q in quoted]
    fit = [
        r
        for r in reads
        if set(origins) <= set(r.outside)
        and (r.ts is None or written is None or r.ts <= written + STORED_AFTER_READ_S)
        and (r.kind != "search" or not all(ids) or r.letta_ids[: len(ids)] == ids)
    ]
    timed = [r for r in fit if r.ts is not None]
    if timed:
        return max(timed, key=lambda r: r.ts or 0.0)
    return fit[0] if fit else None


def _quoted_passage(ckpt: Checkpoint, q: Quoted) -> Passage:
    entry = ckpt.entries_by_letta_id.get(q.letta_id) if q.letta_id else None
    return Passage(
        entry_id=entry.id if entry is not None else None,
        letta_id=q.letta_id,
        node_id=q.node_id or "",
        text=q.text,
        outside=True,
    )


def _second_hand(state: _Pass, tainted: list[Tainted]) -> list[SecondHand]:
    """Every node that read a tainted entry (not its writer) and so received memory from
    outside its own lineage: one finding per reader and entry, its earliest read."""
    found: dict[tuple[str, str], SecondHand] = {}
    events = state.ckpt.access_events
    for row, entry in _reads_of_tainted(state, tainted):
        event = events[row]
        if event.reader in state.ckpt.nodes and _returned(state, event, entry):
            _receive(state, found, entry, _event_read(event))
    if not state.reads:  # no access log (ARI_MEMORY_ACCESS_LOG=off): the LLM's own reads
        for node_id, call, entry in _calls_of_tainted(state, tainted):
            _receive(state, found, entry, _call_read(node_id, call))
    return sorted(found.values(), key=lambda f: (f.ts is None, f.ts or 0.0, f.node_id))


@dataclass
class _Got:
    """How a reader got a tainted entry (its scope is not kept: the finding is about what the
    read returned, and a start-up search's scope is the reader's whole lineage)."""

    reader: str
    tool: str
    query: str | None
    scope: list[str]
    ref: str
    ts: float | None
    how: str  # in words: "start-up search", "LLM get_node_memory call" …


_HOW = {
    "startup-search": "start-up search",
    "inherit-burst": "start-up get_node_memory (inherited memory)",
    "trace_log": "LLM {tool} call",
}


def _event_read(event: AccessEvent | EventView) -> _Got:
    tool = {INHERIT: "get_node_memory", BULK: "bulk_get_node_memory"}.get(
        event.query or "", "search_memory"
    )
    how = _HOW.get(event.reader_how, "{tool} read").format(tool=tool)
    ref = _event_ref(event) + (f" ({event.reader_how})" if event.reader_how else "")
    return _Got(event.reader or "", tool, event.query, [], ref, event.ts, how)


def _call_read(node_id: str, call: TraceCall) -> _Got:
    args = call.args or {}
    query = args.get("query") if isinstance(args.get("query"), str) else None
    ref = f"trace_log of {node_id} #{call.index}"
    return _Got(node_id, call.tool, query, [], ref, None, f"LLM {call.tool} call")


def _receive(
    state: _Pass, found: dict[tuple[str, str], SecondHand], entry: Tainted, got: _Got
) -> None:
    """Note that `got.reader` received `entry`, unless it wrote it (a leak of its own, found as
    such) or every origin is in its lineage (it may read them itself)."""
    reader = got.reader
    if reader == entry.node_id:
        return
    origins = [o for o in entry.origin_nodes if not state.lineage.allows(reader, o)]
    key = (reader, entry.entry_id)
    if not origins or not _earlier(got.ts, found.get(key)):
        return
    found[key] = SecondHand(
        severity="warning",
        kind="second_hand",
        node_id=reader,
        explanation=_second_hand_words(reader, origins, entry, got),
        ref=got.ref,
        ts=got.ts,
        targets=origins,
        tool=got.tool,
        query=got.query,
        scope=got.scope,
        passages=[p for p in entry.passages if p.node_id in origins],
        entry_id=entry.entry_id,
        via_node=entry.node_id,
        origin_nodes=origins,
        entry_ts=entry.ts,
        entry_tool=entry.tool,
        leak_ref=entry.read_ref,
        leak_ts=entry.read_ts,
    )


def _earlier(ts: float | None, old: SecondHand | None) -> bool:
    """Whether a read at `ts` is to be kept over `old`: none yet, or an earlier (timed) one."""
    if old is None:
        return True
    return ts is not None and (old.ts is None or ts < old.ts)


def _second_hand_words(reader: str, origins: list[str], entry: Tainted, got: _Got) -> str:
    return (
        f"{reader} received memory of {_names(origins)} second-hand: {entry.node_id}'s entry "
        f"{entry.entry_id} keeps its leaking {entry.tool} result, and {reader}'s {got.how} "
        f"returned it"
    )


def _reads_of_tainted(state: _Pass, tainted: list[Tainted]) -> list[tuple[int, Tainted]]:
    """(read row, entry) for every logged read that returned a tainted entry: by its passage
    id (searches and get_node_memory list them), or, for an entry no write event named, a
    get_node_memory of its writer made after it was written. Not bulk reads: only
    get_verified_context makes them for a node, and it returns claims and failure cases,
    typed entries, never an automatic one."""
    events = state.ckpt.access_events
    by_code = {
        code: t for t in tainted if t.letta_id and (code := events.strings.find(t.letta_id)) >= 0
    }
    unnamed = [t for t in tainted if all(t is not named for named in by_code.values())]
    return [
        *_reads_naming(events, state.reads, by_code),
        *_reads_of_nodes(events, state.reads, unnamed, INHERIT),
    ]


def _returned(state: _Pass, event: AccessEvent | EventView, entry: Tainted) -> bool:
    """Whether the read `event` logged handed `entry` to its reader. An LLM's
    search_research_memory logs the search it makes inside (40 rows and more) but returns
    only the rows its kind filter keeps: when the event is such a call's, the call's result
    must list the entry; any other read returned what its event lists."""
    if event.reader_how != "trace_log" or event.query in (INHERIT, BULK):
        return True
    key = read_key(event)  # type: ignore[arg-type]
    calls = [
        call
        for call in state.ckpt.read_tool_calls().get(event.reader or "", ())
        if call.tool == "search_research_memory" and call_key(call) == key
    ]
    if not calls:
        return True  # a search_memory call: it returned the rows its event lists
    return any(
        entry.letta_id in {str(r.get("entry_id")) for r in _result_rows(c.result)} for c in calls
    )


def _reads_naming(
    events: Any, reads: list[int], by_code: dict[int, Tainted]
) -> list[tuple[int, Tainted]]:
    """(read row, entry) for each read whose results list a passage id of `by_code`. The
    places of those ids in the results' id column are found in C (a bytes search per id);
    a read's results are one slice of it."""
    if not by_code:
        return []
    column = memoryview(events.rows.codes["entry_id"])
    data, width = column.cast("B").tobytes(), column.itemsize
    places: list[tuple[int, int]] = []
    for code in by_code:
        needle = code.to_bytes(width, sys.byteorder, signed=True)
        at = data.find(needle)
        while at >= 0:
            if at % width == 0:
                places.append((at // width, code))
            at = data.find(needle, at + 1)
    places.sort()
    keys = [place for place, _ in places]
    keys.append(len(column))  # past every row: each read's bisect lands on a key
    starts, ends = events.res_start, events.res_end
    # per read, the first place at or past its first result row: in C, a read at a time
    firsts = list(map(bisect_left, repeat(keys), map(starts.__getitem__, reads)))
    inside = map(lt, map(keys.__getitem__, firsts), map(ends.__getitem__, reads))
    out = []
    for row, i in compress(zip(reads, firsts), inside):
        while keys[i] < ends[row]:
            out.append((row, by_code[places[i][1]]))
            i += 1
    return out


def _reads_of_nodes(
    events: Any, reads: list[int], tainted: list[Tainted], query: str
) -> list[tuple[int, Tainted]]:
    """(read row, entry) for each `query` read (INHERIT) of a tainted entry's writer made
    after the entry was written: such a read returns all of that node's entries."""
    code = events.strings.find(query)
    if not tainted or code < 0:
        return []
    writers: dict[int, list[Tainted]] = {}
    for t in tainted:
        writer = events.strings.find(t.node_id)
        if writer >= 0:
            writers.setdefault(writer, []).append(t)
    out = []
    for row in reads:
        if events.query[row] != code:
            continue
        for target in set(events.ancestor_codes(row) or ()) & writers.keys():
            for t in writers[target]:
                if t.ts is None or t.ts <= events.ts[row]:
                    out.append((row, t))
    return out


def _calls_of_tainted(state: _Pass, tainted: list[Tainted]) -> list[tuple[str, TraceCall, Tainted]]:
    """(reader, call, entry) for each LLM read in a trace_log whose result holds a tainted
    entry: a search row naming its passage id, or a get_node_memory of its writer whose rows
    hold its text (trace_log calls are untimed: the rows are the proof it was there)."""
    by_letta = {t.letta_id: t for t in tainted if t.letta_id}
    by_writer: dict[str, list[Tainted]] = {}
    for t in tainted:
        by_writer.setdefault(t.node_id, []).append(t)
    out = []
    for node_id, calls in state.ckpt.read_tool_calls().items():
        for call in calls:
            for t in _call_holds(call, by_letta, by_writer, state.ckpt):
                out.append((node_id, call, t))
    return out


def _call_holds(
    call: TraceCall, by_letta: dict, by_writer: dict[str, list[Tainted]], ckpt: Checkpoint
) -> list[Tainted]:
    args = call.args if isinstance(call.args, dict) else {}
    if call.tool in SEARCH_TOOLS:
        rows = _result_rows(call.result)
        return [by_letta[i] for r in rows if (i := str(r.get("entry_id") or "")) in by_letta]
    if call.tool in INHERIT_TOOLS and args.get("node_id") in by_writer:
        result = call.result if isinstance(call.result, dict) else {}
        texts = {str(r.get("text")) for r in result.get("entries") or [] if isinstance(r, dict)}
        entries = ckpt.entries_by_id
        return [t for t in by_writer[args["node_id"]] if entries[t.entry_id].text in texts]
    return []


def findings_by_node(report: AuditReport) -> dict[str, list[Finding]]:
    """Each node's own findings (as reader or writer): leaks and violations first, then its
    rejected writes, then what it received second-hand."""
    out: dict[str, list[Finding]] = {}
    found = [*report.leaks, *report.scope_violations, *report.rejected_writes, *report.second_hand]
    for finding in found:
        if finding.node_id:
            out.setdefault(finding.node_id, []).append(finding)
    return out


def _names(ids: list[str]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


# ---- the audit kept beside the run index ----

STORE_FILE = "audit.bin"  # beside the run index's index.bin (checkpoint/index.py)
STORE_KIND = "audit-1"  # the sealed file's kind: a new layout takes a new number


class AuditStore(KeptBeside):
    """The audit of a run's files, kept beside its run index so that a reopen of the same files
    knows its findings (and so the node the TUI opens on) without auditing first.

    Keyed as the index is (checkpoint/kept.py), with the loader's and this module's source.
    Only for a run read from its files: a Letta server's memory is another audit.
    """

    FILE, KIND, WHAT = STORE_FILE, STORE_KIND, "kept audit"

    def load(self, ckpt: Checkpoint) -> AuditReport | None:
        """The kept audit of these files, else None (none kept, another key, or unusable)."""
        report = self.read(self.key(ckpt.run_id, _source_key()))
        if report is None:
            return None
        try:
            return AuditReport.from_data(report)
        except (msgspec.DecodeError, ValueError, TypeError) as exc:  # (a ValidationError)
            from ari_mem_tui.checkpoint import cachefile  # noqa: PLC0415

            cachefile.rebuilt(self.WHAT, self._file() or self.path, exc)
            return None

    def save(self, ckpt: Checkpoint, report: AuditReport) -> bool:
        """Keep `report`, the audit of `ckpt` as loaded; False (nothing written) when the files
        changed since the load began, or it cannot be written."""
        return self.write(self.key(ckpt.run_id, _source_key()), report.as_data())


def kept_or_audit(ckpt: Checkpoint, store: AuditStore | None) -> tuple[AuditReport, bool]:
    """The audit `store` kept for these files, else a new one, and whether it is new (to be
    kept: `store.save`)."""
    kept = store.load(ckpt) if store is not None else None
    return (kept, False) if kept is not None else (audit(ckpt), True)


def _source_key() -> str:
    """This module's source and the reader of stored results: a changed rule is another audit."""
    digest = hashlib.sha1(Path(__file__).read_bytes())
    digest.update(Path(tool_entries.__file__).read_bytes())
    return digest.hexdigest()
