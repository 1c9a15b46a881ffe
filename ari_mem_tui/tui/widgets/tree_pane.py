"""The left pane: the run's tree and its find box. It owns finding nodes (`/`, `n`, `N`), the
status/label filter (`f`) and which node a run opens on; choosing a found node is asked of the
app with `JumpToNode`."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model.checkpoint import NodeRefError
from ari_mem_tui.render.opening import nodes_matching, opening_node, tree_order
from ari_mem_tui.render.text import preview
from ari_mem_tui.render.words import plural
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.messages import JumpToNode
from ari_mem_tui.tui.screens.filter import FilterScreen, TreeFilter
from ari_mem_tui.tui.widgets.run_tree import RunTree

REVEALED = 500  # matches of a filter whose lineage is expanded (each expansion redraws the tree)


class TreePane(Vertical):
    HELP_SCOPES = (keys.TREE,)  # F1 here: the tree's keys first (tui/keys.py)
    help_name = "the tree"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.auto_node: str | None = None  # the node the app chose to open on, until moved
        self.opening_reason = ""  # why the run opened where it did (render/opening.py)
        self.tree_filter = TreeFilter()
        self.find_matches: list[str] = []
        self.find_index = -1
        self.find_text = ""

    def compose(self) -> ComposeResult:
        yield RunTree(id="tree")
        yield Input(placeholder="find id or text (Enter, Esc)", id="find-input")

    def on_mount(self) -> None:
        self.find_input.display = False
        self.show_state()

    def show_state(self) -> None:
        """The border title says what the tree shows: the filter and the find, while active."""
        title = Text("Tree")
        metric = self.tree.metric if self.is_mounted else None
        if metric is not None:  # what the numbers are, where the run has no score
            arrow = "↑" if metric.higher_is_better else "↓"
            known = metric.source == "primary_metric"
            how = f"{arrow} better" if known else f"most reported, {arrow} assumed"
            title.append(f" · {preview(metric.name, 20)} {how}")
        if self.tree_filter.active:  # the count first: a narrow pane cuts the title's end
            count = plural(len(self.tree.matched_ids), "node")
            title.append(f" · {count} · filter {self.tree_filter.describe()}")
        if self.find_text:
            matches = self.find_matches
            where = f"{self.find_index + 1}/{len(matches)}" if matches else "no match"
            title.append(f" · find {preview(self.find_text, 16)!r} {where}")
        self.border_title = title  # Text: never parsed as markup

    @property
    def tree(self) -> RunTree:
        return self.query_one(RunTree)

    @property
    def find_input(self) -> Input:
        return self.query_one(Input)

    def reset(self) -> None:
        """Another run is opening: no filter, no matches, a "loading" root."""
        self.tree_filter = TreeFilter()
        self.find_matches, self.find_index, self.find_text = [], -1, ""
        self.tree.show_loading()
        self.show_state()

    # ---- filter ----

    def show_run(self, ckpt: Checkpoint, expand_roots: bool, expanded: list[str] = ()) -> None:
        """Draw `ckpt`'s tree, the lines in `expanded` open, its roots revealed (and opened)."""
        tree = self.tree
        tree.show_root = False
        self.show(ckpt)
        for node_id in expanded:
            node = tree.reveal(node_id)
            if node is not None:
                node.expand()
        for root_id in ckpt.roots:
            node = tree.reveal(root_id)
            if node is not None and expand_roots:
                node.expand()
        self.show_state()  # (a run without scores: its main metric's name)

    def show(self, ckpt: Checkpoint) -> None:
        """Draw `ckpt`'s tree through the filter: matching nodes and, dimmed, their ancestors."""
        tree, flt = self.tree, self.tree_filter
        if not flt.active:
            tree.matched_ids = set()
            tree.load(ckpt, None)
            return
        matched = {
            node_id
            for node_id, n in ckpt.graph.nodes(data="node")
            if (not flt.statuses or (n.status or "") in flt.statuses)
            and (not flt.labels or (n.label or "") in flt.labels)
        }
        visible = ckpt.with_tree_ancestors(matched)  # (a match's line needs its parents')
        tree.matched_ids = matched
        tree.load(ckpt, visible)

    def _refilter(self, flt: TreeFilter) -> str | None:
        """Draw the tree through `flt` with every match in sight (its lineage expanded, up to
        REVEALED of them) and return the node the cursor should go to: the selection when it
        is still shown, else the first match in tree order; cleared, the selection."""
        self.tree_filter = flt
        ckpt, tree = self.tree.ckpt, self.tree
        if ckpt is None:
            self.show_state()
            return None
        selected = tree.selected_id
        self.show_run(ckpt, expand_roots=True)
        matches = [n for n in tree_order(ckpt) if n in tree.matched_ids] if flt.active else []
        for node_id in matches[:REVEALED]:
            tree.reveal(node_id)
        if self.find_text:  # the find looks among the nodes shown
            self.find_matches, self.find_index = self.find_nodes(self.find_text), -1
            tree.set_find_hits(set(self.find_matches))
        self.show_state()
        if selected and tree.select_id(selected) and (not flt.active or selected in matches):
            return selected
        target = matches[0] if matches else selected
        if target and tree.select_id(target):
            return target
        return None

    def open_filter(self) -> None:
        def done(result: TreeFilter | None) -> None:
            if result is None:
                return
            target = self._refilter(result)
            if target:
                self.post_message(JumpToNode(target))
            if result.active and not self.tree.matched_ids:
                self.notify(f"no node is {result.describe()}", severity="warning")

        app = self.app
        if not app.is_screen_installed("filter"):  # built once: composing it cost a key's time
            app.install_screen(FilterScreen(self.tree_filter), "filter")
        screen = app.get_screen("filter")
        assert isinstance(screen, FilterScreen)
        screen.show(self.tree_filter)
        app.push_screen("filter", done)

    def clear_filter(self) -> str | None:
        """Every node shown again, the selection in sight (returned, for the app to choose)."""
        return self._refilter(TreeFilter())

    def select(self, node_id: str) -> None:
        """Put the cursor on `node_id`, clearing the filter when it hides the node."""
        if not self.tree.select_id(node_id):
            self.notify("that node is hidden by the filter; clearing it", severity="warning")
            self._refilter(TreeFilter())
            self.tree.select_id(node_id)

    # ---- the node a run opens on ----

    def open_first(
        self,
        ckpt: Checkpoint,
        wanted: str | None,
        useful: bool,
        asked: bool,
        findings: dict | None = None,
    ) -> str | None:
        """Put the cursor on the node a run opens on, and return it: `wanted` (`ari-mem-tui CKPT
        NODE`, any unique part of its id; or the node shown before a reload), else with `useful`
        a useful one (render/opening.py, by the audit's `findings` when they are known), else
        the first root. A useful one chosen while no node was `asked` for is remembered, for
        the audit to move on (`move_to_finding`)."""
        target, why = None, ""
        if wanted:
            try:
                target = ckpt.resolve_node(wanted)
            except NodeRefError as exc:
                self.notify(str(exc), title="no such node", severity="warning")
        if target is None and useful:
            target, why = opening_node(ckpt, findings)
            self.auto_node = None if asked else target
        if target is None:
            target = ckpt.roots[0] if ckpt.roots else None
        if target:
            self.tree.select_id(target)
            self.opening_reason = why
        return target

    def move_to_finding(self, ckpt: Checkpoint, by_node: dict, current: str | None) -> str | None:
        """Once the audit is in: a run opened on a node of the app's own choosing moves to the
        first node with a finding (returned), unless the user has moved since (`current`)."""
        auto, self.auto_node = self.auto_node, None
        if auto is None or current != auto:
            return None
        target, why = opening_node(ckpt, by_node)
        if not target or target == auto:
            return None
        self.tree.select_id(target)
        self.opening_reason = why
        return target

    # ---- find ----

    def open_find(self, typed: str | None = None, new: bool = True) -> None:
        """Show the find box and focus it: with `/` the old find selected (typing replaces it);
        with text `typed` or pasted elsewhere, that text in place of the old find (`new`), or
        added to the text just typed there."""
        self.display = True
        box = self.find_input
        box.display = True
        if typed is not None:
            text = " ".join(typed.splitlines())
            if new:
                box.value = ""
            box.insert_text_at_cursor(text)
        box.select_on_focus = typed is None
        # now, not after this message (`focus()` waits): the next key must reach the box, not
        # the tree, or a phrase typed quickly would be split between the two in any order
        self.screen.set_focus(box)

    def close_find(self) -> None:
        self.find_input.display = False
        self.tree.focus()

    def clear_find(self) -> None:
        """No find any more: no matches marked, the title without it, the box closed."""
        self.find_matches, self.find_index, self.find_text = [], -1, ""
        self.find_input.value = ""
        self.tree.set_find_hits(set())
        self.show_state()
        self.close_find()

    def escape(self) -> tuple[str, str | None]:
        """Esc in the tree pane (lazygit's): the find box closes, and an active find, else an
        active filter, is cleared. Returns what was cleared ("find", "filter" or "") and, for
        a filter, the node the cursor stays on."""
        if self.find_input.display or self.find_text:
            had = bool(self.find_text)
            self.clear_find()
            return ("find" if had else ""), None
        if self.tree_filter.active:
            return "filter", self.clear_filter()
        self.tree.focus()
        return "", None

    @on(Input.Submitted, "#find-input")
    def _find_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.find_matches = self.find_nodes(event.value)
        self.find_index = -1
        self.find_text = event.value.strip()
        self.show_state()
        self.tree.set_find_hits(set(self.find_matches))
        self.close_find()
        if not self.find_matches:
            self.notify(f"no node matches {preview(event.value, 40)!r}", severity="warning")
            return
        self.notify(f"{plural(len(self.find_matches), 'match', 'matches')} (n / N)")
        self.find_step(1)

    def find_nodes(self, text: str) -> list[str]:
        """Nodes whose id contains `text`, then nodes whose name/direction/summary does, among
        the nodes the filter shows (render/opening.py, as the palette's jump finds them)."""
        ckpt = self.tree.ckpt
        return nodes_matching(ckpt, text, self.tree.visible_ids) if ckpt is not None else []

    def find_step(self, step: int) -> None:
        """The next (1) or previous (-1) match."""
        if not self.find_matches:
            self.notify("nothing to find: press / first", severity="warning")
            return
        self.find_index = (self.find_index + step) % len(self.find_matches)
        self.show_state()
        self.post_message(JumpToNode(self.find_matches[self.find_index]))
