"""Pilot tests of what the Hits pane claims: the pool it ranked, the query it used, the ranker
that made it (and that a BM25 stand-in never outlives MiniLM), and its marks."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from ari_mem_tui.model import Hit
from ari_mem_tui.run import Run
from ari_mem_tui.search.embedded import EmbeddingRanker, Pool
from ari_mem_tui.search.embedder import DIM
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.widgets.hits import hit_row
from tests.tui_app_helpers import opener_for, press, settle
from tests.tui_helpers import IDS, write_tiny_checkpoint

TO_B1 = ("j", "j", "l", "l")  # B, expand, B1
VERDICT = "Verdict: the warmup schedule lost 3% accuracy; keep the cosine decay"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = write_tiny_checkpoint(tmp_path / "tiny")
    tree = json.loads((path / "tree.json").read_text())
    for node in tree["nodes"]:
        if node["id"] == IDS["B1"]:
            node["eval_summary"] = VERDICT  # after evaluation: no longer the direction
    (path / "tree.json").write_text(json.dumps(tree))
    return path


def app_on(path: Path, opener=None) -> AriMemApp:
    return AriMemApp(
        opener or opener_for(path), theme="textual-dark", remember_theme=False, blink=False
    )


def header(app: AriMemApp) -> str:
    return str(app.query_one("#hits-query").render())


async def test_s_cycles_the_query_source_and_it_is_remembered_across_nodes(tiny: Path) -> None:
    app = app_on(tiny)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        pane = app.query_one("#hits-pane")
        direction = app.ckpt.nodes[IDS["B1"]].original_direction
        assert (pane.replay.query_source, pane.replay.query) == ("start", direction[:200])
        assert "eval_summary at start (its direction, original_direction)" in header(app)
        app.main.tree_widget.focus()
        await press(pilot, "s")
        assert (pane.replay.query_source, pane.replay.query) == ("now", VERDICT)
        assert "eval_summary now" in header(app)
        assert pane.replay.recorded is not None
        assert pane.replay.recorded.differences == 0  # another query: not compared
        assert "not compared" in str(app.query_one("#recorded-title").render())
        await press(pilot, "s")  # no custom query typed yet: back to at start, the focus stays
        assert app.focused is app.main.tree_widget
        assert (pane.replay.query_source, pane.replay.query) == ("start", direction[:200])
        await press(pilot, "i", *"gpu kernel", "enter")
        assert (pane.replay.query_source, pane.replay.query) == ("custom", "gpu kernel")
        assert "custom query" in header(app)
        app.main.tree_widget.focus()
        await press(pilot, "k")  # another node: the custom query stays
        assert app.current_id != IDS["B1"]
        assert (pane.replay.query_source, pane.replay.query) == ("custom", "gpu kernel")
        await press(pilot, "j", "s")  # back on B1, and on to "at start" again
        assert (pane.replay.query_source, pane.replay.query) == ("start", direction[:200])
        await press(pilot, "s", "s")  # now, then the custom query typed before
        assert (pane.replay.query_source, pane.replay.query) == ("custom", "gpu kernel")


class GatedEmbedder:
    """A deterministic stand-in for MiniLM that waits until the test releases it: in its pool
    pass (a cold vector cache), or before anything (`at_load`: a warm cache, while the model
    loads; then no vector is missing and the ranker's `total` stays 0)."""

    def __init__(self, at_load: bool = False) -> None:
        self.release = threading.Event()
        self.at_load = at_load

    @property
    def dim(self) -> int:
        if self.at_load:
            self.release.wait(30)
        return DIM

    def embed(self, texts, progress=None, batch_size: int = 32) -> np.ndarray:
        self.release.wait(30)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            rng = np.random.default_rng(sum(text.encode()) % 2**32)
            vec = rng.standard_normal(DIM).astype(np.float32)
            out[row] = vec / np.linalg.norm(vec)
        if progress is not None:
            progress(len(texts), len(texts))
        return out


@pytest.mark.parametrize("cache", ["cold", "warm"])
async def test_bm25_replays_are_dropped_and_the_visible_one_rerun_once_minilm_is_ready(
    tiny: Path, tmp_path: Path, cache: str
) -> None:
    """GIVEN MiniLM not ready (vectors building, or a warm cache while the model loads), WHEN a
    node is shown, THEN BM25 stands in and says so; WHEN MiniLM is ready, THEN the visible
    replay is MiniLM's, with no key pressed, and no BM25 replay stays cached."""
    from ari_mem_tui.checkpoint.load import load_checkpoint

    if cache == "warm":  # every vector already cached by an earlier session
        entries = load_checkpoint(tiny).entries
        warm = GatedEmbedder()
        warm.release.set()
        EmbeddingRanker(
            Pool(entries), cache_dir=tmp_path / "vectors", embedder=warm, background=False
        )
    embedder = GatedEmbedder(at_load=cache == "warm")
    rankers: list[EmbeddingRanker] = []

    def opener(progress) -> Run:
        run = opener_for(tiny)(progress)
        pool = Pool(run.checkpoint.entries)
        ranker = EmbeddingRanker(pool, cache_dir=tmp_path / "vectors", embedder=embedder)
        rankers.append(ranker)
        run.ranker = ranker
        return run

    app = app_on(tiny, opener)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        pane = app.query_one("#hits-pane")
        first = pane.replay
        assert first.embedder == "bm25" and first.fallback
        assert "in place of local MiniLM (not ready yet)" in header(app)
        await press(pilot, "k")  # a second fallback replay, in the cache
        await press(pilot, "j")
        assert any(r.fallback for r in app.main.tabs.replays.values())
        embedder.release.set()  # the vectors finish; nothing is pressed from here on
        for _ in range(200):
            if pane.replay is not None and pane.replay.embedder == "minilm":
                break
            await pilot.pause(0.05)
        await settle(pilot)
        assert pane.replay.embedder == "minilm" and not pane.replay.fallback
        assert (rankers[-1].total == 0) == (cache == "warm")
        assert app.current_id == IDS["B1"]
        assert not any(r.fallback for r in app.main.tabs.replays.values())  # none kept
        assert "· stand-in: local MiniLM" in header(app) and "not ready" not in header(app)
    for ranker in rankers:
        ranker.stop()


def test_hit_rows_show_unknown_global_ranks_and_keyword_scores_as_they_are() -> None:
    hit = Hit(
        rank=4,
        global_rank=-1,
        score=0.125,
        entry_id="e",
        node_id="node_x",
        kind="node_scope",
        text="t",
    )
    row = hit_row(hit)
    assert row[1:3] == ["?", "0.125"]
    hit.global_rank, hit.score, hit.mark, hit.differs = 7, 0.93, "changed", ["global_rank"]
    row = hit_row(hit)
    assert row[1:3] == ["7", "0.93"] and str(row[5]) == "~glob"


async def test_findings_show_on_the_readers_tree_row_and_in_its_hits_and_node_tabs(
    small_ckpt: Path,
) -> None:
    from rich.style import Style

    from ari_mem_tui.audit import audit
    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.render.text import preview

    report = audit(load_checkpoint(small_ckpt))
    leak = next(f for f in report.leaks if f.tool == "search_memory")
    leaked = next(p for p in leak.passages if p.outside)
    rejected = report.rejected_writes[0]
    app = app_on(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.main.tree_widget
        assert tree.findings[leak.node_id][0] == "read"
        app.main.jump_to(leak.node_id)
        await settle(pilot)
        row = tree.render_label(tree._by_id[leak.node_id], Style(), Style()).plain
        assert row.removeprefix("▶ ").removeprefix("▼ ").startswith("⚠ ")  # before the glyph
        hits = str(app.query_one("#hits-findings").render())
        assert app.query_one("#hits-findings").display
        assert "⚠ leak" in hits and preview(leak.query, 300)[:30] in hits
        assert preview(leaked.text, 300)[:30] in hits  # what it returned, text from the backup
        app.main.jump_to(rejected.node_id)
        await press(pilot, "5")
        node_tab = str(app.query_one("#node-findings").render())
        assert "rejected write" in node_tab and rejected.text[:40] in node_tab
        row = tree.render_label(tree._by_id[rejected.node_id], Style(), Style()).plain
        assert "⚑" in row  # also when the writer read outside its lineage (⚠⚑)
        app.main.jump_to(app.ckpt.roots[0])  # a node without findings shows none
        await settle(pilot)
        assert not app.query_one("#hits-findings").display


async def test_a_rejected_write_shows_its_text_without_scrolling_sideways(tiny: Path) -> None:
    from rich.style import Style

    app = app_on(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "l", "l", "j", "4")  # A, expand, A1 chain, A2; Writes
        assert app.current_id == IDS["A2"]
        title = str(app.query_one("#writes-title").render())
        assert "✗ add_memory → b0000001: steal a note" in title
        tree = app.main.tree_widget
        row = tree.render_label(tree._by_id[IDS["A2"]], Style(), Style()).plain
        assert row.startswith("⚑ ")  # first on the row: a narrow tree pane cuts the end
