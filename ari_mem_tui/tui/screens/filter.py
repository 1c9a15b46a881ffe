"""`f`: keep only nodes of some statuses and labels (their ancestors stay, dimmed, for shape)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, SelectionList, Static

from ari_mem_tui.model import NODE_LABELS, NODE_STATUSES


@dataclass
class TreeFilter:
    statuses: set[str] = field(default_factory=set)  # empty = any
    labels: set[str] = field(default_factory=set)

    @property
    def active(self) -> bool:
        return bool(self.statuses or self.labels)

    def describe(self) -> str:
        parts = []
        if self.statuses:
            parts.append("status " + "|".join(sorted(self.statuses)))
        if self.labels:
            parts.append("label " + "|".join(sorted(self.labels)))
        return ", ".join(parts) or "none"


class FilterScreen(ModalScreen[TreeFilter | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "apply", "Apply"),
    ]

    def __init__(self, current: TreeFilter) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="filter-box"):
            yield Static("Filter the tree (space toggles, Ctrl+S or Apply)", id="filter-title")
            with Horizontal(id="filter-lists"):
                yield SelectionList[str](
                    *((s, s, s in self.current.statuses) for s in NODE_STATUSES),
                    id="filter-status",
                )
                yield SelectionList[str](
                    *((lb, lb, lb in self.current.labels) for lb in NODE_LABELS),
                    id="filter-label",
                )
            with Horizontal(id="filter-buttons"):
                yield Button("Apply", id="apply", variant="primary")
                yield Button("Clear", id="clear")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#filter-status", SelectionList).border_title = "status"
        self.query_one("#filter-label", SelectionList).border_title = "label"

    def action_apply(self) -> None:
        statuses = set(self.query_one("#filter-status", SelectionList).selected)
        labels = set(self.query_one("#filter-label", SelectionList).selected)
        self.dismiss(TreeFilter(statuses, labels))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.action_apply()
        elif event.button.id == "clear":
            self.dismiss(TreeFilter())
        else:
            self.dismiss(None)
