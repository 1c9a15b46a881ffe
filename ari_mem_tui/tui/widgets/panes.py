"""The two panes (tree, detail tabs) side by side, the tree folding away on narrow screens."""

from __future__ import annotations

from textual.color import Color
from textual.containers import Horizontal
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Tabs

DRAWER_BELOW = 100  # columns: narrower, the tree folds away while the tabs have focus
# the framed panes: the tree and each tab's pane (app.tcss frames them)
FRAMED = "#tree-pane, #hits-pane, #saw-pane, #core-pane, #writes-pane, #node-pane, #audit-pane"


class Panes(Horizontal):
    """Holds the tree and the tabs. Below DRAWER_BELOW columns the tree is a drawer: folded
    away while focus is in the tabs, so their tables get the width; `t` (or focus back in the
    tree) opens it. `+` maximises the pane with the focus (`maximised`: the tree, or the tabs
    without their strip) and restores it."""

    # "tree", "tabs" or "" (neither): the other side and the tab strip are hidden meanwhile.
    # Not Textual's own maximise: its class on the screen restyled every widget of the app,
    # over a tenth of a second a key on a shared machine
    maximised: var[str] = var("")
    _tree_rule: object = None

    # ---- the tree as a drawer ----

    @property
    def _tree_and_tabs(self) -> tuple[Widget, Widget]:
        return self.query_one("#tree-pane"), self.query_one("#tabs")

    def on_mount(self) -> None:
        self.call_after_refresh(self.light)
        self.watch(self.app, "theme", lambda _: self.light(), init=False)  # the borders' colours

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

    def maximise(self, focused: Widget | None) -> bool:
        """`+`: the pane holding `focused` fills the panes (False: no pane holds it); again,
        or when one is already: back as it was."""
        if self.maximised:
            self.maximised = ""
            return True
        tree, tabs = self._tree_and_tabs
        holding = set(focused.ancestors_with_self) if focused is not None else set()
        side = "tree" if tree in holding else "tabs" if tabs in holding else ""
        self.maximised = side
        return bool(side)

    def watch_maximised(self, old: str, side: str) -> None:
        tree, tabs = self._tree_and_tabs
        tabs.display = side != "tree"
        tabs.query_one(Tabs).display = side != "tabs"  # the strip (`1`–`6` still switch)
        if side == "tabs":  # the tree's own display rule kept (`t` hid it, or not)
            self._tree_rule = tree.styles.get_rule("display")
            tree.styles.display = "none"
        elif old == "tabs":
            if self._tree_rule is None:
                tree.styles.clear_rule("display")  # the CSS's again (a drawer: folded)
            else:
                tree.styles.display = self._tree_rule  # type: ignore[assignment]
        if side == "tree":  # inline: over the CSS's 34% and 56 cells
            tree.styles.width, tree.styles.max_width = "1fr", "100%"
        else:
            tree.styles.clear_rule("width")
            tree.styles.clear_rule("max_width")

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
