"""`ari-mem-tui health CKPT`: memory health of a run as text or JSON; exit 1 when starved.

The TUI's Health screen shows the same `Health` (computed by `health.compute_health`), so the
numbers agree; `spark` draws the same plots the screen draws with Textual's Sparkline.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ari_mem_tui.health import by_depth_ranges
from ari_mem_tui.model.health import Bucket, EntryUse, Health, NodeHealth
from ari_mem_tui.render.table import CliTable, cli_table
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import plural
from ari_mem_tui.search.in_memory import NAME as IN_MEMORY

BLOCKS = " ▁▂▃▄▅▆▇█"
SHOWN_NODES = 20
SHOWN_DEPTHS = 30  # more depths than this are shown in ranges (--json has every one)
SHOWN_ENTRIES = 10


def pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def spark(values: list[float], top: float | None = None) -> str:
    """One character per value, ▁ … █ scaled to `top` (default: the largest value)."""
    if not values:
        return ""
    top = max(values) if top is None else top
    if top <= 0:
        return BLOCKS[1] * len(values)
    steps = len(BLOCKS) - 2
    return "".join(BLOCKS[1 + round(min(v, top) / top * steps)] for v in values)


def starved_share(bucket: Bucket) -> float:
    return bucket.starved / bucket.nodes if bucket.nodes else 0.0


def headline(h: Health) -> Text:
    text = Text()
    text.append(f"{plural(h.searched, 'node')} searched, ", style="bold")
    share = h.starved / h.searched if h.searched else 0.0
    text.append(
        f"{h.starved} starved ({pct(share)})", style="bold red" if h.starved else "bold green"
    )
    in_memory = h.ranker == IN_MEMORY  # ARI's in-memory rule: no top_k, no window
    text.append(f" · limit {h.limit}" + ("" if in_memory else f", window top_k {h.top_k}"))
    if h.pool != "start":
        text.append(" · today's pool")
    if h.drop:
        text.append(f" · left out: {', '.join(h.drop)}")
    text.append(f" · hits: {h.recorded} recorded, {h.replayed} replayed ({clean(h.ranker, False)})")
    if h.fidelity is not None:
        exact = h.fidelity.exact is True
        text.append(f"\nranker {clean(h.fidelity.label, False)}", "green" if exact else "yellow")
    if not h.complete:
        text.append(" · INTERRUPTED", style="bold yellow")
    return text


def worst_nodes(h: Health, n: int = SHOWN_NODES) -> list[NodeHealth]:
    """Starved nodes first (largest shortfall, then most crowded), then the most crowded."""
    rows = [r for r in h.nodes if r.searched]
    rows.sort(key=lambda r: (not r.starved, -r.shortfall, -r.share_other - r.share_react))
    return rows[:n]


def node_cells(row: NodeHealth) -> list[Any]:
    hits = Text(f"{row.hits}/{min(row.limit, row.eligible)}")
    hits.stylize("bold red" if row.starved else "green")
    return [
        Text(short_id(row.node_id), style="cyan"),
        str(row.depth),
        str(row.eligible),
        str(row.reached),
        hits,
        row.hits_source,
        pct(row.share_other),
        pct(row.share_tool),
        pct(row.share_react),
        Text("starved", style="bold red") if row.starved else Text("ok", style="green"),
    ]


NODE_COLUMNS = (
    "node",
    "depth",
    "eligible",
    "reached",
    "hits",
    "from",
    "other",
    "tool",
    "react",
    "verdict",
)
DEPTH_COLUMNS = ("depth", "nodes", "starved", "other branches", "tool entries", "react", "reached")
ENTRY_COLUMNS = ("node", "kind", "startup", "inherit", "llm", "other", "readers↓", "text")


def depth_cells(b: Bucket) -> list[Any]:
    return [
        b.label.removeprefix("depth "),
        str(b.nodes),
        Text(f"{b.starved} ({pct(starved_share(b))})", style="red" if b.starved else ""),
        pct(b.mean_share_other),
        pct(b.mean_share_tool),
        pct(b.mean_share_react),
        pct(b.mean_reached),
    ]


def entry_cells(u: EntryUse, width: int = 60) -> list[Any]:
    return [
        Text(short_id(u.node_id), style="cyan"),
        preview(u.kind or "–", 16),
        str(u.startup),
        str(u.inherit),
        str(u.llm),
        str(u.other),
        str(u.descendant_readers),
        Text(preview(u.text, width)),
    ]


def time_label(bucket: Bucket) -> str:
    """A time slice's start as every time is shown (`2026-05-28 21:52:06 UTC`): to the
    second, so the ends of a short run's axis are not the same minute twice."""
    return fmt_ts(bucket.start) if bucket.start is not None else bucket.label


def titled_table(title: str, columns: tuple[str, ...], rows: list[list[Any]]) -> CliTable:
    """Ids, counts and verdicts whole at any width; only the text is cut (render/table.py)."""
    return cli_table(title, columns, rows, flexible="text")


def render_health(console: Console, h: Health) -> None:
    title = f"Memory health of {clean(h.run_id or '?', False)}"
    console.print(Text(title, style="bold underline"), soft_wrap=True)  # the run id whole
    console.print(headline(h))
    console.print(depth_table(h))
    if h.over_time:
        print_over_time(console, h.over_time)
    worst = worst_nodes(h)
    if worst:
        console.print(
            titled_table(
                f"Nodes, starved first ({min(len(worst), SHOWN_NODES)} of {h.searched})",
                NODE_COLUMNS,
                [node_cells(r) for r in worst],
            )
        )
    if h.complete:  # an interrupted pass counted no retrievals (a note says so)
        print_entries(console, h)
    for note in h.notes:
        console.print(Text(f"note: {clean(note, False)}", style="dim"))


def depth_table(h: Health) -> CliTable:
    """The table by depth: one row per depth, or, past SHOWN_DEPTHS depths, per range of
    depths (a 20,000-deep chain would print 20,000 rows; --json keeps every depth)."""
    depths, title = h.by_depth, "By depth (means over searched nodes)"
    if len(depths) > SHOWN_DEPTHS:
        depths = by_depth_ranges([r for r in h.nodes if r.searched], SHOWN_DEPTHS)
        title += f", {len(h.by_depth):,} depths in {len(depths)} ranges (each depth: --json)"
    return titled_table(title, DEPTH_COLUMNS, [depth_cells(b) for b in depths])


def print_over_time(console: Console, over_time: list[Bucket]) -> None:
    """The starved share and how crowded the window was, over slices of start time."""
    starved = [starved_share(b) for b in over_time]
    crowd = [b.mean_share_other + b.mean_share_react for b in over_time]
    console.print(
        Text(
            "Over time (slices of start time, "
            f"{time_label(over_time[0])} → {time_label(over_time[-1])}):",
            "bold",
        )
    )
    console.print(Text(f"  starved share   {spark(starved, 1.0)}  max {pct(max(starved))}"))
    console.print(Text(f"  window crowded  {spark(crowd, 1.0)}  max {pct(max(crowd))}"))


def print_entries(console: Console, h: Health) -> None:
    """How the run's entries were retrieved: the counts, what could not be counted, and the
    most retrieved and never retrieved entries (the first SHOWN_ENTRIES of each)."""
    e = h.entries
    console.print(
        Text(
            f"Entries: {e.total} node-scope, {e.by_descendants} retrieved by a descendant, "
            f"{e.never_by_descendant} never retrieved by any descendant, "
            f"{e.never_searched} never returned by a descendant's search, "
            f"{e.leaf_entries} of nodes without descendants",
            style="bold",
        )
    )
    reads = ", ".join(f"{k} {v}" for k, v in sorted(e.reads.items()))
    console.print(Text(f"  retrievals: {reads or 'none'}", style="dim"))
    console.print(
        Text("  readers↓ = distinct descendants of the entry's node that read it", style="dim")
    )
    if e.unresolved or e.bulk_reads or e.from_trace_log:
        console.print(
            Text(
                f"  {plural(e.unresolved, 'result row')} not in the loaded memory, "
                f"{plural(e.bulk_reads, 'bulk row')} without entry ids, "
                f"{plural(e.from_trace_log, 'read')} from trace_log only",
                style="dim",
            )
        )
    text_width = max(12, console.width - 72)  # the other columns stay whole
    if h.top_entries:
        more = len(h.top_entries) > SHOWN_ENTRIES
        console.print(
            titled_table(
                "Most retrieved entries"
                + (
                    f" (first {SHOWN_ENTRIES} of {len(h.top_entries):,}; all: --json)"
                    if more
                    else ""
                ),
                ENTRY_COLUMNS,
                [entry_cells(u, text_width) for u in h.top_entries[:SHOWN_ENTRIES]],
            )
        )
    if h.never_retrieved:
        console.print(
            titled_table(
                f"Never retrieved by a descendant (first {SHOWN_ENTRIES} of "
                f"{e.never_by_descendant}; all: --json --all-entries)",
                ENTRY_COLUMNS,
                [entry_cells(u, text_width) for u in h.never_retrieved[:SHOWN_ENTRIES]],
            )
        )


def health_json(h: Health) -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    return outputs.output(outputs.HealthOutput, h.as_data())
