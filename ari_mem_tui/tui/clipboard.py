"""`y`: copy to the terminal's clipboard, and say truthfully whether it can arrive.

A terminal program has one way to the clipboard: the OSC 52 escape sequence, which the terminal
(if it allows it) turns into a clipboard write. Textual's `copy_to_clipboard` sends it. In tmux
it arrives only with `set-clipboard on`: tmux's default, `external`, drops the sequence when a
program inside sends it, and GNU screen never passes it on. So the toast names the route, and
says when the copy cannot arrive and what would let it.

What is copied is what is safe to paste (`render.text.paste_safe`): a memory text may hold
escape sequences that a shell or an editor would run when pasted, so control characters are
copied as the visible symbols the panes show, and lone surrogates, which no UTF-8 clipboard
holds, likewise; the toast says how many were replaced.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from typing import NamedTuple

from textual.app import App

from ari_mem_tui.render.text import paste_safe, preview
from ari_mem_tui.render.words import plural


class Route(NamedTuple):
    arrives: bool  # False: the terminal in between drops OSC 52
    how: str  # for the toast


@cache
def tmux_set_clipboard() -> str:
    """tmux's `set-clipboard` option ("on", "external", "off"), or "" when it cannot be read."""
    tmux = shutil.which("tmux")
    if tmux is None:
        return ""
    try:
        done = subprocess.run(
            [tmux, "show-options", "-gv", "set-clipboard"],
            capture_output=True,
            text=True,
            timeout=1.0,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def route(env: Mapping[str, str], tmux_option: str = "") -> Route:
    """How an OSC 52 sequence sent from here reaches the clipboard, from the environment (and
    tmux's `set-clipboard`, when inside tmux)."""
    if env.get("TMUX"):
        if tmux_option == "on":
            return Route(True, "by OSC 52 through tmux (set-clipboard on)")
        option = tmux_option or "unknown"
        return Route(
            False,
            f"tmux drops OSC 52 from programs (set-clipboard {option}); "
            "`tmux set -g set-clipboard on` lets it through",
        )
    if env.get("STY"):
        return Route(False, "GNU screen does not pass OSC 52 on")
    return Route(True, "by OSC 52 (if the terminal allows programs to set the clipboard)")


def copy_text(app: App, text: str, what: str = "") -> str:
    """Send `text`, made safe to paste, to the clipboard and return what was sent; the toast
    names it (`what`, else its start), says what was replaced, and how it was sent or why it
    cannot arrive."""
    safe, changed = paste_safe(text)
    app.copy_to_clipboard(safe)
    inside_tmux = bool(os.environ.get("TMUX"))
    way = route(os.environ, tmux_set_clipboard() if inside_tmux else "")
    shown = what or preview(safe, 40)
    if changed:
        shown += f" ({plural(changed, 'control character')} shown as symbols: not safe to paste)"
    if way.arrives:
        app.notify(f"copied {shown}\n{way.how}")
    else:
        app.notify(f"{shown} may not reach the clipboard: {way.how}", severity="warning")
    return safe
