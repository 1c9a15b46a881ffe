"""The two panes (tree, detail tabs) side by side, the tree folding away on narrow screens."""

from __future__ import annotations

from textual.color import Color
from textual.containers import Horizontal
from textual.widget import Widget

DRAWER_BELOW = 100  # columns: narrower, the tree folds away while the tabs have focus
# the framed panes: the tree and each tab's pane (app.tcss frames them)
FRAMED = "#tree-pane, #hits-pane, #saw-pane, #core-pane, #writes-pane, #node-pane, #audit-pane"


class Panes(Horizontal):
    """Holds the tree and the tabs. Below DRAWER_BELOW columns the tree is a drawer: folded
    away while focus is in the tabs, so their tables get the width; `t` (or focus back in the
    tree) opens it."""

    # ---- the tree as a drawer ----

    @property
    def _tree_and_tabs(self) -> tuple[Widget, Widget]:
        return self.query_one("#tree-pane"), self.query_one("#tabs")

    def on_mount(self) -> None:
        self.call_after_refresh(self.light)

    def on_descendant_focus(self) -> None:
        self.fit_tree()
        self.light()

    def on_descendant_blur(self) -> None:
        self.light()

    def light(self) -> None:
        """The pane that holds the focus gets the bright border, the others the dim one (as
        Harlequin does). Set on each pane's own style, not by `:focus-within` in app.tcss:
        with that, Textual restyled every widget in the pane that gained or lost the focus."""
        colours = self.app.get_css_variables()
        lit, dim = colours.get("primary-lighten-1"), colours.get("panel-lighten-1")
        if lit is None or dim is None:
            return
        focused = self.screen.focused
        holding = set(focused.ancestors_with_self) if focused is not None else set()
        for pane in self.query(FRAMED):
            colour = Color.parse(lit if pane in holding else dim)
            if pane.styles.border_top != ("round", colour):
                pane.styles.border = ("round", colour)

    def on_resize(self) -> None:
        self.fit_tree()

    def fit_tree(self) -> None:
        if self.app.screen is not self.screen:
            return  # a view over the app (an entry, help): the panes stay as they were
        tree, tabs = self._tree_and_tabs
        focused = self.screen.focused
        in_tabs = focused is not None and tabs in focused.ancestors_with_self
        tree.set_class(self.app.size.width < DRAWER_BELOW and in_tabs, "-drawer")

    def toggle_tree(self) -> None:
        """`t`: hide or show the tree; folded away as a drawer, open it on the tree."""
        tree, tabs = self._tree_and_tabs
        if tree.has_class("-drawer"):
            tree.remove_class("-drawer")
            tree.display = True
            tree.query_one("#tree").focus()
            return
        tree.display = not tree.display
        if not tree.display:
            tabs.focus()
