"""A run's copy-on-write log as a table: the TUI's Writes tab and `ari-mem-tui writes` show the
same rows (`write_row`), filter and sort them alike (render/table.py)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ari_mem_tui.model import Checkpoint, CowWrite
from ari_mem_tui.render.table import Row, TableView, cli_table, csv_text
from ari_mem_tui.render.text import fmt_ts, preview, short_id
from ari_mem_tui.render.words import plural

# narrow (the default): when, accepted or not (a rejected write names its target: `✗ →b0000001`),
# who wrote it (whole run only: in a node's log that is the node) and the text, which gets the
# rest of the width; wide (`z`) adds the tool, the reason and the source. Every field: Enter.
WRITE_COLUMNS = ["time", "result", "by", "tool", "reason", "source", "text"]
WRITE_WIDE = ("tool", "reason", "source")
REASON_WIDTH = 40  # wide: the rest of a rejection's reason is in the row's view (Enter)
WRITES_SHOWN = 300  # rows of the Writes table: `w` fills it at a key (2,000 rows took 0.3 s)
REJECTED_SHOWN = 20  # rejected writes spelled out above it
WIDE_FROM = 160  # terminal columns: `writes` shows the wide columns too


def write_row(write: CowWrite, refused: CowWrite | None = None) -> list[object]:
    """The cells of WRITE_COLUMNS for one write; `refused`: the rejected write this accepted
    one is the node's own log of (ARI stores a refused call's result as a memory entry)."""
    writer = write.current_node or write.target_node
    if write.accepted and refused is not None:
        result = Text.assemble(("✓", "green"), (" log of ✗", "red"))
    elif write.accepted:
        result = Text("✓", style="green")
    elif write.target_node != writer:
        result = Text(f"✗ →{short_id(write.target_node)}", style="bold red")
    else:
        result = Text("✗", style="bold red")
    reason = preview(write.reason, REASON_WIDTH) if write.reason else None
    return [
        fmt_ts(write.ts),
        result,
        short_id(writer),
        write.tool,
        reason,
        write.source,
        write.text,
    ]


def refusals(writes: list[CowWrite]) -> dict[str, CowWrite]:
    """entry id → the rejected write it is the node's own log of."""
    return {w.logged_by: w for w in writes if not w.accepted and w.logged_by}


def refused_by(write: CowWrite, logs: dict[str, CowWrite]) -> CowWrite | None:
    """The rejected write that `write` (accepted) is the log of, if any."""
    return logs.get(write.entry_id) if write.accepted and write.entry_id else None


def write_rows(writes: list[CowWrite]) -> list[tuple[str, list[object]]]:
    """(key, cells) of every write: its index in `writes`, WRITE_COLUMNS' cells."""
    logs = refusals(writes)
    return [(str(i), write_row(w, refused_by(w, logs))) for i, w in enumerate(writes)]


def node_or_run_writes(ckpt: Checkpoint, node_id: str | None) -> list[CowWrite]:
    return list(ckpt.writes) if node_id is None else list(ckpt.node_writes(node_id))


def writes_json(ckpt: Checkpoint, node_id: str | None, writes: list[CowWrite]) -> dict[str, Any]:
    """`writes --json`: the node's (or the whole run's) CoW log, every field of each write
    (render/outputs.py WritesOutput)."""
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models where JSON is made

    data = {
        "path": str(ckpt.path),
        "node_id": node_id,
        "scope": "node" if node_id is not None else "run",
        "count": len(writes),
        "rejected": sum(1 for w in writes if not w.accepted),
        "writes": [w.as_data() for w in writes],
    }
    return outputs.output(outputs.WritesOutput, data)


def writes_csv(writes: list[CowWrite], view: TableView) -> str:
    return csv_text(WRITE_COLUMNS, view.apply(WRITE_COLUMNS, write_rows(writes)))


def render_writes(
    console: Console,
    node_id: str | None,
    writes: list[CowWrite],
    view: TableView,
) -> None:
    """The log as the Writes tab's table: its narrow columns (time, result, by, text; in a
    terminal of WIDE_FROM columns, the tool, the reason and the source too), the text cut to the
    width (`writes --json` or `--csv` have every field whole)."""
    rows = view.apply(WRITE_COLUMNS, write_rows(writes))
    title = _title(node_id, writes, view.words(len(rows), len(writes)))
    wide = console.width >= WIDE_FROM
    shown = [
        c for c in WRITE_COLUMNS if (wide or c not in WRITE_WIDE) and not (node_id and c == "by")
    ]
    console.print(cli_table(title, shown, _cells(rows, shown), flexible="text"))


def _title(node_id: str | None, writes: list[CowWrite], words: str) -> Text:
    """Whose log it is, how many writes and how many rejected, then what the filter and the
    order show of them (`words`, empty when neither is set)."""
    scope = f"node {short_id(node_id)}" if node_id else "whole run"
    rejected = sum(1 for w in writes if not w.accepted)
    title = Text.assemble(
        ("Writes ", "bold"),
        f"({scope}): {plural(len(writes), 'write')}, ",
        (f"{rejected} rejected", "bold red" if rejected else "green"),
    )
    if words:
        title.append(f" · {words}", style="bold")
    return title


def _cells(rows: list[Row], shown: list[str]) -> list[list[Any]]:
    """The `shown` columns' cells of each row, "–" where a cell is empty, the text on one
    line (the table cuts it to the terminal's width)."""
    keep = [WRITE_COLUMNS.index(c) for c in shown]
    cells = [[row[i] if row[i] is not None else "–" for i in keep] for _, row in rows]
    for line in cells:
        line[-1] = preview(line[-1], 200)
    return cells
