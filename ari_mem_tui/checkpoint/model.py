"""The `Checkpoint` aggregate: one run, everything the readers found, and the problems met."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from ari_mem_tui.model import (
    AccessEvent,
    CoreBlocks,
    CowWrite,
    MemoryEntry,
    Node,
    Problem,
    TraceCall,
)


class NodeRefError(LookupError):
    """A node reference (full id or suffix) that names no node, or several."""


@dataclass
class Checkpoint:
    path: Path
    run_id: str | None = None
    tree_source: str | None = None  # the file the tree came from
    experiment_goal: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)  # creation order
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)  # parent -> child edges
    roots: list[str] = field(default_factory=list)
    entries: list[MemoryEntry] = field(default_factory=list)  # node_scope then react, file order
    core: CoreBlocks = field(default_factory=CoreBlocks)
    access_events: list[AccessEvent] = field(default_factory=list)  # sorted by ts
    access_summary: dict[str, dict[str, int]] = field(default_factory=dict)
    trace_calls: dict[str, list[TraceCall]] = field(default_factory=dict)  # by node id
    writes: list[CowWrite] = field(default_factory=list)  # the run's CoW log, ts order
    problems: list[Problem] = field(default_factory=list)

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
        self.writes_by_node: dict[str, list[CowWrite]] = {}
        for write in self.writes:
            self.writes_by_node.setdefault(write.current_node, []).append(write)

    def resolve_node(self, ref: str) -> str:
        """A full node id, or a suffix that names exactly one node."""
        if ref in self.nodes:
            return ref
        matches = [nid for nid in self.nodes if nid.endswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NodeRefError(f"no node matches {ref!r}")
        shown = ", ".join(matches[:5])
        raise NodeRefError(f"{ref!r} matches {len(matches)} nodes: {shown}")

    def lineage(self, node_id: str) -> list[str]:
        """root → … → node (inclusive), from the node's ancestor_ids."""
        return [*self.nodes[node_id].ancestor_ids, node_id]

    def children(self, node_id: str) -> list[str]:
        return list(self.graph.successors(node_id)) if node_id in self.graph else []
