"""The bottom status line: source, embedder (with a progress bar while vectors are computed),
problem count and follow state."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from ari_mem_tui.render.text import preview


class StatusBar(Horizontal):
    def compose(self) -> ComposeResult:
        yield Static("", id="status-source")
        yield Static("", id="status-embedder")
        yield ProgressBar(total=None, show_eta=False, id="status-progress")
        yield Static("", id="status-problems")
        yield Static("", id="status-follow")

    def on_mount(self) -> None:
        self.query_one("#status-progress").display = False

    def set_source(self, label: str) -> None:
        self.query_one("#status-source", Static).update(Text(preview(label, 60), style="bold"))

    def set_embedder(self, name: str, note: str = "") -> None:
        text = Text.assemble(("embedder ", "bright_black"), (preview(name, 30), "cyan"))
        if note:
            text.append(" " + preview(note, 40), style="yellow")
        self.query_one("#status-embedder", Static).update(text)

    def set_progress(self, done: int, total: int) -> None:
        bar = self.query_one("#status-progress", ProgressBar)
        finished = total <= 0 or done >= total
        bar.display = not finished
        if not finished:
            bar.update(total=total, progress=done)

    def set_problems(self, count: int, findings: int = 0) -> None:
        label = Text(
            f"{count} problem{'s' if count != 1 else ''}", style="bold red" if count else "green"
        )
        if findings:
            label.append(f" · {findings} finding{'s' if findings != 1 else ''}", style="yellow")
        self.query_one("#status-problems", Static).update(label)

    def set_follow(self, on: bool) -> None:
        text = Text("● following", style="bold green") if on else Text("")
        self.query_one("#status-follow", Static).update(text)
