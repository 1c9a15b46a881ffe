"""The tree alone (the TUI's fast first view: `on_tree`, `load_tree_only`) and the load's step
reports."""

from __future__ import annotations

from pathlib import Path

from ari_mem_tui.checkpoint.load import LOAD_STEPS, load_checkpoint, load_tree_only
from ari_mem_tui.run import RunOptions, open_run
from tests.tui_helpers import write_tiny_checkpoint


def test_tree_only_has_the_full_loads_tree_and_no_memory(tmp_path: Path) -> None:
    path = write_tiny_checkpoint(tmp_path / "tiny")
    full, tree = load_checkpoint(path), load_tree_only(path)
    assert list(tree.nodes) == list(full.nodes) and len(tree.nodes) > 1
    assert tree.roots == full.roots and tree.run_id == full.run_id
    assert sorted(tree.graph.edges) == sorted(full.graph.edges)
    assert tree.tree_source == full.tree_source
    assert full.entries and not tree.entries and not tree.access_events and not tree.writes


def test_the_load_hands_its_tree_over_before_reading_memory(tmp_path: Path) -> None:
    path = write_tiny_checkpoint(tmp_path / "tiny")
    seen: list = []
    full = load_checkpoint(
        path, on_step=lambda _n, _m, part: seen.append(part), on_tree=seen.append
    )
    assert seen[:2] == ["tree", seen[1]] and seen[2:] == list(LOAD_STEPS[1:])
    tree = seen[1]
    assert list(tree.nodes) == list(full.nodes) and tree.roots == full.roots
    assert tree.run_id == full.run_id and tree.tree_source == full.tree_source
    # the rest of the load fills the full checkpoint, never the tree already handed over
    assert full.entries and not tree.entries and not tree.access_events and not tree.writes


def test_no_tree_is_handed_over_when_there_is_none(tmp_path: Path) -> None:
    trees: list = []
    load_checkpoint(tmp_path / "missing", on_tree=trees.append)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "tree.json").write_text("{not json", encoding="utf-8")
    load_checkpoint(tmp_path / "empty", on_tree=trees.append)
    assert trees == []


def test_tree_only_on_bad_input_is_a_problem(tmp_path: Path) -> None:
    assert load_tree_only(tmp_path / "missing").problems[0].what == "loaded nothing"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "tree.json").write_text("{not json", encoding="utf-8")
    ckpt = load_tree_only(tmp_path / "empty")
    assert not ckpt.nodes
    assert any(p.what == "loaded no nodes" for p in ckpt.problems)


def test_open_run_reports_each_part_in_order(tmp_path: Path) -> None:
    path = write_tiny_checkpoint(tmp_path / "tiny")
    seen: list[tuple[int, int, str]] = []
    open_run(RunOptions(checkpoint=path, embedder="bm25"), on_step=lambda *s: seen.append(s))
    total = len(LOAD_STEPS) + 1
    assert seen == [(i + 1, total, p) for i, p in enumerate([*LOAD_STEPS, "search index"])]
