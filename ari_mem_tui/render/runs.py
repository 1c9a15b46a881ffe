"""`ari-mem-tui runs DIR`: the runs of a workspace as a table or JSON (newest first).

The TUI's run picker shows the same rows (`run_cells`), so both always agree.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ari_mem_tui.model.workspace import RunInfo, Workspace
from ari_mem_tui.render.text import STATUS_GLYPHS, clean, fmt_ts, preview
from ari_mem_tui.render.words import plural

RUN_COLUMNS = ("run", "created", "nodes", "done", "failed", "entries", "size", "last change")
NARROW_DROPS = ("size", "last change")


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def _count(value: int | None) -> str:
    return "…" if value is None else f"{value:,}"


def run_cells(run: RunInfo, counted: bool = True, name_width: int = 40) -> list[Any]:
    """The picker's and the table's cells for one run (counts shown as … until known)."""
    name = Text(preview(run.folder or run.run_id, name_width))
    if run.live:
        name.append(f" {STATUS_GLYPHS['running'][0]}", style="yellow")
    if run.recent is not None:
        name.append(" ★", style="cyan")
    if run.problems:
        name.append(" !", style="bold red")
    nodes = run.nodes if counted or run.nodes is not None else None
    return [
        name,
        when(run.created),
        Text(_count(nodes) if counted else "…", justify="right"),
        Text(str(run.completed) if nodes is not None else "", justify="right", style="green"),
        Text(
            str(run.failed) if nodes is not None else "",
            justify="right",
            style="red" if run.failed else "",
        ),
        Text(
            _count(run.entries) if run.entries is not None or not counted else "–", justify="right"
        ),
        Text(human_size(run.size), justify="right"),
        when(run.last_change),
    ]


def when(ts: float | None) -> str:
    """Minutes are enough to tell runs apart; the year is kept (runs span years)."""
    if ts is None:
        return "–"
    text = fmt_ts(ts)
    return text[:16] if text[:4].isdigit() else text


def runs_json(ws: Workspace) -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    return outputs.output(outputs.RunsOutput, ws.as_data())


def render_runs(console: Console, ws: Workspace) -> None:
    table = Table(
        title=Text(f"{plural(len(ws.runs), 'run')} in {clean(ws.path, False)}, newest first"),
        title_justify="left",
    )
    narrow = console.width < 110  # size and last change go; the run's name is cut shorter
    keep = [i for i, c in enumerate(RUN_COLUMNS) if not (narrow and c in NARROW_DROPS)]
    for i in keep:
        table.add_column(RUN_COLUMNS[i], no_wrap=True)
    for run in ws.runs:
        cells = run_cells(run, name_width=24 if narrow else 40)
        table.add_row(
            *[c if isinstance(c, Text) else Text(str(c)) for i, c in enumerate(cells) if i in keep]
        )
    console.print(table)
    marks = []
    if any(r.live for r in ws.runs):
        marks.append(f"{STATUS_GLYPHS['running'][0]} may still be running (.ari_pid)")
    if any(r.recent is not None for r in ws.runs):
        marks.append("★ opened recently")
    if any(r.problems for r in ws.runs):
        marks.append("! a file could not be read whole (--json names it)")
    if narrow:
        dropped = " and ".join(c for c in RUN_COLUMNS if c in NARROW_DROPS)
        marks.append(f"{dropped}: in a terminal of 110 columns or more, or with --json")
    if marks:
        console.print(Text("   ".join(marks), style="dim"))
