"""Toasts carry run data (ids, entry text, server errors): rendered, they must show it literally.

Each test lets the toast reach the screen (headless `run_test` without a refresh never renders
it, which is how a markup crash once slipped through) and reads the rendered Toast back.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets._toast import Toast

from ari_mem_tui.tui.app import AriMemApp
from tests.tui_app_helpers import cursor_to_write, make_app, press, settle
from tests.tui_helpers import HOSTILE, write_tiny_checkpoint

NASTY = "boom [/] [bold]x[/bold] [@click=app.quit]quit[/] [/x]"


async def _toast_texts(pilot) -> list[str]:
    await pilot.pause(0.1)
    await pilot.pause()
    return [str(toast.render()) for toast in pilot.app.screen.query(Toast)]


async def test_a_load_error_with_markup_shows_literally_and_does_not_quit(tmp_path: Path) -> None:
    def opener(_progress):
        raise OSError(NASTY)

    app = AriMemApp(opener, theme="textual-dark", remember_theme=False, blink=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        texts = await _toast_texts(pilot)
        assert any(NASTY in text for text in texts), texts
        assert app.is_running  # the [@click=app.quit] was text, not an action
        await press(pilot, "6")  # the Audit row holds it too, and the app keeps going
        assert app.query_one("#tabs").active == "audit"


async def test_copying_bracketed_entry_text_shows_it_literally(tmp_path: Path) -> None:
    ckpt = write_tiny_checkpoint(tmp_path / "tiny")
    app = make_app(ckpt)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        await press(pilot, "j", "4")  # node A, which wrote the hostile note; Writes tab
        await cursor_to_write(pilot, HOSTILE)
        await press(pilot, "y")
        # the markup stays literal; the ESC a paste would run is copied as its symbol
        assert app.last_copied == HOSTILE.replace("\x1b", "␛")
        texts = await _toast_texts(pilot)
        assert any("copied metrics=[red]x[/red]" in text for text in texts), texts
        assert any("1 control character shown as symbols" in text for text in texts), texts
        assert app.is_running


async def test_a_node_id_with_markup_can_be_marked(tmp_path: Path) -> None:
    ckpt = write_tiny_checkpoint(tmp_path / "tiny")
    app = make_app(ckpt)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        app.current_id = "node_[/]_[bold]x"  # an id as a hostile tree.json may hold
        await press(pilot, "m")
        texts = await _toast_texts(pilot)
        assert any("marked" in text and "[bold]x" in text for text in texts), texts
