"""Which node a run opens on: a useful one, not the empty root; and the run's main metric.

A run with audit findings opens on the first node (in tree order) that has one: that is what a
reviewer came for. Otherwise it opens where the research went furthest: the deepest completed
node on the lineage of the best-scoring node (ARI's `_scientific_score`; without it, the run's
main metric). Without either, the deepest completed node; without completed nodes, the first
root.

The main metric is what the tree shows in the score's place on a run whose evaluator wrote no
`_scientific_score` (every node read `–`): ARI's `primary_metric` (the experiment core, from the
idea or evaluation_criteria.json) when nodes report it, else the metric most nodes report.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from typing import NamedTuple

from ari_mem_tui.model import Checkpoint, Node

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
    if best := _best_lineage(ckpt):
        return best
    completed = [n for n in ckpt.nodes.values() if n.status == COMPLETED]
    if completed:
        deepest = max(completed, key=lambda n: n.depth or 0)
        return Opening(deepest.id, "the deepest completed node (no scores)")
    first = ckpt.roots[0] if ckpt.roots else next(iter(ckpt.nodes))
    return Opening(first, "the root: no node completed")


def _best_lineage(ckpt: Checkpoint) -> Opening | None:
    """The deepest completed node on the best node's lineage (by score, else by the main
    metric), or None: nothing scored, or nothing completed there."""
    scored = [n for n in ckpt.nodes.values() if n.score is not None]
    metric = main_metric(ckpt) if not scored else None
    if not scored and metric is None:
        return None
    best = _best(scored, metric, ckpt)
    done = [i for i in ckpt.lineage(best.id) if _completed(ckpt, i)]
    if not done:
        return None
    why = "the best-scoring node" if done[-1] == best.id else "on the best-scoring lineage"
    return Opening(done[-1], f"{why}: the deepest completed node there")


def _best(scored: list[Node], metric: MainMetric | None, ckpt: Checkpoint) -> Node:
    """The best node by `_scientific_score`, else by the main metric (its better end)."""
    if scored:
        return max(scored, key=lambda n: (n.score, n.status == COMPLETED, n.depth or 0))
    assert metric is not None
    sign = 1.0 if metric.higher_is_better else -1.0
    nodes = [ckpt.nodes[i] for i in metric.values]
    return max(
        nodes, key=lambda n: (sign * metric.values[n.id], n.status == COMPLETED, n.depth or 0)
    )


class MainMetric(NamedTuple):
    name: str
    higher_is_better: bool
    values: dict[str, float]  # node id → its finite value
    source: str  # where the name came from, for the title: "primary_metric", "most reported"

    def rank(self, value: float) -> float:
        """Where `value` lies between the run's worst (0.0) and best (1.0) values."""
        low, high = min(self.values.values()), max(self.values.values())
        share = (value - low) / (high - low) if high > low else 1.0
        return share if self.higher_is_better else 1.0 - share


def main_metric(ckpt: Checkpoint) -> MainMetric | None:
    """The metric the tree shows in the score's place, or None: some node has ARI's
    `_scientific_score` (the tree shows that), or no node reports a number."""
    if any(n.score is not None for n in ckpt.nodes.values()):
        return None
    counts = _reported(ckpt)
    if not counts:
        return None
    context = ckpt.core.ari_context if ckpt.core else {}
    primary = context.get("primary_metric")
    if isinstance(primary, str) and primary in counts:
        name, source = primary, "primary_metric"
        higher = context.get("higher_is_better", True) is not False
    else:
        name, source, higher = counts.most_common(1)[0][0], "most reported", True
    values = {
        n.id: value
        for n in ckpt.nodes.values()
        if (value := _number((n.metrics or {}).get(name))) is not None
    }
    return MainMetric(name, higher, values, source)


def _reported(ckpt: Checkpoint) -> Counter[str]:
    """How many nodes report each metric as a number (ARI's reserved `_` keys left out)."""
    counts: Counter[str] = Counter()
    for node in ckpt.nodes.values():
        metrics = node.metrics or {}
        counts.update(
            k for k, v in metrics.items() if not str(k).startswith("_") and _number(v) is not None
        )
    return counts


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer past a float's range is no number
        return None
    return number if math.isfinite(number) else None


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
