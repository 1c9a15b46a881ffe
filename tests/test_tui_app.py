"""Pilot tests: the TUI driven by its keys on a small fixed checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable, Static

from ari_mem_tui.render.text import short_id
from ari_mem_tui.tui import config
from ari_mem_tui.tui.messages import OpenEntry, ReplayKey
from ari_mem_tui.tui.screens.compare import CompareScreen
from ari_mem_tui.tui.screens.confirm import ConfirmScreen
from ari_mem_tui.tui.screens.entry import EntryScreen
from ari_mem_tui.tui.screens.filter import FilterScreen
from ari_mem_tui.tui.screens.help import HelpScreen
from ari_mem_tui.tui.widgets.run_tree import RunTree
from tests.tui_app_helpers import app_with, blocking_opener, make_app, press, settle, wait_for
from tests.tui_helpers import HOSTILE, IDS, append_node

# the tree opens as: root, A, B (root expanded); these keys walk to nodes
TO_A1Z = ("j", "l", "l", "l", "l", "j", "j", "j")  # A, expand, chain, open, A1, A1x, A1y, A1z
TO_B1 = ("j", "j", "l", "l")  # B, expand, B1


async def test_choosing_a_node_shows_only_its_ancestors_hits(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == IDS["R"]
        await press(pilot, *TO_A1Z)
        assert app.current_id == IDS["A1z"]  # reached through the folded chain
        replay = app.main.tabs.replays[(IDS["A1z"], None, 5, True, "start")]
        assert replay.as_of is not None  # what it saw: the pool as of its start, by default
        ancestors = set(app.ckpt.nodes[IDS["A1z"]].ancestor_ids)
        assert replay.hits, "A1z has ancestors with memory: it must have hits"
        assert {h.node_id for h in replay.hits} <= ancestors
        assert not any(h.node_id.startswith("node_b") for h in replay.hits)
        table = app.query_one("#hits-table", DataTable)
        assert table.row_count == len(replay.hits)
        # the tree marks the selection's ancestors
        assert app.main.tree_widget.lineage_ids == ancestors


async def test_moving_fast_ends_on_the_last_node(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for key in ("j", "j", "k", "j", "l", "l"):
            await pilot.press(key)  # no pauses: stale searches must not win
        await press(pilot)
        assert app.current_id == IDS["B1"]
        assert app.query_one("#hits-pane").replay.node_id == IDS["B1"]


async def test_memory_text_is_shown_literally(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(180, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "l", "l")  # A, expand, first child (A1's chain): A is its parent
        hostile = next(e for e in app.ckpt.entries if e.text == HOSTILE)
        replay = app.query_one("#hits-pane").replay
        assert hostile.id in {h.entry_id for h in replay.hits}
        table = app.query_one("#hits-table", DataTable)
        cells = [table.get_row(key) for key in table.rows]
        shown = next(str(c[-1]) for c in cells if "loud" in str(c[-1]))
        assert "[red]x[/red]" in shown and "\x1b" not in shown and "␛[2J" in shown
        app.post_message(OpenEntry(hostile.id))
        await press(pilot)
        assert isinstance(app.screen, EntryScreen)
        body = app.screen.query_one("#entry-text", Static).content
        assert isinstance(body, Text)
        assert "[red]x[/red]" in body.plain and "[bold]loud[/bold]" in body.plain
        assert "\x1b" not in body.plain and "␛[2J" in body.plain
        assert not body.spans or all(s.end <= len(body.plain) for s in body.spans)
        await press(pilot, "escape")
        assert not isinstance(app.screen, EntryScreen)


async def test_enter_on_a_hit_opens_the_entry(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        app.query_one("#hits-table").focus()
        await press(pilot, "enter")
        assert isinstance(app.screen, EntryScreen)
        first = app.query_one("#hits-pane").replay.hits[0]
        assert app.screen.entry.id == first.entry_id


async def test_compare_marked_with_current(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j", "l", "l", "j")  # A2 (A's second child; the chain is first)
        assert app.current_id == IDS["A2"]
        await press(pilot, "m")
        assert app.main.tabs.marked_id == IDS["A2"]
        await press(pilot, "g", "j", "j", "j", "j", "l", "l")  # root A chain A2 B, B1
        assert app.current_id == IDS["B1"]
        await press(pilot, "c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert (screen.a.node_id, screen.b.node_id) == (IDS["A2"], IDS["B1"])
        head = screen.query_one("#compare-head", Static).content.plain
        assert "common ancestor root" in head
        left = screen.query_one("#compare-a .compare-body", Static).content.plain
        right = screen.query_one("#compare-b .compare-body", Static).content.plain
        # A2 sees A's entries, B1 sees B's: each side marks what only it has
        assert "◆" in left and "◆" in right
        assert "of A:" in left and "of A:" not in right
        await press(pilot, "escape")
        assert not isinstance(app.screen, CompareScreen)
        # the view is built once and shown again: the next pair replaces every part of it
        await press(pilot, "k")  # B
        assert app.current_id == IDS["B"]
        await press(pilot, "c")
        again = app.screen
        assert again is screen and (again.a.node_id, again.b.node_id) == (IDS["A2"], IDS["B"])
        title = again.query_one("#compare-b .compare-title", Static).content.plain
        assert short_id(IDS["B"]) in title and short_id(IDS["B1"]) not in title
        body = again.query_one("#compare-b .compare-body", Static).content.plain
        assert body != right and "of A:" not in body


async def test_export_writes_the_dossier_outside_the_checkpoint(tiny: Path, tmp_path: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        await press(pilot, "e")  # asks first, naming the files; Enter (any key but y) cancels
        assert isinstance(app.screen, ConfirmScreen)
        assert str((tmp_path / "exports").resolve()) in app.screen.question.plain
        await press(pilot, "enter")
        assert app.main.tabs.last_export is None and not (tmp_path / "exports").exists()
        await press(pilot, "e", "y")
        assert app.main.tabs.last_export is not None
        md_path, json_path = app.main.tabs.last_export
        assert md_path.parent == (tmp_path / "exports").resolve()
        assert IDS["B1"] in md_path.read_text(encoding="utf-8")
        data = json.loads(json_path.read_text(encoding="utf-8"))
        assert data["replay"]["node_id"] == IDS["B1"]
        assert not list(tiny.glob("dossier-*"))


async def test_filter_by_status_keeps_lineage(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        assert isinstance(app.screen, FilterScreen)
        app.screen.query_one("#filter-status").select("failed")
        await press(pilot, "ctrl+s")
        tree = app.query_one(RunTree)
        assert tree.visible_ids == {IDS["A2"], IDS["A"], IDS["R"]}
        assert tree.reveal(IDS["A2"]) is not None
        assert tree.reveal(IDS["B1"]) is None


async def test_find_and_next(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"b1000001", "enter")
        assert app.current_id == IDS["B1"]
        await press(pilot, "slash", *"branch a", "enter")  # text in the directions
        first = app.current_id
        await press(pilot, "n")
        assert app.current_id != first
        assert set(app.main.tree_pane.find_matches) == {
            IDS[k] for k in ("A", "A1", "A2", "A1x", "A1y", "A1z")
        }


async def test_help_opens_and_closes(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        await press(pilot, "f1")
        assert isinstance(app.screen, HelpScreen)


async def test_tabs_copy_and_tree_toggle(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "y")
        assert app.last_copied == IDS["B1"]
        await press(pilot, "t")
        assert not app.query_one("#tree-pane").display
        await press(pilot, "t", "6")
        assert app.query_one("#tabs").active == "audit"


async def test_follow_picks_up_an_appended_node(small_ckpt: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "live"
    shutil.copytree(small_ckpt, ckpt)
    app = make_app(ckpt, follow_interval=0.1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        chosen = app.current_id
        await press(pilot, "F")
        assert app.following
        parent = chosen
        doc = json.loads((ckpt / "tree.json").read_text(encoding="utf-8"))
        new = dict(next(n for n in doc["nodes"] if n["id"] == parent))
        new.update(
            id="node_f0110e00",
            parent_id=parent,
            children=[],
            status="running",
            ancestor_ids=[*new.get("ancestor_ids", []), parent],
            depth=(new.get("depth") or 0) + 1,
            trace_log=[],
        )
        for node in doc["nodes"]:
            if node["id"] == parent:
                node["children"].append("node_f0110e00")
        doc["nodes"].append(new)
        (ckpt / "tree.json").write_text(json.dumps(doc), encoding="utf-8")
        await settle(pilot, loads=2)
        assert "node_f0110e00" in app.ckpt.nodes
        assert app.current_id == chosen  # selection kept
        assert app.query_one(RunTree).reveal("node_f0110e00") is not None


async def test_follow_on_the_tiny_checkpoint_keeps_expansion(tiny: Path) -> None:
    app = make_app(tiny, follow_interval=0.1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "F")
        append_node(tiny, "node_new00001", "B1")
        await settle(pilot, loads=2)
        tree = app.query_one(RunTree)
        assert app.current_id == IDS["B1"]
        assert tree._by_id[IDS["B"]].is_expanded  # expansion kept across the reload


def test_theme_is_remembered_between_runs(tiny: Path) -> None:
    import asyncio

    async def first() -> None:
        app = make_app(tiny, theme=None, remember_theme=True)
        async with app.run_test() as pilot:
            await settle(pilot)
            app.theme = "nord"
            await pilot.pause()

    async def second() -> str:
        app = make_app(tiny, theme=None, remember_theme=True)
        async with app.run_test() as pilot:
            await settle(pilot)
            return app.theme

    asyncio.run(first())
    assert config.load_settings().theme == "nord"
    assert asyncio.run(second()) == "nord"


async def test_corrupt_files_become_problems_not_crashes(tiny: Path) -> None:
    (tiny / "memory_backup.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with (tiny / "memory_access.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"ts": 1, "op": "read", "results": [\n')
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "6")
        assert app.current_id == IDS["B1"]  # what was readable is on screen
        kinds = {r.kind for r in app.main.audit_pane.audit_rows}
        assert "problem" in kinds
        files = " ".join(r.text for r in app.main.audit_pane.audit_rows if r.kind == "problem")
        assert "memory_backup.jsonl.gz" in files


async def test_a_failing_search_is_a_notification_and_a_problem(tiny: Path) -> None:
    app = make_app(tiny)

    class GoneServer:
        name = "letta:http://gone"

        def rank(self, query, top_k, before_ts=None):
            raise ConnectionError("server went away")

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.run_data.ranker = GoneServer()
        app.main.tabs.replays.clear()
        await press(pilot, *TO_B1)
        assert app.current_id == IDS["B1"]
        rows = [r for r in app.main.audit_pane.ui_problems if r.kind == "search"]
        assert rows and "server went away" in rows[0].text
        assert any("search failed" in (n.title or "") for n in app._notifications)
        assert app.query_one("#node-pane") is not None  # the rest still shows


async def test_a_run_that_cannot_open_leaves_the_app_up(tmp_path: Path) -> None:
    from ari_mem_tui.tui.app import AriMemApp

    def opener(_progress):
        raise OSError("disk on fire")

    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.ckpt is None
        assert any("disk on fire" in r.text for r in app.main.audit_pane.ui_problems)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_rerun_with_another_query_and_as_of(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        app.query_one("#query-input").focus()
        await press(pilot, *"batch size", "enter")
        replay = app.query_one("#hits-pane").replay
        assert replay.query == "batch size" and replay.query_source == "custom"
        assert {h.node_id for h in replay.hits} <= set(app.ckpt.nodes[IDS["B1"]].ancestor_ids)
        app.main.tree_widget.focus()
        await press(pilot, "a")
        replay = app.query_one("#hits-pane").replay
        assert app.main.tabs.params.as_of is False  # `a` leaves the default as-of pool for today's
        assert replay.as_of is None and replay.as_of_source == "now"
        assert "today's pool" in str(app.query_one("#hits-query").render())
        assert str(app.query_one("#as-of").label) == "pool: today (a)"
        await press(pilot, "a")
        replay = app.query_one("#hits-pane").replay
        assert replay.as_of is not None  # only entries written before B1 started
        assert str(app.query_one("#as-of").label) == "pool: as of start"


class SlowVectors:
    """A ranker whose vectors are still being computed, as MiniLM's are at first."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, "minilm"
        self.ready, self.done, self.total = False, 3, 10

    def rank(self, query, top_k, before_ts=None):
        return self.inner.rank(query, top_k, before_ts)


async def test_vector_progress_bar_then_fresh_hits(tiny: Path) -> None:
    from textual.widgets import ProgressBar

    from ari_mem_tui.run import Run
    from tests.tui_app_helpers import opener_for

    slow: list[SlowVectors] = []

    def opener(progress) -> Run:
        run = opener_for(tiny)(progress)
        slow.append(SlowVectors(run.ranker))
        run.ranker = slow[-1]
        return run

    from ari_mem_tui.tui.app import AriMemApp

    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1)
        bar = app.query_one("#status-progress", ProgressBar)
        assert bar.display and bar.progress == 3 and bar.total == 10
        first = app.query_one("#hits-pane").replay
        slow[-1].ready, slow[-1].done = True, 10
        await pilot.pause(0.6)
        await settle(pilot)
        assert not bar.display
        assert app.query_one("#hits-pane").replay is not first  # searched again with vectors


def test_every_palette_action_exists() -> None:
    """Each palette action is where its key says: the app's, or the main screen's (a pane's)."""
    from ari_mem_tui.tui import keys
    from ari_mem_tui.tui.app import AriMemApp
    from ari_mem_tui.tui.commands import ACTIONS
    from ari_mem_tui.tui.main_screen import MainScreen

    for key_id, _title, _help, action in keys.palette_actions({}):
        name = action.split("(")[0]
        owner = MainScreen if keys.owner(keys.BY_ID[key_id]) == "screen" else AriMemApp
        assert hasattr(owner, f"action_{name}"), action
    bound = {b.action.split("(")[0] for b in [*AriMemApp.BINDINGS, *MainScreen.BINDINGS]}
    offered = {a.split("(")[0] for _, _, a in ACTIONS}
    assert bound - {"escape"} <= offered  # every key's action is also in the palette


def test_cmd_open_on_a_missing_dir_fails_cleanly(tmp_path: Path, capsys) -> None:
    import argparse

    from ari_mem_tui.cli.commands import cmd_open

    assert cmd_open(argparse.Namespace(checkpoint=tmp_path / "nope")) == 2
    assert "not a checkpoint directory" in capsys.readouterr().err


async def test_breadcrumb_click_jumps_to_the_ancestor(tiny: Path) -> None:
    from ari_mem_tui.tui.widgets.detail import Crumb

    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_A1Z, "5")
        crumb = next(c for c in app.query(Crumb) if c.node_id == IDS["A"])
        await pilot.click(crumb)
        await press(pilot)
        assert app.current_id == IDS["A"]
        assert app.main.tree_widget.current_id == IDS["A"]


async def test_palette_runs_an_action(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, *TO_B1, "ctrl+p")
        await press(pilot, *"export dossier")
        await pilot.pause(0.3)
        await press(pilot, "enter", "y")
        assert app.main.tabs.last_export is not None
        assert app.main.tabs.last_export[0].name.startswith(IDS["B1"][-8:] + "-")  # its short id


async def test_palette_jumps_to_a_node(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        await press(pilot, *"jump a1y00001")
        await pilot.pause(0.3)
        await press(pilot, "enter")
        assert app.current_id == IDS["A1y"]  # revealed inside the folded chain
        assert app.main.tree_widget.current_id == IDS["A1y"]


async def test_audit_row_jumps_to_its_node_and_dim_toggle(tiny: Path) -> None:
    from rich.style import Style

    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "6")
        table = app.query_one("#audit-table", DataTable)
        rows = app.query_one("#audit-pane").rows
        target = next(i for i, r in enumerate(rows) if r.kind == "violation")
        table.focus()
        table.move_cursor(row=target)
        await press(pilot, "enter")  # the finding in full, then `o`: its node
        assert isinstance(app.screen, EntryScreen)
        await press(pilot, "o")
        assert app.current_id == IDS["B1"]  # the reader that searched outside its lineage
        tree = app.main.tree_widget
        await press(pilot, "d")
        assert tree.dim_unseen
        outside = tree.reveal(IDS["A"])
        label = tree.render_label(outside, Style(), Style())
        assert any("dim" in str(span.style) for span in label.spans)  # A is not B1's ancestor
        inside = tree.reveal(IDS["B"])
        label = tree.render_label(inside, Style(), Style())
        assert not any("dim" in str(span.style) for span in label.spans)


def test_cmd_open_accepts_demo_args_without_letta_options(tiny: Path, monkeypatch) -> None:
    """`demo` calls cmd_open with its own args: no letta options, an embedder choice."""
    import argparse

    from ari_mem_tui.cli import commands
    from ari_mem_tui.cli.commands import cmd_open
    from ari_mem_tui.tui import app as app_module

    seen = {}

    def fake_run_app(opener, **kwargs) -> int:
        seen["run"] = opener(lambda done, total: None)
        seen.update(kwargs)
        return 0

    monkeypatch.setattr(app_module, "run_app", fake_run_app)
    monkeypatch.setattr(commands, "no_terminal", lambda: False)  # pytest's stdout is no tty
    args = argparse.Namespace(checkpoint=tiny, embedder="bm25", nodes=8, seed=1, out=None)
    assert cmd_open(args) == 0
    assert seen["run"].checkpoint.nodes and seen["run"].ranker.name == "bm25"
    assert str(tiny) in seen["run"].source_label


async def test_the_tui_writes_the_index_after_the_first_hits(tiny: Path, monkeypatch) -> None:
    """`cmd_open`'s opener leaves a first open's index to the app, which writes it once the
    first hits and the audit are done; the next open of the same files reads it."""
    import argparse

    from ari_mem_tui.checkpoint import index
    from ari_mem_tui.cli.commands import run_openers
    from ari_mem_tui.tui.app import AriMemApp

    monkeypatch.setenv(index.INDEX_ENV, str(tiny.parent / "index-root"))
    opener = run_openers(argparse.Namespace(checkpoint=tiny, embedder="bm25"))(tiny)
    for fresh in (True, False):
        app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert app.query_one("#hits-pane").replay is not None
            assert (app.run_data.save_index is not None) is fresh
            title = str(app.query_one("#audit-title", Static).content)
            assert "auditing" not in title and index.is_current(tiny)


async def test_tree_is_navigable_while_memory_loads(tiny: Path) -> None:
    import threading

    release, blocked = threading.Event(), threading.Event()
    app = app_with(blocking_opener(tiny, release, blocked))
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await wait_for(pilot, lambda: app.tree_ckpt is not None and blocked.is_set())
            await pilot.pause(0.1)
            assert app.run_data is None and app.current_id == IDS["R"]
            loading = app.query_one("#memory-loading", Static)
            assert loading.display and not app.query_one("#tabs").display
            assert "loading memory" in str(loading.content)
            assert "(2 of 6: memory)" in str(loading.content)
            for key in TO_B1:  # the keys move the cursor and the selection while it loads
                await pilot.press(key)
                await pilot.pause()
            assert app.run_data is None, "the load finished before it was released"
            assert app.main.tree_widget.current_id == IDS["B1"] and app.current_id == IDS["B1"]
            assert app.query_one("#hits-pane").replay is None
        finally:
            release.set()
        await settle(pilot)
        assert app.run_data is not None and app.tree_ckpt is None
        assert not loading.display and app.query_one("#tabs").display
        assert app.current_id == IDS["B1"]  # the user's place survives the switch to the run
        assert app.main.tree_widget.current_id == IDS["B1"]
        replay = app.query_one("#hits-pane").replay
        assert replay is not None and replay.node_id == IDS["B1"]
        table = app.query_one("#hits-table", DataTable)
        assert table.row_count == len(replay.hits) > 0


async def test_memory_failing_after_the_tree_keeps_the_tree(tiny: Path) -> None:
    import threading

    release, blocked = threading.Event(), threading.Event()
    release.set()
    app = app_with(blocking_opener(tiny, release, blocked, fail=True))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.run_data is None and app.ckpt is app.tree_ckpt
        assert any("backup unreadable" in r.text for r in app.main.audit_pane.ui_problems)
        assert any("could not open" in (n.title or "") for n in app._notifications)
        assert app.query_one("#tabs").display  # the Audit tab can show the problem
        await press(pilot, *TO_B1)
        assert app.current_id == IDS["B1"]  # the tree still works


async def test_the_app_opens_on_the_first_node_with_a_finding_once_the_audit_is_in(
    tiny: Path,
) -> None:
    from ari_mem_tui.audit import audit, findings_by_node
    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.render.opening import opening_node

    ckpt = load_checkpoint(tiny)
    by_node = findings_by_node(audit(ckpt))
    expected = opening_node(ckpt, by_node)
    assert expected.node_id != IDS["R"] and expected.reason.startswith("the first node with")
    app = make_app(tiny, open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == expected.node_id
        assert app.main.tree_pane.opening_reason == expected.reason
        assert app.main.tree_widget.selected_id == expected.node_id
        # its lineage is expanded: every ancestor's line is in the tree
        for ancestor in ckpt.nodes[expected.node_id].ancestor_ids:
            assert ancestor in app.main.tree_widget._by_id


async def test_the_app_never_shows_another_node_before_the_one_it_opens_on(tiny: Path) -> None:
    """The audit runs before the run is shown, so the first node chosen (beyond the root the
    tree starts on) is the first with a finding: no node is shown and then left."""
    from ari_mem_tui.audit import audit, findings_by_node
    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.render.opening import opening_node

    ckpt = load_checkpoint(tiny)
    expected = opening_node(ckpt, findings_by_node(audit(ckpt))).node_id
    app = make_app(tiny, open_useful=True)
    chosen: list[str] = []
    choose = app.main.choose

    def recording(node_id: str) -> None:
        chosen.append(node_id)
        choose(node_id)

    app.main.choose = recording  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == expected
    assert [n for n in dict.fromkeys(chosen) if n not in ckpt.roots] == [expected]


async def test_a_node_asked_for_wins_and_a_user_who_moved_is_not_moved(tiny: Path) -> None:
    app = make_app(tiny, open_useful=True, initial_node="B1000001")  # any case, a suffix
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == IDS["B1"]  # the audit did not move it
    app = make_app(tiny, open_useful=True, initial_node="no-such-node")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        assert app.current_id != "no-such-node" and app.current_id in app.ckpt.nodes


async def test_a_first_search_running_does_not_ask_to_choose_a_node(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        hits = app.query_one("#hits-pane")
        hits.replay = None  # as before the first search has answered
        hits.query_one("#hits-query", Static).update(Text("Choose a node in the tree."))
        hits.show_loading(ReplayKey(IDS["B1"], None, 5, True, "start"))
        await pilot.pause()
        assert "Choose a node" not in str(hits.query_one("#hits-query").render())
        assert "searching for" in str(hits.query_one("#hits-diag").render())


class _Cycle:
    """An object kept alive by a cycle alone: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


async def test_a_loaded_run_is_frozen_at_once_and_a_reload_collects_the_last(
    tiny: Path, monkeypatch
) -> None:
    """The load freezes the run's objects before anything else runs (the collector's passes
    over a big run's fresh objects delayed its first hits), with the collector on again after
    it; a reload lets the earlier run's cycles be collected."""
    import gc
    import weakref

    from ari_mem_tui.model.checkpoint import EntriesByNode

    frozen: list[tuple[int, bool]] = []
    real = EntriesByNode.group  # the load's next step after the run is read
    monkeypatch.setattr(
        EntriesByNode,
        "group",
        lambda self: frozen.append((gc.get_freeze_count(), gc.isenabled())) or real(self),
    )
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert frozen and frozen[0][0] > 0 and frozen[0][1]
        assert gc.isenabled()
        garbage = _Cycle()
        gc.freeze()  # as the first run's objects are
        gone = weakref.ref(garbage)
        del garbage
        await press(pilot, "r")
        await settle(pilot, loads=2)
        assert gone() is None  # collected once the reloaded run was in


async def test_the_widgets_show_the_app_s_state_as_it_changes(tiny: Path) -> None:
    """GIVEN the app on a loaded run WHEN its shared state is set, and nothing else (the chosen
    node, the audit's findings, wide tables, follow; the screen's problem count) THEN the tree,
    the tabs and the status line show it: they watch it (reactives), none is told by hand."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree, tabs, main = app.main.tree_widget, app.main.tabs, app.main
        app.current_id = IDS["B1"]
        assert tree.selected_id == IDS["B1"] and tabs.node_id == IDS["B1"]
        assert tree.lineage_ids == set(app.ckpt.nodes[IDS["B1"]].ancestor_ids)
        app.current_id = "no such node"  # not in the run: nothing follows it
        assert tree.selected_id == IDS["B1"] and tabs.node_id == IDS["B1"]
        app.findings = {IDS["B1"]: []}
        assert tabs.findings == {IDS["B1"]: []} and tree.findings == {}  # (no glyph: no finding)
        app.wide_columns, app.following = True, True
        main.problems = (7, 3)
        await pilot.pause()
        status = {
            part: str(app.query_one(f"#status-{part}", Static).render())
            for part in ("wide", "follow", "problems")
        }
        assert status == {
            "wide": "⇔ wide (z)",
            "follow": "● following",
            "problems": "7 problems · 3 findings",
        }
        app.run_data = None  # another run opening: no replay of the last one is kept
        assert tabs.run is None and tabs.replays == {}
