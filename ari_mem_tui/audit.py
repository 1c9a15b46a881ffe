"""Audit of a whole run: scope violations, leaks, rejected copy-on-write writes, load problems.

ARI guards writes (copy-on-write) but not reads (§4.6): the LLM may pass any `ancestor_ids` to
`search_memory` or any id to `get_node_memory`. This module finds the reads whose scope is not
the reader's lineage, the hits and inherited entries that came from outside it, and lists the
rejected writes and the problems met while loading. Readers come from the loader's attribution
(AccessEvent.reader) and from each node's own trace_log calls (Checkpoint.trace_calls).
Pipeline and BFTS-select reads are the run's own machinery, never leaks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from ari_mem_tui.model import AccessEvent, Checkpoint, TraceCall

Severity = Literal["info", "warning", "error"]
SEARCH_TOOLS = ("search_memory", "search_research_memory")
INHERIT_TOOLS = ("get_node_memory",)
BULK_TOOLS = ("bulk_get_node_memory",)


class Finding(BaseModel):
    severity: Severity
    node_id: str = ""  # the reader / writer to jump to ("" when none)
    explanation: str  # one line
    ref: str = ""  # where it was seen: "memory_access.jsonl line 12", "trace_log of node_x #4"
    ts: float | None = None
    targets: list[str] = Field(default_factory=list)  # node ids out of scope, or the write target


class AuditReport(BaseModel):
    problems: list[Finding] = Field(default_factory=list)
    scope_violations: list[Finding] = Field(default_factory=list)
    leaks: list[Finding] = Field(default_factory=list)
    rejected_writes: list[Finding] = Field(default_factory=list)

    @property
    def has_findings(self) -> bool:
        """Leaks or scope violations: what makes `ari-mem-tui audit` exit 1."""
        return bool(self.leaks or self.scope_violations)


def audit(ckpt: Checkpoint) -> AuditReport:
    report = AuditReport()
    report.problems = [
        Finding(severity=p.severity, explanation=p.line(), ref=p.file) for p in ckpt.problems
    ]
    seen: set[tuple] = set()
    for event in ckpt.access_events:
        _audit_event(ckpt, event, report, seen)
    for node_id, calls in ckpt.trace_calls.items():
        for call in calls:
            _audit_call(ckpt, node_id, call, report, seen)
    report.rejected_writes = [
        Finding(
            severity="warning",
            node_id=w.current_node,
            explanation=(
                f"{w.tool} by {w.current_node or '(no current node)'} targeting {w.target_node}"
                f" rejected: {w.reason or 'CoW violation'}"
            ),
            ref=w.source,
            ts=w.ts,
            targets=[w.target_node],
        )
        for w in ckpt.writes
        if not w.accepted
    ]
    return report


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
    ckpt: Checkpoint, event: AccessEvent, report: AuditReport, seen: set[tuple]
) -> None:
    reader = event.reader
    if event.op != "read" or not reader or reader not in ckpt.nodes:
        return  # writes, pipeline / bfts-select reads and unattributed reads are not judged
    if event.collection == "react_step":
        return  # the react store is flat by design (§0)
    ref = _event_ref(event)
    how = f" ({event.reader_how})" if event.reader_how else ""
    scope = list(event.ancestor_ids or [])
    if event.query == "inherit:get_node_memory":
        _leak_targets(ckpt, reader, "get_node_memory", scope, ref + how, event.ts, report, seen)
    elif event.query == "inherit:bulk_get_node_memory":
        _leak_targets(
            ckpt, reader, "bulk_get_node_memory", scope, ref + how, event.ts, report, seen
        )
    else:
        hit_nodes = [str(r.get("src_node_id") or "") for r in event.results]
        _judge_search(
            ckpt, reader, event.query or "", scope, hit_nodes, ref + how, event.ts, report, seen
        )


def _audit_call(
    ckpt: Checkpoint, node_id: str, call: TraceCall, report: AuditReport, seen: set[tuple]
) -> None:
    if node_id not in ckpt.nodes or call.args is None:
        return
    ref = f"trace_log of {node_id} #{call.index}"
    if call.tool in SEARCH_TOOLS:
        scope = [str(a) for a in call.args.get("ancestor_ids") or []]
        hit_nodes = _result_nodes(call.result)
        _judge_search(
            ckpt,
            node_id,
            str(call.args.get("query") or ""),
            scope,
            hit_nodes,
            ref,
            None,
            report,
            seen,
        )
    elif call.tool in INHERIT_TOOLS:
        target = str(call.args.get("node_id") or "")
        _leak_targets(ckpt, node_id, call.tool, [target], ref, None, report, seen)
    elif call.tool in BULK_TOOLS:
        targets = [str(t) for t in call.args.get("node_ids") or call.args.get("ids") or []]
        _leak_targets(ckpt, node_id, call.tool, targets, ref, None, report, seen)


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
    query: str,
    scope: list[str],
    hit_nodes: list[str],
    ref: str,
    ts: float | None,
    report: AuditReport,
    seen: set[tuple],
) -> None:
    wrong = _outside(ckpt, reader, scope)
    _add(
        report.scope_violations,
        seen,
        ("scope", reader, query[:200], tuple(scope)),
        reader,
        wrong,
        f"{reader} searched with a scope outside its lineage: "
        f"{_names(wrong)} not among its ancestors",
        ref,
        ts,
    )
    leaked = _outside(ckpt, reader, hit_nodes)
    _add(
        report.leaks,
        seen,
        ("hits", reader, query[:200], tuple(leaked)),
        reader,
        leaked,
        f"{reader}'s search returned memory of {_names(leaked)}, outside its lineage",
        ref,
        ts,
    )


def _leak_targets(
    ckpt: Checkpoint,
    reader: str,
    tool: str,
    targets: list[str],
    ref: str,
    ts: float | None,
    report: AuditReport,
    seen: set[tuple],
) -> None:
    wrong = _outside(ckpt, reader, targets)
    _add(
        report.leaks,
        seen,
        ("read", reader, tool.removeprefix("bulk_"), tuple(wrong)),
        reader,
        wrong,
        f"{reader} read the memory of {_names(wrong)} ({tool}), outside its lineage",
        ref,
        ts,
    )


def _add(
    found: list[Finding],
    seen: set[tuple],
    key: tuple,
    reader: str,
    targets: list[str],
    explanation: str,
    ref: str,
    ts: float | None,
) -> None:
    """One error finding per distinct (kind, reader, query or tool, targets); none if no target."""
    if not targets or key in seen:
        return
    seen.add(key)
    found.append(
        Finding(
            severity="error",
            node_id=reader,
            explanation=explanation,
            ref=ref,
            ts=ts,
            targets=targets,
        )
    )


def _names(ids: list[str]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
