"""`m` then `c`: two nodes' hits and context side by side, aligned at their common ancestor
(the same words as `ari-mem-tui compare`, render/compare.py)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.compare import compare_head, lineage_text, side_text
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar


class CompareScreen(Screen[None]):
    # Esc closes; j / k and the pages move both sides together (the columns take no focus)
    BINDINGS: ClassVar[list[BindingType]] = [
        *keys.bindings(keys.COMPARE),
        *keys.bindings(keys.VIEW),
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
        return compare_head(self.ckpt, self.a.node_id, self.b.node_id)

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
