"""Command palette: every app action (from the key registry, tui/keys.py), and "jump to node"
for every node of the run."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any, Protocol, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.opening import nodes_matching
from ari_mem_tui.render.text import clean, preview
from ari_mem_tui.tui import keys


class Jumper(Protocol):
    def jump_to(self, node_id: str) -> None: ...


class PaletteApp(Protocol):
    """What the palette needs of the app (tui/app.py imports this module, not the reverse)."""

    keymap: Mapping[str, str]
    main: Jumper  # the main screen (tui/main_screen.py)

    @property
    def ckpt(self) -> Checkpoint | None: ...


# (title, help, action) of every action the palette offers, with the default keys
ACTIONS: list[tuple[str, str, str]] = [
    (title, help_text, action) for _, title, help_text, action in keys.palette_actions({})
]


class ActionCommands(Provider):
    """The app's actions."""

    def _items(self) -> Iterator[tuple[str, str, Callable[[], Any]]]:
        """From the key registry, with the keys the user has (their remaps applied); a pane's
        action runs on the main screen (keys.MAIN), whatever view the palette was opened on."""
        app = self.app
        main = getattr(app, "main", app)
        for key_id, title, help_text, action in keys.palette_actions(getattr(app, "keymap", {})):
            target = main if keys.owner(keys.BY_ID[key_id]) == "screen" else app
            yield title, help_text, partial(app.run_action, action, target)

    async def discover(self) -> Hits:
        for title, help_text, run in self._items():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._items():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)


class NodeCommands(Provider):
    """Jump to any node by id or text (k9s's `:`): the nodes the tree's find finds, by id
    first, then by name, direction, eval_summary or label (render/opening.py)."""

    MAX_HITS = 50

    async def search(self, query: str) -> Hits:
        app = cast(PaletteApp, self.app)
        ckpt = app.ckpt
        needle = query.strip().removeprefix("jump ").strip()
        if ckpt is None or len(needle) < 2:
            return
        for rank, node_id in enumerate(nodes_matching(ckpt, needle)[: self.MAX_HITS]):
            node = ckpt.nodes[node_id]
            title = f"jump {node.short_id} {node.label or ''} {preview(node.name or '', 40)}"
            # by id first, then by text, each in tree.json's order (scores above every
            # action's fuzzy match of a few letters)
            score = 1.0 - rank / (2 * self.MAX_HITS)
            # node data is never markup: a Text prompt is shown as-is, the help is escaped
            yield Hit(
                score,
                _lit(title, needle),
                partial(app.main.jump_to, node.id),
                text=title,
                help=escape(clean(node.id, multiline=False) + _where(node, needle)),
            )


def _lit(title: str, needle: str) -> Text:
    """The title as literal text (never markup: the fuzzy highlighter parses it), the needle
    bold where the title holds it."""
    text = Text(title)
    at = title.lower().find(needle.lower())
    if at >= 0:
        text.stylize("bold reverse", at, at + len(needle))
    return text


def _where(node, needle: str) -> str:
    """Where a text match was found: ` · direction: …the words around it…`."""
    if needle.lower() in node.id.lower():
        return ""
    for name in ("name", "original_direction", "eval_summary", "label"):
        value = getattr(node, name, None) or ""
        at = value.lower().find(needle.lower())
        if at >= 0:
            start = max(0, at - 20)
            return f" · {name}: " + preview(value[start:], 70)
    return ""
