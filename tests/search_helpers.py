"""Hand-built checkpoints and a fake ranker for the search/audit/report tests.

Checkpoints are built directly from the shared models (no loader involved), so these tests pin
the search rules independently of the file readers.
"""

from __future__ import annotations

import random
from pathlib import Path

from ari_mem_tui.model import Checkpoint, MemoryEntry, Node
from ari_mem_tui.search.embedded import Pool, ranking_from_scores
from ari_mem_tui.search.rankers import Ranking

WORDS = (
    "metric",
    "loss",
    "accuracy",
    "branch",
    "kernel",
    "cache",
    "tile",
    "gpu",
    "batch",
    "warmup",
    "idx",
    "sweep",
)


class FakeRanker:
    """A fake ranker: a fixed score per entry id (default: pool order), counts its calls."""

    name = "fake"

    def __init__(self, entries: list[MemoryEntry], scores: dict[str, float] | None = None):
        self.pool = Pool(entries)
        self.fixed = scores or {}
        self.calls: list[tuple[str, int, float | None]] = []

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        self.calls.append((query, top_k, before_ts))
        scores = [self.fixed.get(e.id, 0.0) for e in self.pool.entries]
        return ranking_from_scores(self.pool, scores, top_k, before_ts, "fake")


def make_node(node_id: str, parent: Node | None, **extra) -> Node:
    ancestors = [*parent.ancestor_ids, parent.id] if parent else []
    return Node(
        id=node_id,
        parent_id=parent.id if parent else None,
        depth=len(ancestors),
        ancestor_ids=ancestors,
        status="success",
        **extra,
    )


def make_entry(i: int, node_id: str, text: str, kind: str = "node_scope", **extra) -> MemoryEntry:
    return MemoryEntry(
        id=f"e{i:05d}", kind=kind, node_id=node_id, text=text, source="test", **extra
    )


def build_tree(
    parents: list[int],
    entries_per_node: list[int],
    react: int = 0,
    seed: int = 0,
    path: Path = Path("/nonexistent-ckpt"),
) -> Checkpoint:
    """Node k's parent is node parents[k-1] (< k); node 0 is the root. Random short texts."""
    rng = random.Random(seed)
    nodes: list[Node] = [make_node("node_root", None, original_direction="root direction")]
    for k, p in enumerate(parents, start=1):
        nodes.append(make_node(f"node_{k:04d}", nodes[p], original_direction=f"direction {k}"))
    entries: list[MemoryEntry] = []
    ts = 1000.0
    for node, count in zip(nodes, entries_per_node, strict=False):
        for _ in range(count):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
            entries.append(make_entry(len(entries), node.id, f"{text} {node.id}", ts=ts))
            ts += 1.0
    for _ in range(react):
        text = " ".join(rng.choice(WORDS) for _ in range(3))
        entries.append(make_entry(len(entries), "", text, kind="react_step", ts=ts))
        ts += 1.0
    ckpt = Checkpoint(path=path, nodes={n.id: n for n in nodes}, entries=entries)
    for n in nodes:
        ckpt.graph.add_node(n.id)
        if n.parent_id:
            ckpt.graph.add_edge(n.parent_id, n.id)
    ckpt.roots = ["node_root"]
    return ckpt
