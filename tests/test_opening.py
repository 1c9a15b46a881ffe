"""Which node a run opens on (render/opening.py): the first node with an audit finding, else the
deepest completed node on the best-scoring lineage, else fallbacks that are said."""

from __future__ import annotations

from pathlib import Path

from checkpoint_helpers import node, write_tree

from ari_mem_tui.audit import audit, findings_by_node
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.opening import opening_node, tree_order


def scored(node_id, parent=None, ancestors=None, score=None, status="success", **extra):
    metrics = {"_scientific_score": score} if score is not None else {}
    return node(node_id, parent, ancestors, status=status, metrics=metrics, **extra)


def tree(tmp_path: Path, nodes: list[dict]):
    for n in nodes:  # children lists as ARI writes them
        n["children"] = [c["id"] for c in nodes if c["parent_id"] == n["id"]]
    write_tree(tmp_path, nodes)
    return load_checkpoint(tmp_path)


def test_the_deepest_completed_node_on_the_best_lineage(tmp_path: Path) -> None:
    ckpt = tree(
        tmp_path,
        [
            scored("root", score=0.2),
            scored("a", "root", ["root"], score=0.5),
            scored("b", "a", ["root", "a"], score=0.9, status="failed"),  # best, not completed
            scored("c", "root", ["root"], score=0.7),
            scored("d", "c", ["root", "c"], score=0.8),
        ],
    )
    assert opening_node(ckpt) == (
        "a",
        "on the best-scoring lineage: the deepest completed node there",
    )
    ckpt.nodes["b"].status = "success"
    node_id, why = opening_node(ckpt)
    assert node_id == "b" and why.startswith("the best-scoring node")


def test_without_scores_the_deepest_completed_and_without_those_the_root(tmp_path: Path) -> None:
    ckpt = tree(
        tmp_path,
        [
            scored("root"),
            scored("a", "root", ["root"]),
            scored("b", "a", ["root", "a"], status="running"),
        ],
    )
    assert opening_node(ckpt).node_id == "a"
    for n in ckpt.nodes.values():
        n.status = "pending"
    assert opening_node(ckpt) == ("root", "the root: no node completed")


def test_findings_win_in_tree_order(small_ckpt: Path) -> None:
    ckpt = load_checkpoint(small_ckpt)
    by_node = findings_by_node(audit(ckpt))
    assert by_node
    node_id, why = opening_node(ckpt, by_node)
    assert why == "the first node with an audit finding"
    order = list(tree_order(ckpt))
    assert sorted(order) == sorted(ckpt.nodes)  # every node once
    assert node_id == next(i for i in order if by_node.get(i))
    assert opening_node(ckpt, {}).reason != why  # no findings: the research path instead
