"""The footer: the keys that work where the focus is, in one line.

Textual's Footer makes a widget of every key and builds them all again whenever the focus moves
(and one refresh late): on a shared machine that was a tenth of a second of every `[`, `]` or
Tab (issue 21 §4). This one draws the same keys as one piece of text, at once; a click on a key
still presses it, and the command palette's key sits at the right end.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget


class KeyBar(Widget):
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description"}  # noqa: RUF012 - Textual's
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        & > .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._spans: list[tuple[int, int, str]] = []  # (from, to, key): what a click presses

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if screen is self.screen:
            self.refresh()

    def keys(self) -> list[tuple[str, str, str]]:
        """(key, as shown, description) of each action shown, its first key, in order."""
        seen: set[str] = set()
        out = []
        for _, binding, _, _ in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            out.append((binding.key, self.app.get_key_display(binding), binding.description))
        return out

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key", partial=True)
        words = self.get_component_rich_style("key-bar--description", partial=True)
        line = Text(no_wrap=True, overflow="ellipsis")
        self._spans = []
        for key, shown, description in self.keys():
            start = line.cell_len
            line.append(f" {shown} ", key_style)
            line.append(f"{description} ", words)
            self._spans.append((start, line.cell_len, key))
        palette = self._palette()
        if palette is not None:
            shown, key = palette
            tail = Text.assemble((f" {shown} ", key_style), ("palette ", words))
            gap = self.size.width - line.cell_len - tail.cell_len
            if gap > 0:
                line.append(" " * gap)
                self._spans.append((line.cell_len, line.cell_len + tail.cell_len, key))
                line.append_text(tail)
        line.truncate(self.size.width)
        return line

    def _palette(self) -> tuple[str, str] | None:
        """(as shown, key) of the command palette's key, when it is bound here."""
        app = self.app
        if not app.ENABLE_COMMAND_PALETTE:
            return None
        found = self.screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
        if found is None:
            return None
        return app.get_key_display(found.binding), found.binding.key

    def on_click(self, event: events.Click) -> None:
        """A click on a key presses it, as Textual's Footer does."""
        for start, end, key in self._spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
