"""Why a node did (not) see an entry (`Y` on an entry row: Hits, Writes, the entry view, the
Health view's entries): the node's start-up search taken apart step by step, as
`saw NODE --why ENTRY` prints it (search/why.py answers, render/why.py words it).

The node asked about is the marked one when a node is marked (so a hit of another node can be
asked about from there), else the current one; `Y` here asks about the other of the two. The
answer is worked out in a thread worker (one replay of the node's search).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import get_current_worker

from ari_mem_tui.model import Run
from ari_mem_tui.render.text import clean, short_id
from ari_mem_tui.render.why import why_text
from ari_mem_tui.search.why import NodeSearch
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.messages import WhyReady


class WhyScreen(ModalScreen[str | None]):
    """Dismissed with the node to go to (`o`: the node asked about), else None."""

    BINDINGS: ClassVar[list[BindingType]] = [*keys.bindings(keys.WHY), *keys.bindings(keys.VIEW)]

    def __init__(self, run: Run, entry_id: str, node_id: str, other_id: str | None = None):
        super().__init__()
        self.run_data, self.entry_id = run, entry_id
        self.node_id, self.other_id = node_id, other_id
        self.answer = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="why-body"):
            yield Static("", id="why-text")
        yield KeyBar()

    def on_mount(self) -> None:
        self._start()

    def _start(self) -> None:
        self.answer = None
        self.query_one("#why-text", Static).update(
            Text(
                f"why node {short_id(self.node_id)} did or did not see entry "
                f"{clean(self.entry_id, False)}: replaying its start-up search …",
                style="italic",
            )
        )
        self._work(self.node_id)

    @work(thread=True, exclusive=True, group="why", exit_on_error=False, description="why")
    def _work(self, node_id: str) -> None:
        worker = get_current_worker()
        ckpt = self.run_data.checkpoint
        try:
            entry = ckpt.entries_by_id[self.entry_id]
            answer = NodeSearch(ckpt, node_id, self.run_data.ranker).why(entry)
        except Exception as exc:  # noqa: BLE001 - shown, never a crash
            if not worker.is_cancelled:
                self.post_message(WhyReady(None, f"{type(exc).__name__}: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(WhyReady(answer))

    @on(WhyReady)
    def _ready(self, message: WhyReady) -> None:
        message.stop()
        shown = self.query_one("#why-text", Static)
        if message.answer is None:
            shown.update(Text(f"why failed: {clean(message.error, False)}", style="red"))
            return
        self.answer = message.answer
        answer = why_text(message.answer)
        if self.other_id:
            other = f"Y: ask about node {short_id(self.other_id)} instead"
            answer = Group(answer, Text(other, style="bright_black"))
        shown.update(answer)

    def action_switch(self) -> None:
        """`Y`: the same entry, asked about the other node (current ↔ marked)."""
        if not self.other_id:
            self.notify("mark another node (m) to ask about it too")
            return
        self.node_id, self.other_id = self.other_id, self.node_id
        self._start()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_go_to_node(self) -> None:
        self.dismiss(self.node_id)

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("#why-body").results(VerticalScroll), direction)


def ask_why(app: Any, went_to: Callable[[str | None], None]) -> None:
    """`Y`: the why view of the entry under the cursor (each screen's `entry_under_cursor`: an
    entry view's, Health's entries table's, the main screen's focused Hits or Writes row),
    asked about the marked node when one is marked and is not the current, else the current;
    `went_to` gets the node `o` goes to."""
    under = getattr(app.screen, "entry_under_cursor", None)
    run, entry_id = app.run_data, under() if under is not None else None
    if run is None or entry_id is None or entry_id not in run.checkpoint.entries_by_id:
        app.notify("no memory entry under the cursor: a row of Hits or Writes, or an entry")
        return
    current, marked = app.current_id, app.main.tabs.marked_id
    if not current and not marked:
        app.notify("choose a node first", severity="warning")
        return
    asked, other = (marked, current) if marked and marked != current else (current, marked)
    app.push_screen(
        WhyScreen(run, entry_id, asked or "", other if other != asked else None), went_to
    )
