"""The tree before the memory (issue 33, item 2): a first open hands the TUI a tree sketched from
tree.json without its trace logs, built as the full read builds it, then reads the tree whole;
the sketch is the tree the full read gives (ids, parents, roots, what a node's line shows)."""

from __future__ import annotations

import json
from pathlib import Path

from checkpoint_helpers import chain_tree, node, write_tree

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.tree import load_tree, sketch_tree


def _same_tree(sketch, full) -> None:
    assert list(sketch.nodes) == list(full.nodes)
    assert sketch.roots == full.roots and sketch.run_id == full.run_id
    assert sorted(sketch.graph.edges) == sorted(full.graph.edges)
    assert sketch.source == full.source
    for node_id, whole in full.nodes.items():
        drawn = sketch.nodes[node_id]
        for field in ("label", "status", "depth", "name", "score", "eval_summary", "parent_id"):
            assert getattr(drawn, field) == getattr(whole, field), (node_id, field)
        assert list(drawn.ancestor_ids) == list(whole.ancestor_ids)


def test_the_sketch_is_the_tree_the_full_read_gives(small_ckpt: Path, tmp_path: Path) -> None:
    full = load_tree(small_ckpt, [])
    sketch = sketch_tree(small_ckpt)
    assert sketch is not None
    _same_tree(sketch, full)
    assert all(n.trace_raw() is None and not n.trace_lines() for n in sketch.nodes.values())
    assert any(n.trace_lines() for n in full.nodes.values())  # (the full read has them)
    # odd nodes: a duplicate id, a label in ARI's enum form, a parent missing, ids as numbers
    nodes = chain_tree()
    nodes.append({**node("a", "root", ["root"]), "label": "NodeLabel.IMPROVE"})  # duplicate
    nodes.append(node("orphan", "gone", ["gone"]))
    nodes.append({**node(7, "root", ["root"]), "metrics": {"_scientific_score": 0.5}})
    write_tree(tmp_path / "odd", nodes, run_id="20260101000000_odd")
    problems: list = []
    full = load_tree(tmp_path / "odd", problems)
    assert problems  # (the duplicate and the missing parent are said, by the full read)
    _same_tree(sketch_tree(tmp_path / "odd"), full)


def test_no_sketch_of_a_tree_the_fast_readers_do_not_take(tmp_path: Path) -> None:
    """A tree.json that does not decode: no sketch; the full read finds the next file."""
    write_tree(tmp_path / "run", chain_tree())
    (tmp_path / "run" / "tree.json").write_text('{"nodes": [{"id": "root"', encoding="utf-8")
    assert sketch_tree(tmp_path / "run") is None
    deep = tmp_path / "deep"
    nodes = chain_tree()
    nested: dict = {}
    for _ in range(200):
        nested = {"x": nested}
    nodes[1]["metrics"] = nested
    write_tree(deep, nodes)
    assert sketch_tree(deep) is None  # nested past the limit: the full reader's to judge


def test_a_first_open_shows_the_sketch_then_reads_the_tree_whole(small_ckpt: Path) -> None:
    shown = []
    run = load_checkpoint(small_ckpt, on_tree=shown.append)
    [tree] = shown  # once: the sketch
    assert list(tree.nodes) == list(run.nodes) and tree.roots == run.roots
    assert all(tree.nodes[i] is not run.nodes[i] for i in run.nodes)  # (not the full read's)
    assert not tree.entries and run.entries  # the tree alone
    traced = [i for i, n in run.nodes.items() if n.trace_lines()]
    assert traced and not any(tree.nodes[i].trace_lines() for i in traced)


def test_a_tree_without_a_sketch_is_shown_from_the_full_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_tree(run, chain_tree(), name="nodes_tree.json")
    (run / "tree.json").write_text(json.dumps({"nodes": "not a list"}), encoding="utf-8")
    shown = []
    loaded = load_checkpoint(run, on_tree=shown.append)
    [tree] = shown
    assert tree.nodes is loaded.nodes  # the full read's own tree, handed over


def test_a_run_without_an_index_shows_its_sketch_before_its_keys_are_hashed(
    small_ckpt: Path, index_root: Path, monkeypatch
) -> None:
    """`open_run` gives a first open's sketch before it takes the files' keys (whole-file
    hashes); a run with an index gives no tree alone: its reopen is the whole run at once."""
    from ari_mem_tui.checkpoint import index
    from ari_mem_tui.run import RunOptions, open_run

    keys: list[int] = []
    real_key = index.run_key
    monkeypatch.setattr(index, "run_key", lambda *a: keys.append(1) or real_key(*a))
    shown: list[int] = []  # the keys taken when the tree was given
    options = RunOptions(checkpoint=small_ckpt, rank=False, index_behind=True)
    run = open_run(options, on_tree=lambda tree: shown.append(len(keys)))
    assert shown == [0] and keys  # the sketch first, the keys after it
    assert not index.exists(small_ckpt) and run.save_index is not None and run.save_index()
    assert index.exists(small_ckpt)
    again = open_run(options, on_tree=lambda tree: shown.append(len(keys)))
    assert shown == [0] and again.checkpoint.nodes.keys() == run.checkpoint.nodes.keys()
