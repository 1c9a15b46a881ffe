"""`f`: keep only nodes of some statuses and labels (their ancestors stay, dimmed, for shape).

A status or label left unchecked in a list that has none checked is not a filter: nothing
checked means every one. Checked options show a ✓, unchecked ones nothing (Textual's own list
draws a dim X on both, which reads as "excluded")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Button, SelectionList, Static

from ari_mem_tui.model import NODE_LABELS, NODE_STATUSES
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar


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


class CheckList(SelectionList[str]):
    """A list of options to check: j / k move, space toggles, ✓ marks the checked ones."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.CHECKLIST)

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        segments = list(line)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except Exception:  # noqa: BLE001 - below the last option: nothing to change
            return line
        if len(segments) < 3:
            return line
        inner = segments[1]
        mark = "✓" if option.value in self.selected else " "
        segments[1] = Segment(mark, inner.style, inner.control)
        return Strip(segments, line.cell_length)


class FilterScreen(ModalScreen[TreeFilter | None]):
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.FILTER)

    def __init__(self, current: TreeFilter) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="filter-box"):
            yield Static(
                Text.assemble(
                    ("Filter the tree", "bold"),
                    ": keep the nodes of the checked statuses and labels; none checked in a "
                    "list means all of it.\n",
                    ("j k", "bold"),
                    " move · ",
                    ("space", "bold"),
                    " checks · ",
                    ("Tab", "bold"),
                    " the other list · ",
                    ("Ctrl+S", "bold"),
                    " apply · ",
                    ("Esc", "bold"),
                    " cancel",
                ),
                id="filter-title",
            )
            with Horizontal(id="filter-lists"):
                yield CheckList(
                    *((s, s, s in self.current.statuses) for s in NODE_STATUSES),
                    id="filter-status",
                )
                yield CheckList(
                    *((lb, lb, lb in self.current.labels) for lb in NODE_LABELS),
                    id="filter-label",
                )
            with Horizontal(id="filter-buttons"):
                yield Button("Apply", id="apply", variant="primary")
                yield Button("Clear", id="clear")
                yield Button("Cancel", id="cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#filter-status", SelectionList).border_title = "status (none: all)"
        self.query_one("#filter-label", SelectionList).border_title = "label (none: all)"

    def show(self, current: TreeFilter) -> None:
        """Open again on `current` (the app builds this screen once and shows it again)."""
        self.current = current
        if not self.is_mounted:
            return  # composed from `current` when first shown
        for list_id, chosen in (
            ("#filter-status", current.statuses),
            ("#filter-label", current.labels),
        ):
            options = self.query_one(list_id, SelectionList)
            options.deselect_all()
            for value in chosen:
                options.select(value)
        self.query_one("#filter-status").focus()

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
