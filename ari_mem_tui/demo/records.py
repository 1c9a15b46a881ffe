"""What the demo run's generator builds and the file writers read: its memory entries, its
access-log reads, each node's content, and the forms of a tool call's trace_log lines and
automatic `Tool …` entry (docs/ari-format.md §2.7, §3.9)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PREVIEW = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS
# an insert returns (its write event is logged) this long after the entry's ts at most: the
# passage reaches the server's pool somewhere in between
INSERT_S = (0.02, 0.35)


@dataclass(slots=True)
class Entry:
    kind: str  # "node_scope" | "react_step"
    node_id: str  # owner (react: metadata.node_id or "")
    text: str
    metadata: dict[str, Any]
    ts: float
    eid: str  # passage id
    rank_text: str | None = None  # text used for ranking when `text` is filled in later
    index: int = -1  # position in the global ts order
    # when the insert returned (the write event's ts) when it is not the usual moment after `ts`:
    # the planted late insert, absent from the server's pool for a search made in between
    landed: float | None = None


@dataclass(slots=True)
class Read:
    ts: float
    collection: str
    query: str
    ancestor_ids: list[str] | None
    limit: int
    mode: str  # "search" | "inherit" | "react"
    results: list[dict[str, Any]] = field(default_factory=list)
    node_id: str | None = None  # logged "current node"; None = the stale one, computed later
    on_done: Callable[[Read, list[Entry]], None] | None = None  # fills trace lines / auto entry
    hits: list[Entry] = field(default_factory=list)


@dataclass
class NodeContent:
    trace: list[str] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    eval_summary: str | None = None
    error_log: str | None = None
    has_real_data: bool = False
    node_report_path: str | None = None
    experiment_result: Entry | None = None
    conclusion: Entry | None = None  # the node-end typed entry (experiment_result/failure_case)


# what a call handler returns: (tool name, args, result envelope or a Read answered later, seconds
# the tool took)
Call = tuple[str, dict[str, Any], "dict[str, Any] | Read", float]


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def envelope_line(envelope: dict[str, Any]) -> str:
    """A trace_log result line: two spaces, U+2190, and the Python repr of the MCP envelope."""
    return "  ← " + str(envelope)


def call_line(tool: str, args: dict[str, Any]) -> str:
    return "→ " + tool + "(" + dumps(args)[:4000] + ")"


def tool_entry_text(tool: str, envelope: dict[str, Any]) -> str:
    """The agent loop's auto entry: plain json.dumps of the envelope, cut to 1000 characters."""
    return f"Tool {tool}: {json.dumps(envelope)[:1000]}"
