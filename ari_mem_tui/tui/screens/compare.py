"""`m` then `c`: two nodes' hits and context side by side, aligned at their common ancestor."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.text import clean, preview, short_id
from ari_mem_tui.render.words import pool_words, ranker_short, shared_memory_words
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar


def lineage_text(ckpt: Checkpoint, node_id: str, common: str | None) -> Text:
    lineage = ckpt.lineage(node_id)
    start = lineage.index(common) if common in lineage else 0
    out = Text()
    for position, nid in enumerate(lineage[start:]):
        if position:
            out.append(" › ", style="bright_black")
        out.append(
            short_id(nid), style="bold" if nid == node_id else ("cyan" if nid == common else "")
        )
    return out


def side_text(replay: Replay, other: Replay, side: str) -> Text:
    """One side: hits then tiers; what the other side lacks is marked `◆ only <side>`."""
    other_ids = {h.entry_id for h in other.hits}
    other_lines = {line.text for tier in other.tiers for line in tier.lines}
    out = Text()
    out.append(f"Hits ({len(replay.hits)})  ", style="bold")
    out.append(f"query: {preview(replay.query, 60)}\n", style="bright_black")
    out.append(
        f"{pool_words(replay)} · {clean(ranker_short(replay), False)}\n", style="bright_black"
    )
    if not replay.hits:
        out.append("  no hits\n", style="italic")
    for hit in replay.hits:
        unique = hit.entry_id not in other_ids
        out.append("◆ " if unique else "  ", style=f"bold {'yellow' if side == 'A' else 'magenta'}")
        out.append(f"{hit.rank:>2} g{hit.global_rank:<3} {hit.score:.2f} {short_id(hit.node_id)} ")
        out.append(preview(hit.text, 120) + "\n", style="" if unique else "bright_black")
    out.append("\nSaw\n", style="bold")
    for tier in replay.tiers:
        badge = "exact" if tier.exact else "approx."
        out.append(f"Tier {tier.key} {clean(tier.title, False)} [{badge}] ", style="cyan")
        out.append(f"{len(tier.lines)} lines\n", style="bright_black")
        for line in tier.lines:
            unique = line.text not in other_lines
            out.append(
                "◆ " if unique else "  ", style="bold yellow" if side == "A" else "bold magenta"
            )
            out.append(preview(line.text, 120), style="" if unique else "bright_black")
            out.append(" ✂\n" if line.truncated else "\n", style="red")
    return out


class CompareScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,c", "close", "Back"),
        *keys.bindings(keys.VIEW),
        # both sides move together (the columns take no focus, so no key moves one alone)
        Binding("pagedown,space", "scroll('page_down')", "Page down", show=False),
        Binding("pageup", "scroll('page_up')", "Page up", show=False),
        Binding("g,home", "scroll('home')", "Top", show=False),
        Binding("G,end", "scroll('end')", "Bottom", show=False),
    ]

    def __init__(self, ckpt: Checkpoint, a: Replay, b: Replay) -> None:
        super().__init__()
        self.ckpt, self.a, self.b = ckpt, a, b

    def compose(self) -> ComposeResult:
        yield Static(self._head(), id="compare-head")
        with Horizontal(id="compare-cols"):
            for side in ("A", "B"):
                column = VerticalScroll(classes="compare-col", id=f"compare-{side.lower()}")
                column.can_focus = False  # the screen's keys scroll both sides together
                with column:
                    yield Static(self._title(side), classes="compare-title")
                    yield Static(self._body(side), classes="compare-body")
        yield KeyBar()

    def show(self, ckpt: Checkpoint, a: Replay, b: Replay) -> None:
        """Another pair in this screen, built once (app: installed as "compare"): composing and
        styling a new screen, and laying it out twice as it is first shown, cost most of `c`."""
        self.ckpt, self.a, self.b = ckpt, a, b
        self.query_one("#compare-head", Static).update(self._head())
        for side in ("A", "B"):
            column = self.query_one(f"#compare-{side.lower()}", VerticalScroll)
            column.query_one(".compare-title", Static).update(self._title(side))
            column.query_one(".compare-body", Static).update(self._body(side))
            column.scroll_home(animate=False)

    def _head(self) -> Text:
        a, b = self.a.node_id, self.b.node_id
        common = self.ckpt.common_ancestor(a, b)
        head = Text("Compare  ", style="bold")
        if common is None:
            head.append("no common ancestor (different roots)", style="yellow")
        else:
            head.append("common ancestor ")
            head.append(short_id(common), style="bold cyan")
            shared = self.ckpt.lineage(common)
            head.append(f" (depth {len(shared) - 1}; shared lineage: ")
            head.append(" › ".join(short_id(n) for n in shared), style="bright_black")
            head.append(")")
        head.append(f"\n{shared_memory_words(self.ckpt, a, b)}", style="bright_black")
        head.append("\n◆ marks what only that side has", style="bright_black")
        return head

    def _title(self, side: str) -> Text:
        mine = self.a if side == "A" else self.b
        common = self.ckpt.common_ancestor(self.a.node_id, self.b.node_id)
        title = Text(
            f"{side} (marked) " if side == "A" else f"{side} (current) ", style="bold reverse"
        )
        title.append("  ")
        title.append_text(lineage_text(self.ckpt, mine.node_id, common))
        return title

    def _body(self, side: str) -> Text:
        mine, other = (self.a, self.b) if side == "A" else (self.b, self.a)
        return side_text(mine, other, side)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query(".compare-col").results(VerticalScroll), direction)
