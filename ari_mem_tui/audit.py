"""Audit of a whole run: scope violations, leaks, rejected copy-on-write writes, load problems.

ARI guards writes (copy-on-write) but not reads (§4.6): the LLM may pass any `ancestor_ids` to
`search_memory` or any id to `get_node_memory`. This module finds the reads whose scope is not
the reader's lineage, the hits and inherited entries that came from outside it, and lists the
rejected writes and the problems met while loading. Readers come from the loader's attribution
(AccessEvent.reader) and from each node's own trace_log calls (Checkpoint.trace_calls).
Pipeline and BFTS-select reads are the run's own machinery, never leaks. A read whose reader
could not be established is judged on nobody (its logged node_id is only the last writer): it
makes no finding and is listed apart, as unattributed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from ari_mem_tui.model import AccessEvent, Checkpoint, EventView, TraceCall
from ari_mem_tui.model.records import Record

Severity = Literal["info", "warning", "error"]
SEARCH_TOOLS = ("search_memory", "search_research_memory")
INHERIT_TOOLS = ("get_node_memory",)
BULK_TOOLS = ("bulk_get_node_memory",)


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
    kind: str = ""  # "problem" | "leak" | "scope_violation" | "rejected_write"
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
class AuditReport(Record):
    problems: list[Finding] = field(default_factory=list)
    scope_violations: list[Finding] = field(default_factory=list)
    leaks: list[Finding] = field(default_factory=list)
    rejected_writes: list[Finding] = field(default_factory=list)
    # reads no reader could be found for: not findings, but where a reader may hide
    unattributed: list[Finding] = field(default_factory=list)

    @property
    def has_findings(self) -> bool:
        """Leaks or scope violations: what makes `ari-mem-tui audit` exit 1."""
        return bool(self.leaks or self.scope_violations)


def audit(ckpt: Checkpoint) -> AuditReport:
    report = AuditReport()
    report.problems = [
        Finding(severity=p.severity, kind="problem", explanation=p.line(), ref=p.file)
        for p in ckpt.problems
    ]
    seen: set[tuple] = set()
    events = ckpt.access_events
    for row in events.rows_of_op("read"):
        event = events[row]
        _audit_event(ckpt, event, report, seen)
        if event.reader_how == "unattributed":
            report.unattributed.append(_unattributed(event))
    for node_id, calls in ckpt.read_tool_calls().items():  # what _audit_call can judge
        for call in calls:
            _audit_call(ckpt, node_id, call, report, seen)
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
    return report


def _unattributed(event: AccessEvent) -> Finding:
    tool = {
        "inherit:get_node_memory": "get_node_memory",
        "inherit:bulk_get_node_memory": "bulk_get_node_memory",
    }.get(event.query or "", "search_memory")
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


def allowed_scope(ckpt: Checkpoint, reader: str) -> set[str]:
    """What a node may read: its ancestors and itself (§4.6)."""
    node = ckpt.nodes[reader]
    return {*node.ancestor_ids, reader}


def _outside(ckpt: Checkpoint, reader: str, ids: Iterable[str]) -> list[str]:
    allowed = allowed_scope(ckpt, reader)
    return list(dict.fromkeys(i for i in ids if i and i not in allowed))


def _event_ref(event: AccessEvent) -> str:
    return f"{event.source or 'memory_access.jsonl'} line {event.source_line}"


def _audit_event(
    ckpt: Checkpoint, event: AccessEvent | EventView, report: AuditReport, seen: set[tuple]
) -> None:
    reader = event.reader
    if event.op != "read" or not reader or reader not in ckpt.nodes:
        return  # writes, pipeline / bfts-select reads and unattributed reads are not judged
    if event.collection == "react_step":
        return  # the react store is flat by design (§0)
    ref = _event_ref(event)
    how = f" ({event.reader_how})" if event.reader_how else ""
    scope = list(event.ancestor_ids or [])
    join = lambda: _event_passages(ckpt, event, allowed_scope(ckpt, reader))
    if event.query == "inherit:get_node_memory":
        read = Read("get_node_memory", event.query, scope, join, ref + how, event.ts)
        _leak_targets(ckpt, reader, read, scope, report, seen)
    elif event.query == "inherit:bulk_get_node_memory":
        read = Read("bulk_get_node_memory", event.query, scope, join, ref + how, event.ts)
        _leak_targets(ckpt, reader, read, scope, report, seen)
    else:
        hit_nodes = [str(r.get("src_node_id") or "") for r in event.results]
        read = Read("search_memory", event.query or "", scope, join, ref + how, event.ts)
        _judge_search(ckpt, reader, read, hit_nodes, report, seen)


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
    ckpt: Checkpoint, allowed: set[str], node_id: str, letta_id: str | None, text: str = ""
) -> Passage:
    entry = ckpt.entries_by_letta_id.get(letta_id or "") if letta_id else None
    if entry is not None:
        node_id, text = node_id or entry.node_id, entry.text
    return Passage(
        entry_id=entry.id if entry is not None else None,
        letta_id=letta_id or None,
        node_id=node_id,
        text=text,
        outside=bool(node_id) and node_id not in allowed,
    )


def _event_passages(ckpt: Checkpoint, event: AccessEvent, allowed: set[str]) -> list[Passage]:
    """What a logged read returned, texts joined through the write events to the backup."""
    if event.query == "inherit:bulk_get_node_memory":
        # the log keeps only counts per node: list that node's entries written before the read
        out = []
        for row in event.results:
            node_id = str(row.get("src_node_id") or "")
            for entry in ckpt.entries_by_node.get(node_id, []):
                if entry.kind == "node_scope" and (entry.ts is None or entry.ts <= event.ts):
                    out.append(
                        Passage(
                            entry_id=entry.id,
                            letta_id=entry.letta_id,
                            node_id=node_id,
                            text=entry.text,
                            outside=node_id not in allowed,
                        )
                    )
        return out
    return [
        _passage(ckpt, allowed, str(r.get("src_node_id") or ""), str(r.get("entry_id") or ""))
        for r in event.results
        if isinstance(r, dict)
    ]


def _call_passages(ckpt: Checkpoint, call: TraceCall, allowed: set[str]) -> list[Passage]:
    """What a traced call returned (its result line, decoded where it could be)."""
    result = call.result if isinstance(call.result, dict) else {}
    out: list[Passage] = []
    if call.tool in SEARCH_TOOLS:
        for row in result.get("results") or []:
            if isinstance(row, dict):
                node_id = str(row.get("node_id") or row.get("src_node_id") or "")
                letta_id = str(row.get("entry_id") or "") or None
                out.append(_passage(ckpt, allowed, node_id, letta_id, str(row.get("text") or "")))
    elif call.tool in INHERIT_TOOLS:
        node_id = str((call.args or {}).get("node_id") or "")
        for row in result.get("entries") or []:
            if isinstance(row, dict):
                out.append(_passage(ckpt, allowed, node_id, None, str(row.get("text") or "")))
    elif call.tool in BULK_TOOLS:
        by_node = result.get("by_node")
        for node_id, rows in by_node.items() if isinstance(by_node, dict) else []:
            for row in rows if isinstance(rows, list) else []:
                if isinstance(row, dict):
                    letta_id = str(row.get("entry_id") or "") or None
                    text = str(row.get("text") or "")
                    out.append(_passage(ckpt, allowed, str(node_id), letta_id, text))
    return out


def _audit_call(
    ckpt: Checkpoint, node_id: str, call: TraceCall, report: AuditReport, seen: set[tuple]
) -> None:
    if node_id not in ckpt.nodes or call.args is None:
        return
    ref = f"trace_log of {node_id} #{call.index}"
    join = lambda: _call_passages(ckpt, call, allowed_scope(ckpt, node_id))
    if call.tool in SEARCH_TOOLS:
        scope = [str(a) for a in call.args.get("ancestor_ids") or []]
        query = str(call.args.get("query") or "")
        read = Read(call.tool, query, scope, join, ref, None)
        _judge_search(ckpt, node_id, read, _result_nodes(call.result), report, seen)
    elif call.tool in INHERIT_TOOLS:
        target = str(call.args.get("node_id") or "")
        read = Read(call.tool, None, [target], join, ref, None)
        _leak_targets(ckpt, node_id, read, [target], report, seen)
    elif call.tool in BULK_TOOLS:
        targets = [str(t) for t in call.args.get("node_ids") or call.args.get("ids") or []]
        read = Read(call.tool, None, targets, join, ref, None)
        _leak_targets(ckpt, node_id, read, targets, report, seen)


def _result_nodes(result: Any) -> list[str]:
    """Owner node ids of a decoded search_memory result ({"results": [{node_id, ...}]})."""
    rows = result.get("results") if isinstance(result, dict) else None
    if not isinstance(rows, list):
        return []
    return [
        str(r.get("node_id") or r.get("src_node_id") or "") for r in rows if isinstance(r, dict)
    ]


def _judge_search(
    ckpt: Checkpoint,
    reader: str,
    read: Read,
    hit_nodes: list[str],
    report: AuditReport,
    seen: set[tuple],
) -> None:
    query = read.query or ""
    wrong = _outside(ckpt, reader, read.scope)
    _add(
        report.scope_violations,
        "scope_violation",
        seen,
        ("scope", reader, query[:200], tuple(read.scope)),
        reader,
        wrong,
        f"{reader} searched with a scope outside its lineage: "
        f"{_names(wrong)} not among its ancestors",
        read,
    )
    leaked = _outside(ckpt, reader, hit_nodes)
    _add(
        report.leaks,
        "leak",
        seen,
        ("hits", reader, query[:200], tuple(leaked)),
        reader,
        leaked,
        f"{reader}'s search returned memory of {_names(leaked)}, outside its lineage",
        read,
    )


def _leak_targets(
    ckpt: Checkpoint,
    reader: str,
    read: Read,
    targets: list[str],
    report: AuditReport,
    seen: set[tuple],
) -> None:
    wrong = _outside(ckpt, reader, targets)
    _add(
        report.leaks,
        "leak",
        seen,
        ("read", reader, read.tool.removeprefix("bulk_"), tuple(wrong)),
        reader,
        wrong,
        f"{reader} read the memory of {_names(wrong)} ({read.tool}), outside its lineage",
        read,
    )


def _add(
    found: list[Finding],
    kind: str,
    seen: set[tuple],
    key: tuple,
    reader: str,
    targets: list[str],
    explanation: str,
    read: Read,
) -> None:
    """One error finding per distinct (kind, reader, query or tool, targets); none if no target."""
    if not targets or key in seen:
        return
    seen.add(key)
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


def findings_by_node(report: AuditReport) -> dict[str, list[Finding]]:
    """Each node's own findings (as reader or writer): leaks and violations first."""
    out: dict[str, list[Finding]] = {}
    for finding in [*report.leaks, *report.scope_violations, *report.rejected_writes]:
        if finding.node_id:
            out.setdefault(finding.node_id, []).append(finding)
    return out


def _names(ids: list[str]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


# ---- the audit kept beside the run index ----

STORE_FILE = "audit.bin"  # beside the run index's index.bin (checkpoint/index.py)
STORE_KIND = "audit-1"  # the sealed file's kind: a new layout takes a new number


class AuditStore:
    """The audit of a run's files, kept beside its run index so that a reopen of the same files
    knows its findings (and so the node the TUI opens on) without auditing first.

    Keyed as the index is: every file the loader reads (`index.run_key`, taken before the load
    began and checked unchanged when the audit is kept, as `index.save` does), with the loader's
    and this module's source. Sealed and read as every cache of the tool (checkpoint/cachefile.py):
    another key, a damaged or foreign file is a miss (the caller audits again), and a damaged one
    is said once. Only for a run read from its files: a Letta server's memory is another audit.
    """

    def __init__(self, path: Path, before: list[Any]) -> None:
        self.path, self.before = Path(path), before

    @classmethod
    def before_load(cls, path: Path) -> AuditStore | None:
        """Taken before the run's files are read (None when indexes are switched off)."""
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415 - only where a run is opened

        if index.index_dir(Path(path)) is None:
            return None
        return cls(path, index.run_key(Path(path), None))

    def _file(self) -> Path | None:
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        folder = index.index_dir(self.path)
        return folder / STORE_FILE if folder is not None else None

    def _key(self, run_id: str | None) -> list[Any]:
        from ari_mem_tui.checkpoint import index  # noqa: PLC0415

        return [index.run_key(self.path, run_id), _source_key()]

    def _unchanged(self, key: list[Any]) -> bool:
        """Whether the files are as they were when the load began (as `index.save` checks)."""
        now, before = key[0], self.before
        return before[0] == now[0] and all(item in now[1] for item in before[1])

    def load(self, ckpt: Checkpoint) -> AuditReport | None:
        """The kept audit of these files, else None (none kept, another key, or unusable)."""
        from ari_mem_tui.checkpoint import cachefile  # noqa: PLC0415

        where = self._file()
        if where is None:
            return None
        now = self._key(ckpt.run_id)
        if not self._unchanged(now):
            return None  # the files changed since the load began: `ckpt` is of older ones
        try:
            key, report = msgspec.msgpack.decode(cachefile.read_sealed(where, STORE_KIND))
            if key != msgspec.msgpack.decode(msgspec.msgpack.encode(now)):
                return None  # other files (or code): audited again, and kept again
            return AuditReport.from_data(report)
        except FileNotFoundError:
            return None
        except (cachefile.CacheMiss, msgspec.DecodeError, ValueError, TypeError) as exc:
            cachefile.rebuilt("kept audit", where, exc)  # (a ValidationError is a DecodeError)
            return None

    def save(self, ckpt: Checkpoint, report: AuditReport) -> bool:
        """Keep `report`, the audit of `ckpt` as loaded; False (nothing written) when the files
        changed since the load began, or it cannot be written."""
        from ari_mem_tui.checkpoint import cachefile  # noqa: PLC0415

        where = self._file()
        if where is None:
            return False
        key = self._key(ckpt.run_id)
        if not self._unchanged(key):
            return False  # changed while it was read: the next open audits again
        try:
            body = msgspec.msgpack.encode([key, report.as_data()])
            cachefile.write_atomic(where, cachefile.seal(STORE_KIND, body))
        except (OSError, TypeError, OverflowError, ValueError, msgspec.EncodeError):
            return False  # (a lone surrogate in a text cannot be encoded: not kept)
        return True


def kept_or_audit(ckpt: Checkpoint, store: AuditStore | None) -> tuple[AuditReport, bool]:
    """The audit `store` kept for these files, else a new one, and whether it is new (to be
    kept: `store.save`)."""
    kept = store.load(ckpt) if store is not None else None
    return (kept, False) if kept is not None else (audit(ckpt), True)


def _source_key() -> str:
    """This module's source: a changed rule is another audit."""
    return hashlib.sha1(Path(__file__).read_bytes()).hexdigest()
