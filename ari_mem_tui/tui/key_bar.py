"""The footer: the keys that work where the focus is, in one line.

Textual's Footer makes a widget of every key and builds them all again whenever the focus moves
(and one refresh late): on a shared machine that was a tenth of a second of every `[`, `]` or
Tab (issue 21 §4). This one draws the same keys as one piece of text, at once; a key is still
clickable (it presses the key), and the command palette's key sits at the right end.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
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
        for key, shown, description in self.keys():
            press = Style.from_meta({"@click": f"app.simulate_key({key!r})"})
            line.append(f" {shown} ", key_style + press)
            line.append(f"{description} ", words + press)
        palette = self._palette()
        if palette:
            gap = self.size.width - line.cell_len - palette.cell_len
            if gap > 0:
                line.append(" " * gap)
                line.append_text(palette)
        line.truncate(self.size.width)
        return line

    def _palette(self) -> Text:
        app = self.app
        if not app.ENABLE_COMMAND_PALETTE:
            return Text()
        found = self.screen.active_bindings.get(app.COMMAND_PALETTE_BINDING)
        if found is None:
            return Text()
        key_style = self.get_component_rich_style("key-bar--key", partial=True)
        words = self.get_component_rich_style("key-bar--description", partial=True)
        press = Style.from_meta({"@click": "app.command_palette"})
        return Text.assemble(
            (f" {app.get_key_display(found.binding)} ", key_style + press),
            ("palette ", words + press),
        )
