"""A yes/no question answered with one key: `y` says yes, any other key (Enter, Esc, a letter
of a phrase typed into the wrong window) says no. Used before `e` writes files, and before `q`
quits when the config file asks for it (`"confirm_quit": true`)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    def __init__(self, question: Text, **kwargs) -> None:
        super().__init__(**kwargs)
        self.question = question

    def compose(self) -> ComposeResult:
        body = Text.assemble(
            self.question, "\n\n", ("y", "bold"), ": yes · any other key: no", style=""
        )
        yield Static(body, id="confirm-box")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self.dismiss(event.key == "y")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.dismiss(False)


def ask(
    app: App,
    question: Text,
    yes: Callable[[], object],
    no: Callable[[], object] | None = None,
    id: str | None = None,
) -> None:
    """Ask `question` over whatever is shown: `yes()` on `y`, `no()` (when given) on any other
    key."""

    def answered(said_yes: bool | None) -> None:
        if said_yes:
            yes()
        elif no is not None:
            no()

    app.push_screen(ConfirmScreen(question, id=id), answered)
