"""Command palette: every app action (from the key registry, tui/keys.py), and "jump to node"
for every node of the run."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import Protocol, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.text import clean, preview
from ari_mem_tui.tui import keys


class PaletteApp(Protocol):
    """What the palette needs of the app (tui/app.py imports this module, not the reverse)."""

    keymap: Mapping[str, str]

    @property
    def ckpt(self) -> Checkpoint | None: ...

    def jump_to(self, node_id: str) -> None: ...


# (title, help, action) of every action the palette offers, with the default keys
ACTIONS: list[tuple[str, str, str]] = [
    (title, help_text, action) for _, title, help_text, action in keys.palette_actions({})
]


class ActionCommands(Provider):
    """The app's actions."""

    def _items(self) -> Iterator[tuple[str, str, str]]:
        """From the key registry, with the keys the user has (their remaps applied)."""
        for _, title, help_text, action in keys.palette_actions(getattr(self.app, "keymap", {})):
            yield title, help_text, action

    async def discover(self) -> Hits:
        for title, help_text, action in self._items():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._items():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self.app.run_action, action),
                    help=help_text,
                )


class NodeCommands(Provider):
    """Jump to any node by id suffix, name or label."""

    MAX_HITS = 50

    async def search(self, query: str) -> Hits:
        app = cast(PaletteApp, self.app)
        ckpt = app.ckpt
        query = query.strip()
        if ckpt is None or len(query) < 2:
            return
        matcher = self.matcher(query)
        found = 0
        lowered = query.lower()
        for node in ckpt.nodes.values():
            title = f"jump {node.short_id} {node.label or ''} {preview(node.name or '', 40)}"
            # cheap prefilter: a full fuzzy match over 10k nodes per key would lag
            if lowered.split()[-1] not in title.lower():
                continue
            score = matcher.match(title)
            if score <= 0:
                continue
            found += 1
            # node data is never markup: a Text prompt is shown as-is, the help is escaped
            yield Hit(
                score,
                Text(title),
                partial(app.jump_to, node.id),
                text=title,
                help=escape(clean(node.id, multiline=False)),
            )
            if found >= self.MAX_HITS:
                return
