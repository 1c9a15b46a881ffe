"""Focus and typing safety (issue 11): the focused pane is lit and its keys are in the footer,
one key focuses each pane, arrows move in the tree, j/k scroll the text tabs, and a phrase typed
into the app never fires its single-letter commands."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Checkbox, Input, Static, Tabs

from ari_mem_tui.tui import keys
from ari_mem_tui.tui.screens.confirm import ConfirmScreen
from ari_mem_tui.tui.tables import VimTable
from ari_mem_tui.tui.typing_guard import PHRASE_GAP, TypeAhead
from ari_mem_tui.tui.widgets.hits import HitsPane
from tests.tui_app_helpers import idle, make_app, press, settle, settle_keys
from tests.tui_helpers import IDS

# every single-character key of the registry, after the phrase of the issue
LETTERS = sorted({k for key in keys.KEYS for k in key.keys.split(",") if len(k) == 1})
PHRASE = "segmentation fault " + "".join(LETTERS)


def shown_keys(app) -> set[str]:
    """The keys the footer shows now (Textual's Footer lists exactly these)."""
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


def border_colour(app, selector: str | type):
    return app.query_one(selector).styles.border_top[1]


async def test_the_focused_pane_is_lit_and_the_footer_follows_it(tiny: Path) -> None:
    """GIVEN the app on the tree WHEN `]` then `[` are pressed THEN the focused pane's border is
    the bright one, and the footer shows that pane's keys (tree: export, mark; Hits: missed,
    pool, query) beside the few global ones."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.focused is app.main.tree_widget
        lit, dim = border_colour(app, "#tree-pane"), border_colour(app, HitsPane)
        assert lit != dim
        on_tree = shown_keys(app)
        assert {"e", "m", "f", "slash", "right_square_bracket", "q", "question_mark"} <= on_tree
        assert not on_tree & {"M", "a", "s", "i"}
        await press(pilot, "right_square_bracket")
        assert app.focused is app.query_one(HitsPane)  # the root has no hits: no empty table
        assert border_colour(app, HitsPane) == lit and border_colour(app, "#tree-pane") == dim
        on_hits = shown_keys(app)
        assert {"M", "a", "s", "i", "left_square_bracket", "q"} <= on_hits
        assert not on_hits & {"e", "m", "f"}
        await press(pilot, "left_square_bracket")
        assert app.focused is app.main.tree_widget
        assert border_colour(app, "#tree-pane") == lit


async def test_one_key_focuses_each_pane_and_the_tab_strip_is_no_tab_stop(tiny: Path) -> None:
    """GIVEN the app on the tree WHEN `i`, `]`, 1–6, `[` and Tab are pressed THEN `i` reaches
    the query box at once, a tab key keeps focus in the detail pane (on the new tab's main
    widget), and Tab from the tree never lands on the tab strip."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert all(not strip.can_focus for strip in app.query(Tabs))
        await press(pilot, "i")
        assert app.focused is app.query_one("#query-input", Input)
        await press(pilot, "escape")
        assert app.focused is app.main.tree_widget
        await press(pilot, "tab")
        assert not isinstance(app.focused, Tabs)
        await press(pilot, "left_square_bracket", "2")
        assert app.focused is app.main.tree_widget  # from the tree, 1–6 only switch the tab
        assert app.main.tabs.active == "saw"
        await press(pilot, "right_square_bracket")
        assert isinstance(app.focused, VerticalScroll) and app.focused.id == "saw-pane"
        await press(pilot, "4")
        assert app.main.tabs.active == "writes"
        assert app.focused is app.query_one("#writes-table", VimTable)
        await press(pilot, "6")
        assert app.focused is app.query_one("#audit-table", VimTable)


async def test_arrows_move_in_the_tree_and_j_k_scroll_the_text_tabs(tiny: Path) -> None:
    """GIVEN the tree WHEN → and ← are pressed THEN they expand / go to the child and back /
    collapse like l and h; GIVEN the Node tab focused in a short terminal WHEN j, k THEN it
    scrolls down and up."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 16)) as pilot:  # short: the Node tab has to scroll
        await settle(pilot)
        tree = app.main.tree_widget
        await press(pilot, "down")
        assert app.current_id == IDS["A"] and not tree.cursor_node.is_expanded
        await press(pilot, "right")
        assert tree.cursor_node.is_expanded
        await press(pilot, "right")
        assert tree.cursor_node.parent.data.node_id == IDS["A"]  # A's first child line
        await press(pilot, "left")
        assert app.current_id == IDS["A"]
        await press(pilot, "left")
        assert not tree.cursor_node.is_expanded
        await press(pilot, "5", "right_square_bracket")
        node_pane = app.query_one("#node-pane", VerticalScroll)
        assert app.focused is node_pane and node_pane.max_scroll_y >= 3
        await press(pilot, "j", "j", "j")
        assert node_pane.scroll_y == 3
        await press(pilot, "k")
        assert node_pane.scroll_y == 2


def _nothing_fired(app, tmp_path: Path, tab: str = "hits") -> None:
    assert not (tmp_path / "exports").exists(), "a dossier was written"
    assert app.main.tabs.last_export is None
    assert app.main.tabs.marked_id is None
    assert app.main.tree_pane.display and not app.main.tree_widget.dim_unseen
    assert not app.following
    assert app.query_one("#as-of", Checkbox).value is True
    assert app.query_one("#hits-pane").query_from in ("start", "custom")
    assert app.main.tabs.active == tab
    assert app.screen is app.screen_stack[0], "a screen opened"
    assert app.is_running


@pytest.mark.parametrize("box", ["#find-input", "#query-input", "#limit-input"])
async def test_letters_typed_into_a_text_box_are_text(tiny: Path, tmp_path: Path, box) -> None:
    """GIVEN focus in a text box (find, query, limit) WHEN a phrase holding every command
    letter is typed THEN no command fires; the text boxes hold the phrase."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        if box == "#find-input":
            await press(pilot, "slash")
        else:
            app.query_one(box, Input).focus()
            await pilot.pause()
        field = app.query_one(box, Input)
        assert app.focused is field
        for char in PHRASE:  # one at a time, a pause after each: each could be a command
            await pilot.press(char)
            await settle_keys(pilot)
        await idle(pilot)  # a command that fired has started its work by now
        _nothing_fired(app, tmp_path)
        assert app.focused is field
        if box != "#limit-input":  # an integer box drops letters
            assert field.value == PHRASE


async def type_text(pilot, text: str, every: float) -> None:
    """Keys as a terminal sends them when a person types `text`, one each `every` seconds: each
    stamped with its arrival time, as the driver stamps the keys it reads, and posted then (no
    wait for the app in between: a person does not wait either)."""
    from textual import events
    from textual.keys import _character_to_key

    start = time.monotonic()
    for index, char in enumerate(text):
        key = events.Key(_character_to_key(char), char)
        key.time = start + index * every
        await asyncio.sleep(max(0.0, key.time - time.monotonic()))
        pilot.app.post_message(key)
    await pilot.pause()
    await idle(pilot)


@pytest.mark.parametrize("every", [0.0, 0.12], ids=["pasted-fast", "typed-120ms"])
async def test_a_phrase_typed_into_the_tree_goes_to_the_find_box(
    tiny: Path, tmp_path: Path, every: float
) -> None:
    """GIVEN focus on the tree WHEN "the best kernel" is typed at human speed (120 ms a key) or
    arrives at once THEN only its first letter runs (`t` hides the tree; the find box shows it
    again): no export prompt, no mark, no dimming, and the find box holds the whole phrase."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await type_text(pilot, "the best kernel", every)
        assert app.main.tabs.last_export is None and app.screen is app.screen_stack[0]
        assert app.main.tabs.marked_id is None and not app.main.tree_widget.dim_unseen
        assert not app.following and app.main.tabs.active == "hits"
        find = app.query_one("#find-input", Input)
        assert app.focused is find and find.value == "the best kernel"


async def test_typed_text_replaces_the_old_find(tiny: Path) -> None:
    """GIVEN a find for "95e7" WHEN "memory bandwidth" is typed into the tree THEN the find box
    holds "memory bandwidth", not "95e7memory bandwidth"; `m`, the first letter, marked."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await type_text(pilot, "95e7", 0.12)  # 9 is no command: text from the first key
        find = app.query_one("#find-input", Input)
        assert app.focused is find and find.value == "95e7"
        await press(pilot, "enter")
        assert app.focused is app.main.tree_widget and app.main.tree_pane.find_text == "95e7"
        await type_text(pilot, "memory bandwidth", 0.12)
        assert app.focused is find and find.value == "memory bandwidth"
        assert app.main.tabs.marked_id == IDS["R"]  # `m` ran before the phrase showed itself


async def test_single_keys_are_commands_at_once(tiny: Path, tmp_path: Path) -> None:
    """GIVEN the tree WHEN `m` is pressed THEN it marks at once (no wait); moves held down
    (`j` `j`), a move right after a command (`d` `k`) and digit/bracket chains (`2` `]`,
    `[` `3`) are commands, never text."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        assert app.main.tabs.marked_id == IDS["R"]
        await asyncio.sleep(PHRASE_GAP)
        await type_text(pilot, "jj", 0.03)  # held down
        assert app.current_id == IDS["B"]
        await settle_keys(pilot)
        await type_text(pilot, "dk", 0.05)
        assert app.main.tree_widget.dim_unseen and app.current_id == IDS["A"]
        await settle_keys(pilot)
        await type_text(pilot, "2]", 0.05)
        assert app.main.tabs.active == "saw" and app.focused is app.query_one("#saw-pane")
        await settle_keys(pilot)
        await type_text(pilot, "[3", 0.05)
        assert app.main.tabs.active == "core" and app.focused is app.main.tree_widget
        assert not app.query_one("#find-input", Input).display


async def test_export_asks_first_and_only_y_writes(tiny: Path, tmp_path: Path) -> None:
    """GIVEN the tree WHEN `e` then any key but y THEN nothing is written; `e` then y writes."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for other in ("g", "enter", "escape"):
            await press(pilot, "e")
            assert isinstance(app.screen, ConfirmScreen)
            assert "root-" in app.screen.question.plain  # <node short id>-<run short>-<hash>
            await press(pilot, other)
            assert not isinstance(app.screen, ConfirmScreen)
            assert not (tmp_path / "exports").exists()
        await press(pilot, "e", "y")
        assert app.main.tabs.last_export is not None and app.main.tabs.last_export[0].exists()


def test_the_typing_rule_tells_a_phrase_from_commands() -> None:
    """GIVEN the guard at its real gap WHEN keys arrive at chosen times THEN a single key, a
    move after a command, a repeat and letters a pause apart are commands; two different
    letters within the gap, or a key bound to nothing, are text holding the quick run."""
    g = PHRASE_GAP
    guard = TypeAhead()
    assert guard.feed("m", 0.0, bound=True, move=False) is None  # at once
    assert guard.feed("c", 0.0 + 1.5 * g, bound=True, move=False) is None  # a pause apart
    for i in range(5):  # j held down: repeats ~30 ms apart
        assert guard.feed("j", 5.0 + i * 0.03, bound=True, move=True) is None
    guard.forget()
    assert guard.feed("t", 10.0, bound=True, move=False) is None
    assert guard.feed("h", 10.12, bound=True, move=True) is None  # a move: a command
    assert guard.feed("e", 10.24, bound=True, move=False) == ("start", "the")  # no pair
    assert guard.feed(" ", 10.36, bound=True, move=False) == ("more", " ")  # the phrase goes on
    assert guard.feed("n", 20.0, bound=True, move=False) is None
    assert guard.feed("n", 20.1, bound=True, move=False) is None  # a repeat
    assert guard.feed("N", 20.2, bound=True, move=False) is None
    assert guard.feed("2", 30.0, bound=True, move=False) is None
    assert guard.feed("]", 30.05, bound=True, move=False) is None  # tab, then its pane
    assert guard.feed("x", 40.0, bound=False, move=False) == ("start", "x")  # bound to nothing
    assert guard.feed("s", 50.0, bound=True, move=False) is None
    assert guard.feed("e", 50.0 + g / 2, bound=True, move=False) == ("start", "se")


async def test_new_keys_can_be_remapped(tiny: Path, tmp_path: Path, monkeypatch) -> None:
    """GIVEN focus_tree remapped to z and expand to x WHEN pressed THEN they act; x is a move
    now, like l was."""
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    remaps = {"focus_tree": "z", "focus_detail": "ctrl+right", "expand": "x,right"}
    (config_dir / "config.json").write_text(json.dumps({"keys": remaps}), encoding="utf-8")
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+right")
        assert app.focused is app.query_one(HitsPane)  # the root has no hits: no empty table
        await press(pilot, "z")
        assert app.focused is app.main.tree_widget
        await pilot.press("down", "x")
        await pilot.pause()
        assert app.main.tree_widget.cursor_node.is_expanded


async def test_help_explains_every_tree_glyph_and_the_hits_numbers(tiny: Path) -> None:
    """GIVEN the help WHEN opened THEN it names every status glyph (running's is not the tree's
    ▶), the findings glyphs, ✎, the lineage style, and pool, eligible, the window's parts,
    glob and why scores read 0.00 from rank 100; the new keys are in its key table."""
    from ari_mem_tui.render.findings import GLYPHS
    from ari_mem_tui.render.text import STATUS_GLYPHS
    from ari_mem_tui.tui.screens.help import HelpScreen

    assert STATUS_GLYPHS["running"][0] not in ("▶", "▼")
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.source
        for status, (glyph, _) in STATUS_GLYPHS.items():
            assert f"`{glyph}` {status}" in text
        for glyph, _ in GLYPHS.values():
            assert f"`{glyph}`" in text
        for words in (
            "✎3",
            "bold underlined",
            "dim italic",
            "**Pool.**",
            "**Eligible.**",
            "*lineage*",
            "*self*",
            "*other branches*",
            "*react*",
            "*glob*",
            "max(0, 1 − 0.01 × glob)",
            "**0.00**",
            "| `[` |",
            "| `]` |",
            "| `i` |",
            "`l` `→` open",
            "0.3 s",
        ):
            assert words in text, words


async def test_text_pasted_into_the_tree_goes_to_the_find_box(tiny: Path, tmp_path) -> None:
    """GIVEN focus on the tree WHEN text is pasted THEN the find box holds it; nothing fires."""
    from textual import events

    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.post_message(events.Paste("segmentation fault\nmake"))
        await pilot.pause(0.2)
        await idle(pilot)
        _nothing_fired(app, tmp_path)
        find = app.query_one("#find-input", Input)
        assert app.focused is find and find.value == "segmentation fault make"
        await press(pilot, "escape", "slash")  # Esc closes the box; `/` opens it again
        app.post_message(events.Paste("kernel"))
        await pilot.pause(0.2)
        assert find.value == "kernel"  # a new paste replaces the old find


def write_settings(tmp_path: Path, settings: dict) -> None:
    """The config file the app reads (conftest points ARI_MEM_TUI_CONFIG_DIR at tmp_path)."""
    config_dir = tmp_path / "config"
    config_dir.mkdir(exist_ok=True)
    (config_dir / "config.json").write_text(json.dumps(settings), encoding="utf-8")


async def test_q_quits_at_once_by_default(tiny: Path) -> None:
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "q")
        assert not app.is_running


async def test_confirm_quit_asks_first_and_only_y_quits(tiny: Path, tmp_path: Path) -> None:
    """GIVEN `"confirm_quit": true` (lazygit's confirmOnQuit) WHEN q is pressed THEN the app
    asks; any other key (a phrase typed into the wrong window: `quick`) stays, `y` quits."""
    write_settings(tmp_path, {"confirm_quit": True})
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "q")
        assert app.is_running and app.screen.id == "confirm-quit"
        assert "Quit ari-mem-tui?" in app.screen.query_one(Static).render().plain
        await press(pilot, "u")  # `qu…` of a phrase: no
        assert app.is_running and app.screen.id != "confirm-quit"
        assert app.focused is app.main.tree_widget  # back where it was
        await press(pilot, "ctrl+c", "n")
        assert app.is_running
        await press(pilot, "q", "y")
        assert not app.is_running


async def test_confirm_quit_is_off_unless_the_file_says_true(tiny: Path, tmp_path: Path) -> None:
    write_settings(tmp_path, {"confirm_quit": "yes"})  # not a JSON true: off
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "q")
        assert not app.is_running


def help_source(app) -> str:
    from ari_mem_tui.tui.screens.help import HelpScreen

    assert isinstance(app.screen, HelpScreen), f"no help open: {app.screen!r}"
    return app.screen.source


def first_section(source: str) -> str:
    """The help's text up to its second top heading (F1: the focused pane's keys)."""
    return source.split("\n# ", 1)[0]


async def test_f1_shows_the_focused_panes_keys_first(tiny: Path) -> None:
    """GIVEN focus in a pane WHEN F1 is pressed THEN the help opens on that pane's keys (its
    own before the moves), the whole help below; `?` opens the whole help as before."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "f1")
        tree = first_section(help_source(app))
        assert tree.startswith("# Keys of the tree")
        for key in ("`/`", "`f`", "`m`", "`c`", "`e`", "`n`", "`d`", "`j`"):
            assert f"| {key} |" in tree, key
        assert "| `M` |" not in tree and "| `z` |" not in tree  # Hits and tables keys
        assert tree.index("| `/` |") < tree.index("| `j` |")  # its own keys before the moves
        assert "# ari-mem-tui" in help_source(app)  # the whole help follows
        await press(pilot, "f1")  # closes it
        await press(pilot, "right_square_bracket", "f1")  # the hits table
        hits = first_section(help_source(app))
        assert hits.startswith("# Keys of the Hits tab")
        for key in ("`M`", "`a`", "`s`", "`i`", "`z`", "`v`", "`y`", "`[`"):
            assert f"| {key} |" in hits, key
        assert "| `m` |" not in hits  # the tree's keys are not the table's
        assert "| `/` | Filter the table's rows" in hits and "Find a node" not in hits
        await press(pilot, "escape", "4", "f1")
        writes = first_section(help_source(app))
        assert writes.startswith("# Keys of the Writes tab") and "| `w` |" in writes
        await press(pilot, "escape", "2", "f1")
        assert first_section(help_source(app)).startswith("# Keys of the Saw tab")
        await press(pilot, "escape", "question_mark")
        assert help_source(app).startswith("# ari-mem-tui")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_number_key_moves_focus_to_the_new_tab_and_keeps_it(
    tiny: Path, size, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN the hits table focused WHEN 4 is pressed THEN focus goes straight to the Writes
    table and stays. (Moved after a refresh, it went first to a hidden table of the Hits tab,
    which switched the tabs back, and at times ended on nothing: seen at 80×24 in tmux.)"""
    from textual.screen import Screen

    went: list[object] = []
    set_focus = Screen.set_focus

    def spy(screen, widget, *args, **kwargs):
        went.append(widget)
        return set_focus(screen, widget, *args, **kwargs)

    monkeypatch.setattr(Screen, "set_focus", spy)
    app = make_app(tiny)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "right_square_bracket")
        went.clear()
        await press(pilot, "4")
        await pilot.pause(0.3)
        writes = app.query_one("#writes-table")
        assert went == [writes] and app.focused is writes and app.main.tabs.active == "writes"


def _is_empty_table(widget) -> bool:
    return isinstance(widget, VimTable) and (widget.row_count == 0 or widget.has_class("empty"))


async def _tab_round(pilot) -> list:
    """Every widget Tab lands on, round the screen back to where it started."""
    start, seen = pilot.app.focused, []
    for _ in range(len(pilot.app.screen.focus_chain) + 2):
        await press(pilot, "tab")
        seen.append(pilot.app.focused)
        if seen[-1] is start:
            return seen
    pytest.fail(f"Tab did not come round to {start!r}: {seen!r}")


async def _go_to(pilot, node_id: str) -> None:
    pilot.app.main.jump_to(node_id)
    await idle(pilot)
    assert pilot.app.query_one(HitsPane).replay.node_id == node_id


async def test_an_empty_or_folded_hits_table_takes_no_focus(small_ckpt: Path) -> None:
    """GIVEN the root (no hits, no recorded search) WHEN `]`, `M` (an empty missed list) and Tab
    round the screen THEN focus never lands on an empty or folded table: `]` lights the Hits
    pane itself. GIVEN a node with missed entries WHEN its missed list, focused, is folded with
    `M` THEN the focus moves on to another stop of the pane, and Tab passes the list by."""
    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        root = next(iter(app.ckpt.nodes))
        await _go_to(pilot, root)
        await press(pilot, "right_square_bracket")
        assert app.focused is app.query_one(HitsPane)
        assert not any(_is_empty_table(w) for w in await _tab_round(pilot))
        await press(pilot, "M")
        missed = app.query_one("#missed-table", VimTable)
        assert not missed.has_class("empty") and missed.row_count == 0  # shown, empty
        assert missed not in await _tab_round(pilot)
        with_missed = next(nid for nid in app.ckpt.nodes if _replay_missed(app, nid))
        await _go_to(pilot, with_missed)
        assert missed.row_count > 0
        await press(pilot, "right_square_bracket")
        for _ in range(len(app.screen.focus_chain)):
            if app.focused is missed:
                break
            await press(pilot, "tab")
        assert app.focused is missed  # with rows it is a stop
        await press(pilot, "M")  # folded under the focus
        assert app.focused is not missed and not _is_empty_table(app.focused)
        assert app.query_one(HitsPane) in app.focused.ancestors_with_self
        assert missed not in await _tab_round(pilot)


def _replay_missed(app, node_id: str) -> bool:
    from ari_mem_tui.search.replay import replay

    return bool(replay(app.ckpt, node_id, app.run_data.ranker).missed)


async def test_an_empty_writes_or_audit_table_leaves_the_focus_to_its_pane(
    small_ckpt: Path,
) -> None:
    """GIVEN a node without writes WHEN `]` and `4` THEN the Writes pane holds the focus (lit,
    its keys in the footer), not its empty table; `w` (whole run: rows) gives the table the
    focus, `w` again (this node: none) gives it back to the pane. The same for the Audit table
    when an audit finds nothing."""
    from ari_mem_tui.tui.widgets.detail import AuditPane, WritesPane

    app = make_app(small_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        silent = next(n for n in app.ckpt.nodes if not list(app.ckpt.node_writes(n)))
        await _go_to(pilot, silent)
        await press(pilot, "right_square_bracket", "4")
        writes_pane, writes = app.query_one(WritesPane), app.query_one("#writes-table", VimTable)
        assert app.main.tabs.active == "writes" and writes.row_count == 0
        assert app.focused is writes_pane
        assert border_colour(app, WritesPane) != border_colour(app, "#tree-pane")
        assert "w" in shown_keys(app)
        assert writes not in await _tab_round(pilot)
        await press(pilot, "w")
        assert writes.row_count > 0 and app.focused is writes
        await press(pilot, "w")
        assert writes.row_count == 0 and app.focused is writes_pane
        await press(pilot, "6")
        audit = app.query_one("#audit-table", VimTable)
        assert app.focused is audit and audit.row_count > 0
        app.main.audit_pane.set_audit([], "no leaks or scope violations")  # an audit of nothing
        await pilot.pause()
        assert app.focused is app.query_one(AuditPane)
        assert audit not in await _tab_round(pilot)
