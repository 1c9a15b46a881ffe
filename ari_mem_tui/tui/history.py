"""Where the user has been: a back/forward history of views, as lazygit returns to where you were.

A view is a node, a tab and the row under the cursor of the tab's table. A jump (`o` from a
row, a find, a palette jump, a finding's node, a breadcrumb) records the view it leaves; `b`
goes back to it, `B` forward again. Moving in the tree with the arrows is browsing, not a jump:
it records nothing. Plain data, no Textual: the main screen builds and restores the views.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HISTORY_KEPT = 100  # views kept each way


@dataclass(frozen=True)
class View:
    node_id: str
    tab: str = "hits"
    table_id: str | None = None  # the table whose row is kept (the focused one, else the tab's)
    row_key: str | None = None  # that row's key, as the table was filled with it
    focused: bool = False  # the table had the focus
    in_tree: bool = False  # the tree pane had it (the tree, its find box): `b` gives it back


@dataclass
class History:
    back: list[View] = field(default_factory=list)
    forward: list[View] = field(default_factory=list)

    def push(self, left: View) -> None:
        """A jump leaves `left`: it is where `b` returns; what `B` would have gone to is gone."""
        if not self.back or self.back[-1] != left:
            self.back.append(left)
            del self.back[:-HISTORY_KEPT]
        self.forward.clear()

    def go_back(self, here: View) -> View | None:
        """The view before the last jump (None: none), `here` kept for `go_forward`."""
        if not self.back:
            return None
        self.forward.append(here)
        return self.back.pop()

    def go_forward(self, here: View) -> View | None:
        if not self.forward:
            return None
        self.back.append(here)
        return self.forward.pop()

    def clear(self) -> None:
        """Another run: its views mean nothing there."""
        self.back.clear()
        self.forward.clear()
