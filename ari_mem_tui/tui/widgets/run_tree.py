"""The run's node tree, drawn from `Checkpoint.graph` (networkx: children in the tree's order,
each line's label from the node's `node` attribute) and filled lazily.

Textual rebuilds every visible line on each add/expand, and a ~1000-deep expanded chain blows
the recursion limit, so: children are added only when their parent is expanded, and a run of
single-child nodes is folded into one "chain" line whose members are listed flat when opened.
Highlighting (ancestors of the selection, the dimming of nodes outside its search scope, find
matches) is done in `render_label` from sets, so changing it never touches the nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.findings import GLYPHS, glyph_kinds
from ari_mem_tui.render.opening import MainMetric, main_metric
from ari_mem_tui.render.text import metric_text, node_label, short_id
from ari_mem_tui.tui import keys

CHAIN_MIN = 4  # fold single-child runs at least this long
FULL_LABELS_FROM = 36  # tree columns: narrower, every row has the short label (`imp`)


@dataclass(frozen=True)
class Item:
    """What a tree line stands for: one node, or a folded chain of nodes."""

    node_id: str | None = None
    chain: tuple[str, ...] = field(default=())

    @property
    def ids(self) -> tuple[str, ...]:
        return self.chain if self.chain else ((self.node_id,) if self.node_id else ())

    @property
    def first_id(self) -> str | None:
        """The node the line stands for (a chain: its first)."""
        return self.node_id or (self.chain[0] if self.chain else None)


class RunTree(Tree[Item]):
    """Tree of nodes; posts the usual Tree messages, with `Item` data."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(keys.TREE)

    def __init__(self, **kwargs) -> None:
        super().__init__("run", data=Item(), **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self.auto_expand = False
        self.ckpt: Checkpoint | None = None
        self.metric: MainMetric | None = None  # shown in the score's place: a run without one
        self.visible_ids: set[str] | None = None  # filter: None = all
        self.matched_ids: set[str] = set()  # nodes matching the filter itself (others: context)
        self.lineage_ids: set[str] = set()
        self.selected_id: str | None = None
        self.dim_unseen = False
        self.find_hits: set[str] = set()
        self.findings: dict[str, tuple[str, ...]] = {}  # node id -> "read", "rejected" glyphs
        self._by_id: dict[str, TreeNode[Item]] = {}
        self._loaded: set[int] = set()
        self._labels: dict[tuple[str, int | None], Text] = {}  # (node id, width): its label

    def on_mount(self) -> None:
        app = self.app
        if hasattr(app, "current_id"):  # the app's state (tui/app.py): the tree shows it
            self.watch(app, "current_id", self._chosen, init=False)
            self.watch(app, "findings", self.set_findings, init=False)

    def _chosen(self, node_id: str | None) -> None:
        """The app's chosen node moved: its lineage drawn bold (None: as it was)."""
        if node_id is not None and self.ckpt is not None and node_id in self.ckpt.nodes:
            self.set_selection(node_id)

    # ---- building ----

    def show_loading(self) -> None:
        """Nothing to show yet: an italic "loading …" root."""
        self.clear()
        self.root.set_label(Text("loading …", style="italic"))
        self.show_root = True

    def load(self, ckpt: Checkpoint, visible: set[str] | None = None) -> None:
        """Show `ckpt`'s roots (children stay unloaded until expanded)."""
        if ckpt is not self.ckpt:
            self.metric = main_metric(ckpt)
        self.ckpt = ckpt
        self.visible_ids = visible
        self._by_id.clear()
        self._loaded.clear()
        self._labels.clear()
        self.clear()
        self.root.data = Item()
        self.root.set_label(Text(ckpt.run_id or str(ckpt.path.name)))
        self._loaded.add(id(self.root))
        for root_id in self._visible(ckpt.roots):
            self._add_item(self.root, root_id)
        self.root.expand()

    def _visible(self, ids: list[str]) -> list[str]:
        return [i for i in ids if self.visible_ids is None or i in self.visible_ids]

    def children_of(self, node_id: str) -> list[str]:
        assert self.ckpt is not None
        return self._visible(self.ckpt.children(node_id))

    def _chain_from(self, node_id: str) -> list[str]:
        chain = [node_id]
        current = node_id
        while len(chain) < 100_000:
            kids = self.children_of(current)
            if len(kids) != 1:
                break
            current = kids[0]
            chain.append(current)
        return chain

    def _add_item(self, parent: TreeNode[Item], node_id: str) -> None:
        chain = self._chain_from(node_id)
        if len(chain) >= CHAIN_MIN:
            parent.add(self._chain_label(chain), data=Item(chain=tuple(chain)))
            return
        self._add_line(parent, node_id, expandable=bool(self.children_of(node_id)))

    def _add_line(self, parent: TreeNode[Item], node_id: str, expandable: bool) -> TreeNode[Item]:
        tn = parent.add(
            self.label_for(node_id), data=Item(node_id=node_id), allow_expand=expandable
        )
        self._by_id[node_id] = tn
        return tn

    def label_for(self, node_id: str, width: int | None = None) -> Text:
        """The node's label in `width` cells (render/text.py: numbers are never cut); in a
        narrow tree every row's label is the short one (`imp`, `abl`)."""
        label = self._labels.get((node_id, width))
        if label is None:
            assert self.ckpt is not None
            node = self.ckpt.graph.nodes[node_id]["node"]
            writes = len(self.ckpt.entries_by_node.rows(node_id))
            tiny = self.size.width < FULL_LABELS_FROM
            value = None
            if self.metric is not None:  # no node has a score: the run's main metric
                found = self.metric.values.get(node_id)
                value = metric_text(found, self.metric.rank(found) if found is not None else 0)
            label = self._labels[node_id, width] = node_label(node, writes, width, tiny, value)
        return label

    def _chain_label(self, chain: tuple[str, ...] | list[str], width: int | None = None) -> Text:
        """`┄4 a1000001→a1z00001`; narrow, the last id goes first (`┄4 a1000001→…`)."""
        count = Text.assemble(("┄", "bright_black"), (f"{len(chain)} ", "bold"))
        first = Text(short_id(chain[0]))
        arrow = Text("→", style="bright_black")
        for parts in ((first, arrow, Text(short_id(chain[-1]))), (first, arrow, Text("…"))):
            text = Text.assemble(count, *parts)
            if width is None or text.cell_len <= width:
                return text
        return Text.assemble(count, "…")

    def _room(self, node: TreeNode[Item], prefix: int) -> int:
        """The cells a line's label has: the tree's width less its guides, its expander and the
        vertical scrollbar's cell (kept free whether shown or not: Textual's line cache does not
        know when the scrollbar comes and goes)."""
        depth, parent = 0, node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        scrollbar = self.styles.scrollbar_size_vertical
        return self.size.width - scrollbar - depth * self.guide_depth - prefix

    def ensure_loaded(self, tn: TreeNode[Item]) -> None:
        if id(tn) in self._loaded or tn.data is None:
            return
        self._loaded.add(id(tn))
        item = tn.data
        if item.chain:
            for position, member in enumerate(item.chain):
                last = position == len(item.chain) - 1
                self._add_line(tn, member, expandable=last and bool(self.children_of(member)))
        elif item.node_id:
            for child in self.children_of(item.node_id):
                self._add_item(tn, child)

    def _on_tree_node_expanded(self, event: Tree.NodeExpanded[Item]) -> None:
        self.ensure_loaded(event.node)

    def _on_tree_node_selected(self, event: Tree.NodeSelected[Item]) -> None:
        """Enter opens or closes a line (auto_expand is off: children load first)."""
        if event.node.allow_expand:
            self.ensure_loaded(event.node)
            event.node.toggle()

    # ---- finding nodes ----

    def reveal(self, node_id: str) -> TreeNode[Item] | None:
        """Expand the way down to `node_id` (loading lazily) and return its line's node."""
        if self.ckpt is None or node_id not in self.ckpt.nodes:
            return None
        if self.visible_ids is not None and node_id not in self.visible_ids:
            return None
        for step in self.ckpt.tree_path(node_id):
            tn = self._by_id.get(step)
            if tn is None:
                tn = self._open_chain_holding(step)
            if tn is None:
                return None
            # a member of an opened chain is not expanded: its child is the next member, one
            # line down (loading its children would fold the rest of the chain anew under every
            # member, quadratic: a 20,000-deep chain never opened)
            if step != node_id and tn.allow_expand:
                self.ensure_loaded(tn)
                tn.expand()
        return self._by_id.get(node_id)

    def _open_chain_holding(self, node_id: str) -> TreeNode[Item] | None:
        """Find the folded chain line that holds `node_id` among loaded lines and open it."""
        assert self.ckpt is not None
        parent_id = self.ckpt.tree_parent(node_id)
        parent_tn = self._by_id.get(parent_id) if parent_id else self.root
        if parent_tn is None:
            return None
        self.ensure_loaded(parent_tn)
        for child in parent_tn.children:
            if child.data is not None and node_id in child.data.chain:
                self.ensure_loaded(child)
                child.expand()
                return self._by_id.get(node_id)
        return None

    def select_id(self, node_id: str) -> bool:
        tn = self.reveal(node_id)
        if tn is None:
            return False
        self._tree_lines  # noqa: B018 - rebuild the lines now: a new node's line is -1 until then
        self.move_cursor(tn, animate=False)
        self.scroll_to_node(tn, animate=False)
        return True

    def expanded_ids(self) -> list[str]:
        """Node ids (and chain heads) whose lines are expanded, for keeping state on reload."""
        out = []
        for tn in self._by_id.values():
            if tn.is_expanded and tn.data and tn.data.node_id:
                out.append(tn.data.node_id)
        return out

    @property
    def current_id(self) -> str | None:
        tn = self.cursor_node
        return tn.data.first_id if tn is not None and tn.data is not None else None

    # ---- highlighting ----

    def set_selection(self, node_id: str | None) -> None:
        self.selected_id = node_id
        self.lineage_ids = (
            set(self.ckpt.nodes[node_id].ancestor_ids)
            if (self.ckpt and node_id in self.ckpt.nodes)
            else set()
        )
        self._restyle()

    def set_dim_unseen(self, on: bool) -> None:
        self.dim_unseen = on
        self._restyle()

    def set_findings(self, by_node: dict) -> None:
        """Audit findings per node: a glyph on the row (⚠ leak / scope violation, ⚑ rejected
        write), as the help's legend says."""
        self.findings = {nid: k for nid, fs in by_node.items() if (k := glyph_kinds(fs))}
        self._invalidate()

    def set_find_hits(self, ids: set[str]) -> None:
        self.find_hits = ids
        self._restyle()

    def _restyle(self) -> None:
        """Lines drawn again in new styles, same lines and widths: unlike `_invalidate`, no
        rebuild of the line list and no layout of the whole screen (every tree move chooses a
        node, so this is paid on every key)."""
        self._clear_line_cache()
        self._updates += 1
        self.refresh()

    def get_label_width(self, node: TreeNode[Item]) -> int:
        """What `render_label` would measure, without rendering: Textual asks it of every line
        on each rebuild (20,000 lines of an opened chain, on every change of selection)."""
        icon = (
            (self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
            if (node.allow_expand)
            else ""
        )
        width = cell_len(icon) + node.label.cell_len
        findings = getattr(self, "findings", None)  # (asked during Tree.__init__ already)
        if findings and node.data is not None:
            kinds = {k for i in node.data.ids for k in findings.get(i, ())}
            width += len(kinds) + 1 if kinds else 0
        return width

    def render_label(self, node: TreeNode[Item], base_style: Style, style: Style) -> Text:
        text = super().render_label(node, base_style, style)
        ids = node.data.ids if node.data else ()
        if not ids:
            return text
        marks = self._finding_marks(ids)
        # the label fitted to the room the line has (the one Textual drew was built unfitted)
        prefix = len(text) - len(node.label)
        room = self._room(node, prefix) - marks.cell_len
        item = node.data
        assert item is not None
        label = (
            self._chain_label(item.chain, room) if item.chain else self.label_for(ids[0], room)
        ).copy()
        label.stylize(style)
        for emphasis in self._emphasis(ids):
            label.stylize(emphasis)
        # the marks in front: a narrow tree pane cuts the end of a line, never its start
        return Text.assemble(text[:prefix], marks, label)

    def _finding_marks(self, ids: tuple[str, ...]) -> Text:
        """The glyphs of the audit's findings on the row's nodes (⚠ leak or scope violation,
        ⚑ rejected write), then a space; empty when there are none."""
        kinds = {k for i in ids for k in self.findings.get(i, ())}
        marks = Text()
        for kind in ("read", "rejected"):
            if kind in kinds:
                glyph, glyph_style = GLYPHS[kind]
                marks.append(glyph, style=glyph_style)
        if marks:
            marks.append(" ")
        return marks

    def _emphasis(self, ids: tuple[str, ...]) -> list[str]:
        """The styles the row's nodes take from the selection, the filter and find: the
        selected node's ancestors bold underlined (else, with `d`, what it could not see
        dimmed), what the filter left out dim italic, find's matches reversed."""
        styles = []
        if any(i in self.lineage_ids for i in ids):
            styles.append("bold underline")
        elif self.dim_unseen and self.selected_id and self.selected_id not in ids:
            styles.append("dim")
        if (
            self.visible_ids is not None
            and self.matched_ids
            and not any(i in self.matched_ids for i in ids)
        ):
            styles.append("dim italic")
        if any(i in self.find_hits for i in ids):
            styles.append("reverse")
        return styles

    # ---- vim-style moves ----

    def action_scroll_top(self) -> None:
        """`g` (tui/keys.py names the tables' action; the tree's is called home)."""
        self.action_scroll_home()

    def action_scroll_bottom(self) -> None:
        self.action_scroll_end()

    def action_collapse_or_parent(self) -> None:
        tn = self.cursor_node
        if tn is None:
            return
        if tn.is_expanded and tn.allow_expand:
            tn.collapse()
        elif tn.parent is not None and tn.parent is not self.root:
            self.move_cursor(tn.parent, animate=False)

    def action_expand_or_child(self) -> None:
        tn = self.cursor_node
        if tn is None or not tn.allow_expand:
            return
        if not tn.is_expanded:
            self.ensure_loaded(tn)
            tn.expand()
        elif tn.children:
            self.move_cursor(tn.children[0], animate=False)
