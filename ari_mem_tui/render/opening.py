"""Which node a run opens on: a useful one, not the empty root.

A run with audit findings opens on the first node (in tree order) that has one: that is what a
reviewer came for. Otherwise it opens where the research went furthest: the deepest completed
node on the lineage of the best-scoring node. Without scores, the deepest completed node; without
completed nodes, the first root.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

from ari_mem_tui.model import Checkpoint

COMPLETED = "success"  # ARI's status for a node that finished (§2.2)


class Opening(NamedTuple):
    node_id: str | None
    reason: str  # said to the user: why this node


def tree_order(ckpt: Checkpoint) -> Iterator[str]:
    """Every node once, depth first from each root, children in the tree's order (networkx's
    walk, iterative: a run can be a chain thousands of nodes deep)."""
    return ckpt.tree_order()


def opening_node(ckpt: Checkpoint, findings_by_node: Mapping[str, list] | None = None) -> Opening:
    if not ckpt.nodes:
        return Opening(None, "the run has no nodes")
    if findings_by_node:
        for node_id in tree_order(ckpt):
            if findings_by_node.get(node_id):
                return Opening(node_id, "the first node with an audit finding")
    scored = [n for n in ckpt.nodes.values() if n.score is not None]
    if scored:
        best = max(scored, key=lambda n: (n.score, n.status == COMPLETED, n.depth or 0))
        done = [i for i in ckpt.lineage(best.id) if _completed(ckpt, i)]
        if done:
            why = "the best-scoring node" if done[-1] == best.id else "on the best-scoring lineage"
            return Opening(done[-1], f"{why}: the deepest completed node there")
    completed = [n for n in ckpt.nodes.values() if n.status == COMPLETED]
    if completed:
        deepest = max(completed, key=lambda n: n.depth or 0)
        return Opening(deepest.id, "the deepest completed node (no scores)")
    first = ckpt.roots[0] if ckpt.roots else next(iter(ckpt.nodes))
    return Opening(first, "the root: no node completed")


def _completed(ckpt: Checkpoint, node_id: str) -> bool:
    node = ckpt.nodes.get(node_id)
    return node is not None and node.status == COMPLETED
