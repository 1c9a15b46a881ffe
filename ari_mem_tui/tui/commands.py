"""Command palette: every app action, and "jump to node" for every node of the run."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from ari_mem_tui.render.text import clean, preview

if TYPE_CHECKING:
    from ari_mem_tui.tui.app import AriMemApp

# (title, help, action) — the registry of actions the palette offers
ACTIONS: list[tuple[str, str, str]] = [
    ("Help", "Concepts (ancestor scope, window, rank score, CoW) and keys", "help"),
    ("Find node", "Find a node by id or text (/)", "find"),
    ("Find next", "Next find match (n)", "find_next"),
    ("Find previous", "Previous find match (N)", "find_prev"),
    ("Filter tree", "Keep nodes of some statuses / labels (f)", "filter"),
    ("Clear filter", "Show every node again", "clear_filter"),
    ("Memory health", "Starved nodes, crowded windows, entries never read (H)", "health"),
    ("Runs of the workspace", "Back to the run picker of the workspace (W)", "runs"),
    ("Dim unseen nodes", "Dim the nodes the selection's search could not see (d)", "toggle_dim"),
    ("Mark node", "Mark the current node for compare (m)", "mark"),
    ("Compare with marked", "Side by side with the marked node (c)", "compare"),
    ("Show missed entries", "Eligible ancestor entries outside the window (M)", "toggle_missed"),
    (
        "Pool: as of start / today",
        "Rank the pool as of the node's start (default) or today's, later writes too (a)",
        "toggle_as_of",
    ),
    (
        "Query: at start / now / custom",
        "Search with the eval_summary at start, the eval_summary now, or your own query (s)",
        "cycle_query",
    ),
    ("Writes: node / whole run", "Switch the Writes tab's scope (w)", "toggle_writes_scope"),
    ("Copy", "Copy the node id or the entry under the cursor (y)", "copy"),
    ("Export dossier", "Write the node's dossier as Markdown + JSON (e)", "export"),
    ("Reload", "Re-read the checkpoint (r)", "reload"),
    ("Follow", "Follow a running checkpoint: re-read changed files (F)", "toggle_follow"),
    ("Toggle tree pane", "Hide or show the tree (t)", "toggle_tree"),
    ("Hits tab", "Ranked ancestor-only hits (1)", "tab('hits')"),
    ("Saw tab", "Context tiers as received (2)", "tab('saw')"),
    ("Core tab", "persona / human / ari_context (3)", "tab('core')"),
    ("Writes tab", "Copy-on-write log (4)", "tab('writes')"),
    ("Node tab", "Status, metrics, lineage (5)", "tab('node')"),
    ("Audit tab", "Problems, leaks, scope violations (6)", "tab('audit')"),
    ("Quit", "Leave (q)", "quit"),
]


class ActionCommands(Provider):
    """The app's actions."""

    @property
    def _app(self) -> AriMemApp:
        return self.app  # type: ignore[return-value]

    def _items(self) -> Iterator[tuple[str, str, str]]:
        yield from ACTIONS

    async def discover(self) -> Hits:
        for title, help_text, action in self._items():
            yield DiscoveryHit(title, partial(self._app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._items():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self._app.run_action, action),
                    help=help_text,
                )


class NodeCommands(Provider):
    """Jump to any node by id suffix, name or label."""

    MAX_HITS = 50

    async def search(self, query: str) -> Hits:
        app: AriMemApp = self.app  # type: ignore[assignment]
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
