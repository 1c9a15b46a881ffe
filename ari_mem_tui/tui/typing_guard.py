"""The guard against typing into the wrong window.

Every letter is a command here, so a phrase typed into the wrong window would fire a dozen of
them (`the best kernel`: hide the tree, collapse, export, …). The rule that tells a phrase from
commands, while a single command key still runs at once:

- a printable key that is bound to nothing where the focus is (`u`, `o`, `7`, `.`) is text;
- two different letters within `PHRASE_GAP` of each other are text, unless the second is a
  move (`j k h l g G`, held down to repeat) or the same letter again (`n n`, `N n`): no two
  other commands are pressed that fast on purpose, and typing is faster (120 ms a key at
  human speed, 200 ms for a slow typist);
- pasted text is text.

Text opens the tree's find box holding it, the letters typed quickly before it included (so
`the` arrives whole, though `t` ran), replacing the old find; what follows is typed into the
box. At most the first letter of a phrase runs as a command. Keys with modifiers, Enter, Esc
and arrows are never text. A text box with focus (find, query, limit) takes its letters
itself: they never reach this guard.

The gaps are measured between the keys' arrival times, as the driver stamped them, so a busy app
never takes a phrase for single keys. The guard sees each key in the app's own queue, before the
key is handed to the focused widget:
the widgets each have a queue of their own, so a guard further down would see a phrase typed
quickly split between the tree and the find box, in no certain order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.app import App
from textual.widgets import Input

from ari_mem_tui.tui import keys

PHRASE_GAP = 0.3  # seconds: two letters closer than this (not a move, not a repeat) are typing


@dataclass
class TypeAhead:
    """Decides, key by key, whether a printable key is a command or typed text."""

    gap: float = PHRASE_GAP
    last: float = float("-inf")
    run: str = ""  # the characters of the printable keys pressed in quick succession so far
    typing: bool = False  # a phrase has begun: quick keys after it are more of it

    def feed(self, char: str, now: float, bound: bool, move: bool) -> tuple[str, str] | None:
        """None: the key runs its command. ("start", text): a phrase begins, `text` the quick
        run so far, this key last; ("more", char): the next character of a phrase already
        begun (keys queued before the find box took the focus). `bound`: the key has a command
        where the focus is; `move`: it is a move key."""
        quick = now - self.last < self.gap
        before = self.run[-1] if quick and self.run else ""
        self.last = now
        if quick and self.typing:
            return "more", char
        self.typing = False
        self.run = (self.run if quick else "") + char
        if not bound:
            return self._start()
        if not before or move or char.lower() == before.lower():
            return None
        if not (before.isalpha() and char.isalpha()):
            return None  # `2]`, `]z`: tab and pane keys chain quickly on purpose
        return self._start()

    def _start(self) -> tuple[str, str]:
        text, self.run, self.typing = self.run, "", True
        return "start", text

    def forget(self) -> None:
        """As if the user had paused: the next key starts afresh."""
        self.last, self.run, self.typing = float("-inf"), "", False


class TypingGuard:
    """The app's keys and pastes on their way to the focused widget: text for the find box,
    or on to the widget and the bindings (tui/keys.py). Only on the app's main screen (the
    views over it take their own keys) and never while a text box has the focus."""

    def __init__(self, app: App, gap: float, on_text: Callable[[str, bool], None]) -> None:
        self.app = app
        self.typeahead = TypeAhead(gap)
        # the app opens the find box with the text (True: a new find; False: more of it)
        self.on_text = on_text

    def _watching(self) -> bool:
        app = self.app
        return app.screen is app.screen_stack[0] and not isinstance(app.focused, Input)

    def _is_move(self, key: str) -> bool:
        keymap = getattr(self.app, "keymap", {})
        for key_id in keys.MOVES:
            bound = keys.keys_of(keys.BY_ID[key_id], keymap)
            if key in (k.strip() for k in bound.split(",")):
                return True
        return False

    def takes(self, event: events.Event) -> bool:
        """True when `event` was text and went to the find box (the caller drops it)."""
        if isinstance(event, events.Paste):
            if not self._watching():
                return False
            self.typeahead.forget()
            self.on_text(event.text, True)
            return True
        if not isinstance(event, events.Key):
            return False
        if not event.is_printable or not event.character or not self._watching():
            self.typeahead.forget()  # Enter, Esc, arrows, ctrl+…: a phrase ends there
            return False
        bound = event.key in self.app.screen.active_bindings
        # the key's arrival time (the driver stamps it as the terminal sends it), not now: a
        # key that waited while the app drew the last one still came when it came
        verdict = self.typeahead.feed(event.character, event.time, bound, self._is_move(event.key))
        if verdict is None:
            return False
        self.on_text(verdict[1], verdict[0] == "start")
        return True
