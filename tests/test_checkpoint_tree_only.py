"""`load_tree_only` (the TUI's fast first view) and the load's step reports."""

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
