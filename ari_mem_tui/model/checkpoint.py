"""The `Checkpoint` aggregate: one run, everything the readers found, and the problems met."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ari_mem_tui.model.graph import RunGraph
from ari_mem_tui.model.records import (
    AccessEvent,
    CoreBlocks,
    CowWrite,
    MemoryEntry,
    Node,
    Problem,
    TraceCall,
)


def _names(node_id: str) -> tuple[str, str, str]:
    """The names a person may type a node by, lowered: its id, the id without ARI's `node_`
    prefix, its short id (the last 8 characters, as ARI's dashboard and the tree show it)."""
    low = node_id.lower()
    return low, low.removeprefix("node_"), low[-8:]


class NodeRefError(LookupError):
    """A node reference (full id or suffix) that names no node, or several."""


@dataclass
class Checkpoint:
    path: Path
    run_id: str | None = None
    tree_source: str | None = None  # the file the tree came from
    experiment_goal: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)  # creation order
    graph: RunGraph = field(default_factory=RunGraph)  # parent -> child edges
    roots: list[str] = field(default_factory=list)
    entries: list[MemoryEntry] = field(default_factory=list)  # node_scope then react, file order
    core: CoreBlocks = field(default_factory=CoreBlocks)
    access_events: list[AccessEvent] = field(default_factory=list)  # sorted by ts
    access_summary: dict[str, dict[str, int]] = field(default_factory=dict)
    trace_calls: dict[str, list[TraceCall]] = field(default_factory=dict)  # by node id
    writes: list[CowWrite] = field(default_factory=list)  # the run's CoW log, ts order
    problems: list[Problem] = field(default_factory=list)
    # the run's 12-hex hash, set when a Letta server's footers are compared with it
    checkpoint_hash: str | None = None
    # the Letta embedding handle settings.json names (ARI's `letta_embedding_config`), if any
    letta_embedding_config: str | None = None
    # tables derived from the lists above by search code (the replay index), rebuilt by them
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        """Rebuild the lookup tables after the lists above change."""
        self.entries_by_id: dict[str, MemoryEntry] = {e.id: e for e in self.entries}
        self.entries_by_letta_id: dict[str, MemoryEntry] = {
            e.letta_id: e for e in self.entries if e.letta_id
        }
        self.entries_by_node: dict[str, list[MemoryEntry]] = {}
        for entry in self.entries:
            if entry.kind == "node_scope":
                self.entries_by_node.setdefault(entry.node_id, []).append(entry)
        if "_pending_writes" not in self.__dict__:  # else indexed when they are built
            self._index_writes()

    def _index_writes(self) -> None:
        by_node: dict[str, list[CowWrite]] = {}
        for write in self.writes:
            by_node.setdefault(write.current_node, []).append(write)
        self.writes_by_node = by_node

    def resolve_node(self, ref: str) -> str:
        """The node a person means, any case: its full id or short id (the last 8 characters,
        as the tree shows it), else the one node whose id starts with `ref` (with or without
        `node_`, or its short id does), else the one whose id holds `ref` anywhere. Several at
        the first tier that has any: the candidates are listed, never one picked; none: the
        closest ids are suggested."""
        if ref in self.nodes:
            return ref
        wanted = ref.strip().lower()
        if not wanted:
            raise NodeRefError("an empty node id names no node")
        ids = list(self.nodes)
        names = [_names(nid) for nid in ids]  # (full, without node_, short), lowered
        tiers = (
            lambda n: wanted in (n[0], n[2]),
            lambda n: any(name.startswith(wanted) for name in n),
            lambda n: wanted in n[0],
        )
        for test in tiers:
            matches = [nid for nid, n in zip(ids, names, strict=True) if test(n)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
                raise NodeRefError(
                    f"{ref!r} matches {len(matches)} nodes: {shown}; give more of the id"
                )
        # people type the end of an id (the short id the tree shows): compare like with like
        by_tail = {n[0][-len(wanted) :]: nid for nid, n in zip(ids, names, strict=True)}
        close = difflib.get_close_matches(wanted, list(by_tail), n=3, cutoff=0.6)
        tail = f"; did you mean {', '.join(by_tail[c] for c in close)}?" if close else ""
        raise NodeRefError(f"no node matches {ref!r}{tail}")

    def defer_trace_calls(
        self, parse: Callable[[], dict[str, list[TraceCall]]], count: int
    ) -> None:
        """Leave `trace_calls` to `parse()`, run on its first read (most of a big run's tree is
        trace logs, and opening it needs none); `count` is how many calls it will give."""
        self.__dict__["_pending_trace_calls"] = (parse, count)

    def trace_call_count(self) -> int:
        """The number of trace_log calls, without parsing them when they are still deferred."""
        pending = self.__dict__.get("_pending_trace_calls")
        if pending is not None:
            return pending[1]
        return sum(len(calls) for calls in self.trace_calls.values())

    def read_tool_calls(self) -> Mapping[str, list[TraceCall]]:
        """Each node's trace_log calls, in trace order, or at least those of the read tools
        (attribution.READ_TOOLS): while `trace_calls` is deferred, the subset the loader parsed
        for the attribution and the CoW log (the deferred log's `trace_calls`), not every call."""
        if "_pending_trace_calls" in self.__dict__:
            parsed = self._pending_log("trace_calls")
            if parsed is not None:
                return parsed
        return self.trace_calls

    def defer_writes(self, build: Callable[[], list[CowWrite]]) -> None:
        """Leave `writes` (and `writes_by_node`) to `build()`, run on their first read (its
        `counts`, `for_node` and `rejected_in_order`, when it has them, answer without it)."""
        self.__dict__["_pending_writes"] = (build, None)  # (as _Deferred reads it)
        self.__dict__.pop("_writes_by_node", None)
        self.__dict__.pop("_node_writes", None)

    def node_writes(self, node_id: str) -> list[CowWrite]:
        """The CoW rows whose current node is `node_id`; while the log is deferred, only
        these are built (when its builder can: `for_node`), not the whole run's."""
        for_node = self._pending_log("for_node")
        if for_node is None:
            return self.writes_by_node.get(node_id, [])
        built = self.__dict__.setdefault("_node_writes", {})
        if node_id not in built:
            built[node_id] = for_node(node_id)
        return built[node_id]

    def rejected_writes(self) -> list[CowWrite]:
        """The CoW log's rejected rows, in its order; while the log is deferred, only these
        are built (when its builder can: `rejected_in_order`), not one row per entry."""
        rejected_in_order = self._pending_log("rejected_in_order")
        if rejected_in_order is None:
            return [write for write in self.writes if not write.accepted]
        return rejected_in_order()

    def _pending_log(self, name: str) -> Any:
        """The deferred CoW log builder's `name` (None: the log is built, or has no such one)."""
        pending = self.__dict__.get("_pending_writes")
        return getattr(pending[0], name, None) if pending is not None else None

    def write_counts(self) -> tuple[int, int]:
        """(accepted, rejected) rows of the CoW log, without building it when still deferred."""
        counts = self._pending_log("counts")
        if counts is not None:
            return counts
        accepted = sum(1 for write in self.writes if write.accepted)
        return accepted, len(self.writes) - accepted

    def lineage(self, node_id: str) -> list[str]:
        """root → … → node (inclusive), from the node's ancestor_ids."""
        return [*self.nodes[node_id].ancestor_ids, node_id]

    def children(self, node_id: str) -> list[str]:
        return list(self.graph.successors(node_id)) if node_id in self.graph else []


class _Deferred:
    """A Checkpoint attribute that is plain, unless the loader left a function to build it on
    its first read (`defer_trace_calls`, `defer_writes`)."""

    def __init__(self, name: str, after: Callable[[Checkpoint], None] | None = None) -> None:
        self.name, self.after = name, after

    def __get__(self, obj: Checkpoint | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        pending = obj.__dict__.pop("_pending_" + self.name, None)
        if pending is not None:
            obj.__dict__["_" + self.name] = pending[0]()
            if self.after is not None:
                self.after(obj)
        return obj.__dict__["_" + self.name]

    def __set__(self, obj: Checkpoint, value: Any) -> None:
        obj.__dict__.pop("_pending_" + self.name, None)
        obj.__dict__["_" + self.name] = value


class _WritesByNode:
    """`Checkpoint.writes_by_node`, built with the writes when they are deferred."""

    def __get__(self, obj: Checkpoint | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj.writes  # noqa: B018 - builds deferred writes, which indexes them
        return obj.__dict__["_writes_by_node"]

    def __set__(self, obj: Checkpoint, value: dict[str, list[CowWrite]]) -> None:
        obj.__dict__["_writes_by_node"] = value


# installed after @dataclass made __init__, so that __init__'s assignments go through them
Checkpoint.trace_calls = _Deferred("trace_calls")  # type: ignore[assignment]
Checkpoint.writes = _Deferred("writes", after=Checkpoint._index_writes)  # type: ignore[assignment]
Checkpoint.writes_by_node = _WritesByNode()  # type: ignore[attr-defined]


@dataclass
class Run:
    """A checkpoint opened for browsing, with the ranker that replays its searches."""

    checkpoint: Checkpoint
    ranker: Any  # an ari_mem_tui.search ranker (embedded, BM25 or Letta)
    source_label: str  # "files: <path>" or "letta: <url> agent <name>"
    # a fresh load's index, not written yet (RunOptions.index_behind): the TUI runs it once the
    # first hits are shown; None when there is nothing to write
    save_index: Callable[[], bool] | None = None
