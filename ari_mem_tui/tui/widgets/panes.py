"""The two panes (tree, detail tabs) side by side, the tree folding away on narrow screens, and
the guard against typing into them.

Every letter is a command here, so a phrase typed or pasted into the wrong window would fire a
dozen of them (`segmentation fault`: query source, export, top, mark, …). Printable keys that
arrive in a burst (a paste, or typing faster than a person presses single keys: under
`BURST_GAP` apart) are therefore text: they open the tree's find box holding what was typed.
To tell a burst from a single key, a command letter waits `BURST_GAP` before it fires; the
moves (j k h l g G, which people hold down to repeat) fire at once and join a burst only as
its first letters. Keys with modifiers, Enter, Esc, arrows are never held. A text box with
focus (find, query, limit) takes its letters itself: they never reach this guard.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from textual import events
from textual.containers import Horizontal
from textual.widget import Widget

from ari_mem_tui.tui import keys

BURST_GAP = 0.04  # seconds: printable keys closer than this are typing, not commands
DRAWER_BELOW = 100  # columns: narrower, the tree folds away while the tabs have focus
INSTANT = keys.MOVES  # key ids whose keys fire at once (held down, they repeat faster)


@dataclass
class TypeAhead:
    """Decides, key by key, whether a printable key is a command or part of typed text.

    `feed` returns ("fire", "") to let the key run now, ("hold", "") to hold it for `gap`
    (then `flush` gives it back to run), or ("text", s) when a burst starts (s: everything
    typed so far) or goes on (s: this key's character)."""

    gap: float = BURST_GAP
    last: float = float("-inf")
    recent: str = ""  # characters of instant keys that fired just before (a burst's start)
    held: list[tuple[str, str]] = field(default_factory=list)  # (key, character)
    typing: bool = False

    def feed(self, key: str, char: str, now: float, instant: bool) -> tuple[str, str]:
        quick = now - self.last < self.gap
        self.last = now
        if quick and self.typing:
            return "text", char
        self.typing = False
        if quick and (self.held or (self.recent and not instant)):
            text = self.recent + "".join(c for _, c in self.held) + char
            self.held.clear()
            self.recent, self.typing = "", True
            return "text", text
        if not quick:
            self.recent = ""
        if instant:
            self.recent += char
            return "fire", ""
        self.held.append((key, char))
        return "hold", ""

    def flush(self) -> list[str]:
        """The held keys, to run as commands now (their burst never came)."""
        out = [key for key, _ in self.held]
        self.held.clear()
        return out

    def forget(self) -> None:
        """As if `gap` had passed since the last key."""
        self.last, self.recent, self.typing = float("-inf"), "", False


class Panes(Horizontal):
    """Holds the tree and the tabs; printable keys pass through `TypeAhead` on their way up to
    the bindings (tui/keys.py). Below DRAWER_BELOW columns the tree is a drawer: folded away
    while focus is in the tabs, so their tables get the width; `t` (or focus back in the tree)
    opens it."""

    def __init__(self, *, gap: float = BURST_GAP, on_text: Callable[[str], None], **kwargs):
        super().__init__(**kwargs)
        self.typeahead = TypeAhead(gap)
        self.on_text = on_text  # the app opens the find box with the typed text

    # ---- the tree as a drawer ----

    @property
    def _tree_and_tabs(self) -> tuple[Widget, Widget]:
        return self.query_one("#tree-pane"), self.query_one("#tabs")

    def on_descendant_focus(self) -> None:
        self.fit_tree()

    def on_resize(self) -> None:
        self.fit_tree()

    def fit_tree(self) -> None:
        if self.app.screen is not self.screen:
            return  # a view over the app (an entry, help): the panes stay as they were
        tree, tabs = self._tree_and_tabs
        focused = self.screen.focused
        in_tabs = focused is not None and tabs in focused.ancestors_with_self
        tree.set_class(self.app.size.width < DRAWER_BELOW and in_tabs, "-drawer")

    def toggle_tree(self) -> None:
        """`t`: hide or show the tree; folded away as a drawer, open it on the tree."""
        tree, tabs = self._tree_and_tabs
        if tree.has_class("-drawer"):
            tree.remove_class("-drawer")
            tree.display = True
            tree.query_one("#tree").focus()
            return
        tree.display = not tree.display
        if not tree.display:
            tabs.focus()

    # ---- the guard against typed text ----

    def _instant(self, key: str) -> bool:
        keymap = getattr(self.app, "keymap", {})
        for key_id in INSTANT:
            bound = keys.keys_of(keys.BY_ID[key_id], keymap)
            if key in (k.strip() for k in bound.split(",")):
                return True
        return False

    async def on_key(self, event: events.Key) -> None:
        if not event.is_printable or not event.character:
            return  # Enter, Esc, arrows, ctrl+…
        now = time.monotonic()
        if self.typeahead.held and now - self.typeahead.last >= self.typeahead.gap:
            await self._run(self.typeahead.flush())  # its timer is late: it comes first
        verdict, text = self.typeahead.feed(
            event.key, event.character, now, self._instant(event.key)
        )
        if verdict == "fire":
            return  # on to the bindings
        event.stop()
        event.prevent_default()
        if verdict == "hold":
            self.set_timer(self.typeahead.gap, self.flush)
        else:
            self.on_text(text)

    def on_paste(self, event: events.Paste) -> None:
        """Pasted text is never commands: it goes to the find box."""
        event.stop()
        self.on_text(event.text)

    async def flush(self) -> None:
        """Run the held keys (called `gap` after a key when no burst followed)."""
        if time.monotonic() - self.typeahead.last < self.typeahead.gap:
            return  # a later key restarted the wait; its own timer flushes
        await self._run(self.typeahead.flush())

    async def _run(self, held: list[str]) -> None:
        for key in held:
            self.app.call_next(self._replay, key)

    def _replay(self, key: str) -> None:
        """Press `key` again, as a command: a Key event posted to the app (public API, what
        `App.simulate_key` does) takes the path a real key takes (priority bindings, the focused
        widget, then the bindings from focus up). Run in the app's task (`call_next`): a key
        posted from this widget's task would stop bubbling here ("parent is sender") and never
        reach the bindings. It carries no character, so `on_key` lets it through instead of
        holding it again (`simulate_key` would give a one-letter key its character back)."""
        event = events.Key(key, None)
        event.character = None
        self.app.post_message(event)

    @property
    def holding(self) -> bool:
        return bool(self.typeahead.held)

    async def settle(self) -> None:
        """Tests: behave as if the user paused after the last key (run what is held, forget)."""
        await self._run(self.typeahead.flush())
        self.typeahead.forget()
