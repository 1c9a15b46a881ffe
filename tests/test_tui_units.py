"""Unit tests of the TUI's pure parts: safe text, labels, the lazy tree on big runs, dossiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Hit, MemoryEntry, Node, Replay, Tier, TierLine, set_depths, tree_graph
from ari_mem_tui.render.dossier import dossier_json, dossier_markdown, export_dossier
from ari_mem_tui.render.report import saw_json
from ari_mem_tui.render.text import clean, node_label, preview, safe_text
from ari_mem_tui.tui import config
from ari_mem_tui.tui.screens.entry import entry_text
from ari_mem_tui.tui.widgets.detail import tiers_text
from ari_mem_tui.tui.widgets.run_tree import RunTree

HOSTILE = "metrics=[red]x[/red] \x1b[2J\x9b31m \u202eevil\u202c done"


def test_clean_makes_control_characters_visible() -> None:
    shown = clean(HOSTILE)
    assert "\x1b" not in shown and "\x9b" not in shown and "\u202e" not in shown
    assert "␛[2J" in shown and "[red]x[/red]" in shown and "<U+202E>" in shown
    assert clean("a\nb\tc") == "a\nb    c"
    assert preview("a\nb", 10) == "a ⏎ b"
    assert preview("x" * 50, 10) == "x" * 9 + "…"


def test_safe_text_is_never_markup() -> None:
    text = safe_text("[bold]x[/bold] [link=http://e]y[/link]")
    assert text.plain == "[bold]x[/bold] [link=http://e]y[/link]"
    assert not text.spans


def test_entry_view_shows_hostile_text_literally() -> None:
    entry = MemoryEntry(
        id="e1",
        kind="node_scope",
        node_id="n",
        text=HOSTILE,
        source="t",
        metadata={"k": "[red]v\x1b"},
    )
    text = entry_text(entry)
    assert isinstance(text, Text)
    assert "[red]x[/red]" in text.plain and "\x1b" not in text.plain


def test_node_label_has_no_markup_from_the_file() -> None:
    node = Node(
        id="node_[red]abc", status="success", label="draft", metrics={"_scientific_score": 0.5}
    )
    label = node_label(node, writes=3)
    assert "[red]abc" in label.plain  # the id as written, not parsed as a style
    assert "0.50" in label.plain and "✎3" in label.plain


def big_checkpoint(n: int, chain: int = 0) -> Checkpoint:
    """A run of `n` nodes: a wide bushy tree, plus a single-child chain `chain` long."""
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str]] = []

    def add(node_id: str, parent: str | None) -> None:
        ancestors = [*nodes[parent].ancestor_ids, parent] if parent else []
        nodes[node_id] = Node(
            id=node_id,
            parent_id=parent,
            depth=len(ancestors),
            ancestor_ids=ancestors,
            status="success",
            label="improve",
        )
        if parent:
            edges.append((parent, node_id))

    add("root", None)
    for i in range(1, n):
        add(f"n{i:06d}", "root" if i < 10 else f"n{(i // 10):06d}")
    previous = "root"
    for i in range(chain):
        add(f"c{i:06d}", previous)
        previous = f"c{i:06d}"
    graph = tree_graph(nodes, edges)  # as the tree reader makes it
    set_depths(graph)
    return Checkpoint(path=Path("/nonexistent"), nodes=nodes, graph=graph, roots=["root"])


async def test_big_tree_opens_lazily_and_reveals_deep_nodes() -> None:
    from textual.app import App, ComposeResult

    ckpt = big_checkpoint(10_000, chain=1500)

    class TreeApp(App):
        def compose(self) -> ComposeResult:
            yield RunTree()

    app = TreeApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tree = app.query_one(RunTree)
        tree.load(ckpt)
        await pilot.pause()
        assert len(tree._by_id) == 1  # only the root line exists before anything is expanded
        # a 1500-deep single-child chain is one folded line, opened flat: no RecursionError
        assert tree.select_id("c001499")
        await pilot.pause()
        assert tree.current_id == "c001499"
        assert tree.select_id("n009999")
        assert len(tree._by_id) < 3000  # far fewer lines than nodes were built
        await pilot.press("G")
        await pilot.pause()


def sample_replay() -> Replay:
    hit = Hit(
        rank=1,
        global_rank=4,
        score=0.96,
        entry_id="e1",
        node_id="root",
        kind="node_scope",
        text="a | pipe and \x1b[2J and\nnewline",
    )
    return Replay(
        node_id="n000001",
        query="q [x]",
        query_source="custom",
        params={"limit": 5, "overfetch": 200, "top_k": 200},
        pool={"size": 3, "node_scope": 3, "react_step": 0, "window": None},
        hits=[hit],
        eligible=1,
        missed=[],
        exact_scope=[hit],
        recorded=None,
        embedder="bm25",
    )


def test_dossier_markdown_escapes_table_cells() -> None:
    ckpt = big_checkpoint(3)
    md = dossier_markdown(sample_replay(), ckpt)
    row = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert "a \\| pipe" in row and "\x1b" not in md and "␛[2J" in row and "⏎" in row
    data = dossier_json(sample_replay(), ckpt)
    assert data["replay"]["hits"][0]["text"].startswith("a | pipe")
    assert data["lineage"] == ["root", "n000001"]
    assert data["replay"] == saw_json(sample_replay())  # one JSON shape of a replay, not two


def test_an_empty_tier_shows_no_message_header() -> None:
    # ARI emits no message for an empty tier: showing its header would claim one was sent
    replay = sample_replay().replaced(
        tiers=[
            Tier(key="1c", title="Metric contract", header="METRIC-CORRECTNESS CONTRACT"),
            Tier(
                key="1b",
                title="Ancestor conclusions",
                header="[Established conclusions from ancestor nodes (1):]",
                lines=[TierLine(text="RESULT SUMMARY of R")],
            ),
        ]
    )
    shown = tiers_text(replay).plain
    md = dossier_markdown(replay, big_checkpoint(3))
    for text in (shown, md):
        assert "METRIC-CORRECTNESS CONTRACT" not in text and "(no message emitted)" in text
        assert "[Established conclusions from ancestor nodes (1):]" in text


def test_export_refuses_the_checkpoint_dir(tmp_path: Path) -> None:
    ckpt = big_checkpoint(3)
    ckpt.path = tmp_path / "ckpt"
    ckpt.path.mkdir()
    with pytest.raises(ValueError):
        export_dossier(ckpt, sample_replay(), ckpt.path / "sub")
    md_path, json_path = export_dossier(ckpt, sample_replay(), tmp_path / "out")
    assert md_path.exists() and json.loads(json_path.read_text())["replay"]["node_id"] == "n000001"


def test_export_dir_never_inside_the_checkpoint(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv(config.EXPORT_ENV, raising=False)
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    monkeypatch.chdir(ckpt)
    chosen = config.export_dir(ckpt)
    assert ckpt.resolve() not in chosen.parents and chosen != ckpt.resolve()
    assert config.export_dir(ckpt, tmp_path / "x") == (tmp_path / "x").resolve()


def test_export_dir_defaults_to_the_data_dir_never_the_current_one(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path / "config"))
    monkeypatch.delenv(config.EXPORT_ENV, raising=False)
    work_tree = tmp_path / "repo"
    (work_tree / ".git").mkdir(parents=True)
    monkeypatch.chdir(work_tree)  # a git work tree: a dossier must not land in it by default
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    chosen = config.export_dir(ckpt)
    assert chosen == (tmp_path / "data" / "ari-mem-tui" / "dossiers")
    assert config.save_setting("export_dir", str(tmp_path / "mine"))  # the config file
    assert config.export_dir(ckpt) == (tmp_path / "mine").resolve()
    monkeypatch.setenv(config.EXPORT_ENV, str(tmp_path / "env"))  # the environment wins
    assert config.export_dir(ckpt) == (tmp_path / "env").resolve()
    assert config.export_dir(ckpt, tmp_path / "flag") == (tmp_path / "flag").resolve()


def test_dossier_names_are_short_node_and_run_ids(tmp_path: Path) -> None:
    from ari_mem_tui.render.dossier import dossier_paths

    ckpt = big_checkpoint(3)
    ckpt.path, ckpt.run_id = tmp_path / "ckpt", "20260528210232_We_propose_SpMV"
    md_path, json_path = dossier_paths(ckpt, "node_1a2b3c4d", tmp_path)
    assert md_path.name.startswith("1a2b3c4d-20260528210232-") and md_path.suffix == ".md"
    assert json_path.stem == md_path.stem and len(md_path.name) < 40
    root = dossier_paths(ckpt, "node_20260528210232_We_propose_SpMV_root", tmp_path)[0]
    assert root.name.startswith("root-20260528210232-")


def test_settings_survive_a_broken_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    assert config.load_settings() == config.Settings()
    # a file the user broke by hand (a typo among their remaps) is not replaced by one setting
    assert not config.save_setting("theme", "nord")
    assert (tmp_path / "config.json").read_text(encoding="utf-8") == "{not json"
    (tmp_path / "config.json").unlink()
    assert config.save_setting("theme", "nord")
    assert config.load_settings() == config.Settings(theme="nord")


def test_a_metric_is_shown_as_the_run_wrote_it() -> None:
    """13.34 stays 13.34 (a fixed 4 decimals showed 13.3400) and 1e-07 is not 0.0000; float
    noise from a computed value is cut to 6 significant digits."""
    from ari_mem_tui.render.text import metric_number

    assert [metric_number(v) for v in (13.34, 1e-07, 100.0, 0.1 + 0.2)] == [
        "13.34",
        "1e-07",
        "100.0",
        "0.3",
    ]
