"""Which node a run opens on: a useful one, not the empty root.

A run with audit findings opens on the first node (in tree order) that has one: that is what a
reviewer came for. Otherwise it opens where the research went furthest: the deepest completed
node on the lineage of the best-scoring node. Without scores, the deepest completed node; without
completed nodes, the first root.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import NamedTuple

from ari_mem_tui.model import Checkpoint

COMPLETED = "success"  # ARI's status for a node that finished (§2.2)


class Opening(NamedTuple):
    node_id: str | None
    reason: str  # said to the user: why this node


def tree_order(ckpt: Checkpoint) -> Iterator[str]:
    """Every node once, depth first from each root, children in the tree's order (walked
    iteratively: a run can be a chain thousands of nodes deep)."""
    seen: set[str] = set()
    for root in ckpt.roots:
        for node_id in ckpt.graph.preorder(root):
            if node_id not in seen:
                seen.add(node_id)
                yield node_id


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


def nodes_matching(ckpt: Checkpoint, text: str, among: Collection[str] | None = None) -> list[str]:
    """The nodes a find (`/` in the tree, the palette's jump) means by `text`, any case: those
    whose id holds it, then those whose name, direction, eval_summary or label does; only
    `among` them when given (the nodes a tree filter shows)."""
    needle = text.strip().lower()
    if not needle:
        return []
    by_id, by_text = [], []
    for node in ckpt.nodes.values():
        if among is not None and node.id not in among:
            continue
        if needle in node.id.lower():
            by_id.append(node.id)
            continue
        fields = (node.name, node.original_direction, node.eval_summary, node.label)
        if needle in " ".join(s for s in fields if s).lower():
            by_text.append(node.id)
    return by_id + by_text
