"""The Saw, Core, Writes, Node and Audit tabs: plain views of the model, no logic."""

from __future__ import annotations

from typing import Generic, TypeVar

from rich import box
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import HorizontalScroll, VerticalScroll
from textual.widgets import DataTable, Static

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.checkpoint.attribution import start_direction
from ari_mem_tui.model import CoreBlocks, CowWrite, Node, Replay
from ari_mem_tui.render.text import (
    clean,
    fmt_iso,
    fmt_ts,
    label_style,
    metric_number,
    pretty_json,
    preview,
    safe_text,
    score_text,
    short_id,
    status_glyph,
)
from ari_mem_tui.render.words import cut_note, plural, pool_words, tier_badge
from ari_mem_tui.render.writes import (
    REJECTED_SHOWN,
    WRITE_COLUMNS,
    WRITE_WIDE,
    WRITES_SHOWN,
    refusals,
    refused_by,
    write_row,
)
from ari_mem_tui.search.startup import startup_notes
from ari_mem_tui.search.tiers import NO_MESSAGE
from ari_mem_tui.tui.messages import JumpToNode, ViewRow
from ari_mem_tui.tui.rows import AuditRow, RowDetail
from ari_mem_tui.tui.tables import LazyRows, TablePane, VimTable
from ari_mem_tui.tui.widgets.findings_box import FindingsBox
from ari_mem_tui.tui.widgets.preview import Previewed, RowPreview

# ---------------------------------------------------------------- Saw


def tiers_text(replay: Replay) -> Text:
    """The context tiers as the node received them, cut points and exactness marked."""
    out = Text()
    if not replay.tiers:
        out.append("No working context was injected at start (no tiers).", style="italic")
        return out
    for tier in replay.tiers:
        badge = (f" {tier_badge(tier)} ", "black on green" if tier.exact else "black on yellow")
        out.append_text(
            Text.assemble(
                (f"Tier {tier.key} ", "bold"), (clean(tier.title, False), "bold cyan"), " ", badge
            )
        )
        out.append("\n")
        if tier.note:
            out.append(f"  {clean(tier.note, False)}\n", style="italic yellow")
        if not tier.lines:  # ARI sends no message at all for an empty tier, not an empty one
            if NO_MESSAGE not in (tier.note or ""):  # the note says it already
                out.append(f"  ({NO_MESSAGE})\n", style="bright_black")
            out.append("\n")
            continue
        out.append(clean(tier.header, False) + "\n", style="bold")
        for line in tier.lines:
            out.append(clean(line.text))
            if line.truncated:
                out.append(" ✂ cut here", style="bold red")
            out.append("\n")
        out.append("\n")
    return out


class SawPane(VerticalScroll):
    BORDER_TITLE = "Saw"

    def compose(self) -> ComposeResult:
        yield Static(Text("Choose a node.", style="italic"), id="saw-body")

    def show(self, replay: Replay) -> None:
        # where tier 2 came from, in the words its own note uses (search/tiers.py): the search
        # the access log recorded, else the replay (which pool, which ranker, and whether that
        # ranker is the run's own)
        if replay.recorded is not None:
            head = Text("Tier 2 from the recorded start-up search (access log)", "bright_black")
        else:
            head = Text(f"Tier 2 replayed: {pool_words(replay)}", "bright_black")
            exact = replay.fidelity.exact is True
            label = clean(replay.fidelity.label or replay.embedder, False)
            head.append(f" · {label}", "bright_black" if exact else "yellow")
        self.query_one("#saw-body", Static).update(Text.assemble(head, "\n\n", tiers_text(replay)))
        self.border_title = Text(f"Saw · {short_id(replay.node_id)}")  # the node, tree folded


# ---------------------------------------------------------------- Core


EMPTY_BLOCK = "– empty: ARI writes only ari_context, never persona or human"


def core_text(core: CoreBlocks, started: float | None) -> Text:
    out = Text()
    source = clean(core.source or "unknown", False)
    out.append(f"source: {source} ", style="bright_black")
    if core.approximate:
        out.append("  approximate (rebuilt from idea.json / experiment.md)", style="yellow")
    if core.seeded_at:  # 0 means "not recorded" in backups
        out.append(f"  seeded at {fmt_ts(core.seeded_at)}", style="bright_black")
    out.append("\n\n")
    not_yet = not core.seeded or (
        started is not None and core.seeded_at is not None and core.seeded_at > started
    )
    for name, value in (("persona", core.persona), ("human", core.human)):
        out.append(f"{name}\n", style="bold cyan")
        if value:
            out.append(clean(value) + "\n\n")
        else:
            out.append(EMPTY_BLOCK + "\n\n", style="bright_black")
    out.append("ari_context\n", style="bold cyan")
    if not_yet:
        out.append("not seeded yet when this node started\n", style="bold yellow")
    out.append_text(context_text(core.ari_context))
    return out


def context_text(context: dict) -> Text:
    """`ari_context` as a reader wants it: each key, its text as text (experiment.md's lines
    as lines, not a JSON string with `\\n` in it), other values as indented JSON."""
    out = Text()
    for key, value in context.items():
        out.append(clean(key, False), style="cyan")
        if isinstance(value, str) and "\n" not in value.strip() and len(value) <= 60:
            out.append(f": {clean(value, False)}\n")
        elif isinstance(value, (bool, int, float)) or value is None:
            out.append(f": {pretty_json(value)}\n")
        elif isinstance(value, str):
            out.append("\n" + clean(value.strip()) + "\n")
        else:
            out.append("\n" + clean(pretty_json(value)) + "\n")
    return out


class CorePane(VerticalScroll):
    BORDER_TITLE = "Core"

    def compose(self) -> ComposeResult:
        yield Static(Text("Choose a node.", style="italic"), id="core-body")

    def show(self, node_id: str, core: CoreBlocks, started: float | None) -> None:
        self.query_one("#core-body", Static).update(core_text(core, started))
        self.border_title = Text(f"Core · {short_id(node_id)}")  # the node, tree folded


# ---------------------------------------------------------------- Writes

ERROR_LOG_SHOWN = 2000  # characters of a node's error_log in the Node tab


def write_detail(write: CowWrite, refused: CowWrite | None = None) -> RowDetail:
    """Every field of a copy-on-write row, its text in full (`refused`: as for `write_row`)."""
    fields: list[tuple[str, object]] = [
        ("time", fmt_ts(write.ts)),
        ("result", "accepted" if write.accepted else "rejected"),
    ]
    if refused is not None:
        fields.append(("log of", _refusal_words(refused)))
    if not write.accepted:
        fields.append(("logged by", write.logged_by))
    fields += [
        ("reason", write.reason),
        ("target", write.target_node),
        ("by", write.current_node),
        ("tool", write.tool),
        ("source", write.source),
        ("step", write.step),
        ("entry", write.entry_id),
        ("passage", write.letta_id),
    ]
    if write.metadata:
        fields.append(("metadata", pretty_json(write.metadata)))
    title = "copy-on-write: " + ("accepted" if write.accepted else "rejected")
    if refused is not None:  # (ARI keeps a call's result as an entry, a refusal's too)
        title += ": the node's own record of a rejected call's result"
    return RowDetail(title, tuple(fields), write.text, write.current_node or write.target_node)


def _refusal_words(refused: CowWrite) -> str:
    target = f" → {short_id(refused.target_node)}" if refused.target_node else ""
    return f"the rejected {refused.tool}{target} at {fmt_ts(refused.ts)}"


def writes_title(writes: list[CowWrite], scope: str, whole_run: bool, whole: bool) -> Text:
    """The Writes tab's title: the counts, what `w` switches to (`whole_run`: the whole run's
    log is asked for), the first REJECTED_SHOWN rejected writes spelled out, and what the
    table leaves out (`whole`: it shows the whole run's log)."""
    rejected_rows = [w for w in writes if not w.accepted]
    rejected = len(rejected_rows)
    title = Text.assemble(
        ("Writes ", "bold"),
        f"({scope}): {len(writes)}, ",
        (f"{rejected} rejected", "bold red" if rejected else "green"),
        ("    w: " + ("this node" if whole_run else "whole run"), "bright_black"),
    )
    for write in rejected_rows[:REJECTED_SHOWN]:  # wrapped: no sideways scroll
        title.append("\n✗ ", style="bold red")
        title.append(f"{clean(write.tool, False)} → {short_id(write.target_node)}: ")
        title.append(preview(write.text or "(text not recorded)", 400), style="bold")
    if rejected > REJECTED_SHOWN:
        title.append(
            f"\n{REJECTED_SHOWN:,} of {rejected:,} rejected writes spelled out here; "
            "every one: `ari-mem-tui audit CKPT`",
            style="yellow",
        )
    if len(writes) > WRITES_SHOWN:
        title.append(
            f"\n{WRITES_SHOWN:,} of {len(writes):,} writes shown (the first; / filters them"
            " all); "
            + ("w: one node's writes; " if whole else "")
            + "every rejected one: `ari-mem-tui audit CKPT --json`",
            style="yellow",
        )
    return title


RowT = TypeVar("RowT")


class RowsPane(Previewed, TablePane, Generic[RowT]):
    """A pane of one table whose row keys are positions in `rows` (Writes, Audit): the
    preview shows the row under the cursor in brief, Enter / `v` in full (`detail_of`)."""

    rows: list[RowT]

    def detail_of(self, row: RowT) -> RowDetail:
        raise NotImplementedError

    def row_detail(self, table_id: str, key: str) -> RowDetail | None:
        del table_id  # one table
        index = int(key) if key.isdigit() else -1
        if not 0 <= index < len(self.rows):
            return None
        return self.detail_of(self.rows[index])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter / `v`: the row in full (every field, its whole text)."""
        event.stop()
        detail = self.row_detail("", VimTable.plain_key(event.row_key.value) or "")
        if detail is not None:
            self.post_message(ViewRow(detail))


class WritesPane(RowsPane[CowWrite]):
    """This node's CoW log; `w` switches to the whole run's."""

    BORDER_TITLE = "Writes"
    PREVIEWED = "writes-table"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.whole_run = False
        self.rows: list[CowWrite] = []
        self.refusals: dict[str, CowWrite] = {}  # entry id → the rejected write it logs

    def compose(self) -> ComposeResult:
        yield Static("", id="writes-title")
        yield VimTable(id="writes-table")
        yield RowPreview(id="writes-preview")

    def show(self, ckpt: Checkpoint, node_id: str | None) -> None:
        if self.whole_run or node_id is None:
            writes = list(ckpt.writes)
            scope = "whole run"
        else:
            writes = list(ckpt.node_writes(node_id))
            scope = f"node {short_id(node_id)}"
        self.rows = writes
        self.refusals = refusals(writes)
        whole = self.whole_run or node_id is None
        title = writes_title(writes, scope, self.whole_run, whole)
        self.query_one("#writes-title", Static).update(title)
        self.query_one("#writes-table", VimTable).fill(
            WRITE_COLUMNS,
            LazyRows(writes, lambda i, w: (str(i), write_row(w, self._refused(w)))),
            reserve=True,
            wide_only=WRITE_WIDE if whole else (*WRITE_WIDE, "by"),
            limit=WRITES_SHOWN,  # the first (a filter, `/`, looks at every one)
        )
        self.set_title(Text(f"Writes · {scope}"))  # Text: never parsed as markup
        self.update_preview()

    def detail_of(self, row: CowWrite) -> RowDetail:
        """The write in full: its whole text and reason, every field."""
        return write_detail(row, self._refused(row))

    def _refused(self, write: CowWrite) -> CowWrite | None:
        """The rejected write that `write` (accepted) is the log of, if any."""
        return refused_by(write, self.refusals)

    def current_text(self) -> str | None:
        key = self.query_one("#writes-table", VimTable).current_key
        return self.rows[int(key)].text if key is not None else None

    @property
    def table_focused(self) -> bool:
        return self.query_one("#writes-table", VimTable).has_focus

    def current_entry_id(self) -> str | None:
        """The entry the write under the cursor made (None: a rejected one, or not focused)."""
        key = self.query_one("#writes-table", VimTable).current_key
        if not self.table_focused or key is None or not key.isdigit():
            return None
        return self.rows[int(key)].entry_id

    def toggle_scope(self, ckpt: Checkpoint | None, node_id: str | None) -> None:
        """`w`: this node's writes / the whole run's (redrawn when the run is loaded)."""
        self.whole_run = not self.whole_run
        if ckpt is not None:
            self.show(ckpt, node_id)


# ---------------------------------------------------------------- Node


CRUMBS_HEAD, CRUMBS_TAIL = 3, 12  # ancestors shown in the breadcrumb: the roots, the nearest


class Crumb(Static):
    """One clickable ancestor in the lineage breadcrumb."""

    def __init__(self, node_id: str, text: Text, **kwargs) -> None:
        super().__init__(text, **kwargs)
        self.node_id = node_id

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(JumpToNode(self.node_id))


def node_text(node: Node, ckpt: Checkpoint) -> Text:
    glyph, colour = status_glyph(node.status)
    out = Text.assemble(
        (f"{glyph} {clean(node.status or 'unknown', False)}", colour),
        "  ",
        (clean(node.label or "?", False), label_style(node.label) or "bold"),
    )
    if node.raw_label:
        out.append(f" ({clean(node.raw_label, False)})", style="bright_black")
    out.append(f"  depth {node.depth}  score ")
    out.append_text(score_text(node.score))
    if node.has_real_data:
        out.append("  real data", style="green")
    out.append("\n")
    out.append(clean(node.id, False), style="bold")
    if node.name:
        out.append("  " + preview(node.name, 60), style="italic")
    out.append(f"\ncreated {fmt_iso(node.created_at)}   completed {fmt_iso(node.completed_at)}\n")
    if node.scope_reconstructed:
        out.append(
            "scope reconstructed from parent_id (no ancestor_ids in the file)\n", style="yellow"
        )
    children = ckpt.children(node.id)
    out.append(
        f"children {len(children)}   memory entries {len(ckpt.entries_by_node.rows(node.id))}\n"
    )
    out.append("\ndirection (original_direction)\n", style="bold cyan")
    _, field = start_direction(node)
    if node.original_direction:
        out.append(clean(node.original_direction) + "\n")
    elif field == "original_direction":
        out.append("(empty: ARI searched with the experiment goal)\n", style="italic")
    else:
        out.append("– (not in the file)\n")
    for note in startup_notes(ckpt, node):
        out.append(f"start-up search: {clean(note, False)}\n", style="yellow")
    out.append("\neval_summary\n", style="bold cyan")
    out.append((clean(node.eval_summary) if node.eval_summary else "–") + "\n")
    if node.error_log:
        out.append("\nerror_log\n", style="bold red")
        out.append(clean(node.error_log[:ERROR_LOG_SHOWN]) + "\n")
        if len(node.error_log) > ERROR_LOG_SHOWN:
            out.append(
                cut_note(
                    ERROR_LOG_SHOWN,
                    len(node.error_log),
                    "characters",
                    "the node's error_log in the run's nodes_tree.json",
                )
                + "\n",
                style="yellow",
            )
    return out


def metrics_table(node: Node) -> Table:
    table = Table(
        title="metrics", title_justify="left", expand=False, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("metric", style="cyan")
    table.add_column("value", justify="right")
    for key, value in node.metrics.items():
        if isinstance(value, float):
            shown = metric_number(value)
        elif isinstance(value, (int, bool, str)) or value is None:
            shown = str(value)
        else:
            shown = pretty_json(value)
        table.add_row(safe_text(key, multiline=False), safe_text(preview(shown, 200)))
    return table


class NodePane(VerticalScroll):
    BORDER_TITLE = "Node"

    def compose(self) -> ComposeResult:
        yield HorizontalScroll(id="crumbs")
        yield Static(Text("Choose a node.", style="italic"), id="node-body")
        yield FindingsBox("", id="node-findings")
        yield Static("", id="node-metrics")

    def show_findings(self, findings: list) -> None:
        self.query_one("#node-findings", FindingsBox).show(findings)

    def show(self, node: Node, ckpt: Checkpoint) -> None:
        crumbs = self.query_one("#crumbs", HorizontalScroll)
        crumbs.remove_children()
        widgets: list[Static] = []
        lineage = ckpt.lineage(node.id)
        shown = lineage
        if len(lineage) > CRUMBS_HEAD + CRUMBS_TAIL:  # a widget per ancestor: 20,000 never open
            shown = [*lineage[:CRUMBS_HEAD], None, *lineage[-CRUMBS_TAIL:]]
        for position, nid in enumerate(shown):
            if nid is None:
                left_out = len(lineage) - CRUMBS_HEAD - CRUMBS_TAIL
                widgets.append(Static(f"… {left_out:,} more …", classes="crumb-sep"))
            else:
                is_self = nid == node.id
                label = short_id(nid) if nid in ckpt.nodes else f"{short_id(nid)}?"
                style = "bold reverse" if is_self else "underline"
                widgets.append(Crumb(nid, Text(label, style=style), classes="crumb"))
            if position < len(shown) - 1:
                widgets.append(Static(" › ", classes="crumb-sep"))
        crumbs.mount_all(widgets)
        self.query_one("#node-body", Static).update(node_text(node, ckpt))
        self.border_title = Text(f"Node · {short_id(node.id)}")  # the node, tree folded
        metrics = self.query_one("#node-metrics", Static)
        metrics.update(metrics_table(node) if node.metrics else Text("no metrics", style="italic"))


# ---------------------------------------------------------------- Audit


# the Audit title's nouns per row kind: "1 scope violation, 2 rejected writes"
KIND_NOUNS = {
    "violation": "scope violation",
    "second-hand": "second-hand leak",
    "rejected": "rejected write",
    "load": "load error",
    "search": "search error",
    "unattributed": "unattributed read",
}


# the same, shorter, for a title that would not fit on its line with the nouns above
KIND_SHORT = {"violation": "violation", "second-hand": "2nd-hand", "rejected": "rejected"}


def kind_count(kind: str, n: int, short: bool = False) -> str:
    if short and kind in KIND_SHORT:
        return f"{n:,} {KIND_SHORT[kind]}" if kind != "violation" else plural(n, "violation")
    return plural(n, KIND_NOUNS.get(kind, kind))


SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "bright_black"}
SEVERITY_SHORT = {"error": "err", "warning": "warn", "info": "info"}


def _counts(rows: list[AuditRow]) -> tuple[int, int]:
    """(problems, findings) among the Audit pane's rows."""
    problems = sum(1 for r in rows if r.kind in ("problem", "load", "search"))
    findings = sum(1 for r in rows if r.kind in ("leak", "violation", "second-hand", "rejected"))
    return problems, findings


class AuditPane(RowsPane[AuditRow]):
    """The run's problems and findings; Enter shows one in full, `o` there goes to its node."""

    BORDER_TITLE = "Audit"
    PREVIEWED = "audit-table"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[AuditRow] = []
        self.ui_problems: list[AuditRow] = []  # what went wrong in the app (load, search)
        self.audit_rows: list[AuditRow] = []  # the audit's findings
        self.verdict = ""  # what the audit's rows cannot say (tui/audit_rows.py)
        self.undrawn = False  # audit rows kept but not in the table yet (`set_audit`)

    def compose(self) -> ComposeResult:
        yield Static(Text("auditing…", style="italic"), id="audit-title")
        yield VimTable(id="audit-table")
        yield RowPreview(id="audit-preview")

    def set_audit(self, rows: list[AuditRow], verdict: str, draw: bool = True) -> tuple[int, int]:
        """The audit's rows; (problems, findings) among the pane's rows. With `draw` false
        they go into the table later (`draw_audit`, or when the pane is shown): the app
        holds them back until a run's first hits are on screen, which filling and measuring
        a big run's table would delay."""
        self.audit_rows, self.verdict = rows, verdict
        if not draw:
            self.undrawn = True
            return _counts(self.ui_problems + rows)
        return self._redraw()

    def draw_audit(self) -> None:
        if self.undrawn:
            self._redraw()

    def on_show(self) -> None:
        self.draw_audit()

    def add_problem(self, row: AuditRow) -> tuple[int, int]:
        if all(r.text != row.text for r in self.ui_problems):
            self.ui_problems.append(row)
        return self._redraw()

    def forget(self) -> None:
        """Another run is opening."""
        self.ui_problems, self.audit_rows, self.verdict = [], [], ""
        self.undrawn = False

    def _redraw(self) -> tuple[int, int]:
        """Show the app's problems, then the audit's rows; (problems, findings) among them."""
        rows = self.ui_problems + self.audit_rows
        self.undrawn = False
        self.show(rows)
        return _counts(rows)

    def show(self, rows: list[AuditRow]) -> None:
        """The title counts the rows by kind, each kind once, then gives the audit's verdict
        where the rows cannot; the border says "Audit" already, so the title is counts only."""
        self.rows = rows
        self._title()
        self.query_one("#audit-table", VimTable).fill(
            ["sev", "kind", "node", "what"],
            (
                (
                    str(i),
                    [
                        Text(
                            SEVERITY_SHORT.get(r.severity, r.severity),
                            style=SEVERITY_STYLES.get(r.severity, ""),
                        ),
                        r.kind,
                        short_id(r.node_id) if r.node_id else "–",
                        r.text,
                    ],
                )
                for i, r in enumerate(rows)
            ),
            reserve=True,
        )
        self.set_title(Text("Audit"))
        self.update_preview()

    def _title(self) -> None:
        """Each kind counted once, on one line: in shorter nouns where the pane is too narrow
        for the full ones (80 columns with the tree beside it)."""
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.kind] = counts.get(row.kind, 0) + 1
        said = ", ".join(kind_count(k, n) for k, n in counts.items())
        room = self.query_one("#audit-title", Static).content_region.width
        if room and len(said) > room:
            said = ", ".join(kind_count(k, n, short=True) for k, n in counts.items())
        title = Text(said or "nothing found", style="bold")
        if said and self.verdict:
            title.append(" · " + self.verdict, style="bright_black")
        self.query_one("#audit-title", Static).update(title)

    def on_resize(self) -> None:
        self._title()

    def detail_of(self, row: AuditRow) -> RowDetail:
        """The finding in full; `o` there goes to its node."""
        fields = (("severity", row.severity), ("kind", row.kind), ("node", row.node_id))
        return RowDetail(f"audit: {row.kind}", fields, row.text, row.node_id)
