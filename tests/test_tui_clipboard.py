"""`y` copies by OSC 52 what is safe to paste (render.text.paste_safe, tested with the hostile
strings), and says how, or why it cannot arrive."""

from __future__ import annotations

from pathlib import Path

import pytest

from ari_mem_tui.render.text import paste_safe
from ari_mem_tui.tui import clipboard
from ari_mem_tui.tui.clipboard import route
from tests.tui_app_helpers import cursor_to_write, make_app, press, settle
from tests.tui_helpers import HOSTILE, IDS


def test_the_route_says_when_osc52_cannot_arrive() -> None:
    """GIVEN a plain terminal, tmux with each set-clipboard value, GNU screen WHEN the route is
    asked THEN only a plain terminal and tmux with `on` pass it, and the others say why."""
    assert route({}).arrives and "OSC 52" in route({}).how
    assert route({"TMUX": "/tmp/tmux-0/default,1,0"}, "on").arrives
    for option in ("external", "off", ""):
        way = route({"TMUX": "/tmp/tmux-0/default,1,0"}, option)
        assert not way.arrives
        assert "set-clipboard on" in way.how and f"set-clipboard {option or 'unknown'}" in way.how
    assert not route({"STY": "1234.pts-0.host"}).arrives


@pytest.mark.parametrize("tmux", [None, "on", "external"])
async def test_y_copies_and_says_how(
    tiny: Path, monkeypatch: pytest.MonkeyPatch, tmux: str | None
) -> None:
    """GIVEN the node A's hostile note under the cursor of the Writes table, in a plain
    terminal or in tmux WHEN `y` is pressed THEN the clipboard gets the text with its escape
    shown as a symbol, and the toast says it went by OSC 52, or, in tmux without
    set-clipboard on, that it may not arrive and how to let it."""
    monkeypatch.delenv("STY", raising=False)
    if tmux is None:
        monkeypatch.delenv("TMUX", raising=False)
    else:
        monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
        monkeypatch.setattr(clipboard, "tmux_set_clipboard", lambda: tmux)
    app = make_app(tiny)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        await press(pilot, "j", "4")  # node A, which wrote the hostile note; Writes tab
        await cursor_to_write(pilot, HOSTILE)
        await press(pilot, "y")
        assert app.clipboard == paste_safe(HOSTILE)[0] and "\x1b" not in app.clipboard
        messages = [n.message for n in app._notifications]
        said = next(m for m in messages if "metrics=[red]x[/red]" in m)
        if tmux == "external":
            assert "may not reach the clipboard" in said and "set-clipboard on" in said
        else:
            assert said.startswith("copied ") and "OSC 52" in said
        await press(pilot, "g", "y")  # on the table's first row: A's own first note
        assert app.clipboard == app.ckpt.node_writes(IDS["A"])[0].text
