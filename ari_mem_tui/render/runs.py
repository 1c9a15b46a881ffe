"""`ari-mem-tui runs DIR`: the runs of a workspace as a table or JSON (newest first).

The TUI's run picker shows the same rows (`run_cells`), so both always agree.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.text import Text

from ari_mem_tui.model.workspace import RunInfo, RunSummary, Workspace
from ari_mem_tui.render.table import cli_table
from ari_mem_tui.render.text import STATUS_GLYPHS, clean, fmt_ts, preview
from ari_mem_tui.render.words import plural

RUN_COLUMNS = (
    *("run", "created", "nodes", "done", "failed", "entries"),
    *("leaks", "scope", "rejected", "starved", "replay", "size", "last change"),
)
# what a width leaves out: under WIDE_FROM columns the times and sizes (a time is 23 cells
# whole), under MEDIUM_FROM the counts the summary does not hold (the run, its nodes and what
# its summary found stay; --json has all); no cell but the run's name is ever cut
WIDE_FROM, MEDIUM_FROM = 165, 110
MEDIUM_DROPS = ("created", "size", "last change")
NARROW_DROPS = (*MEDIUM_DROPS, "done", "failed", "entries")


def shown_columns(width: int) -> list[str]:
    """The columns a table `width` cells wide shows."""
    drops = () if width >= WIDE_FROM else MEDIUM_DROPS if width >= MEDIUM_FROM else NARROW_DROPS
    return [column for column in RUN_COLUMNS if column not in drops]


UNCHECKED = "unchecked"  # search/fidelity.py's word: no replay check ran


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
        *summary_cells(run.summary),
        Text(human_size(run.size), justify="right"),
        when(run.last_change),
    ]


def summary_cells(summary: RunSummary | None) -> list[Text]:
    """leaks, scope violations, rejected writes, starved nodes and the replay check of a
    run's summary ("·" each when it has none yet: `runs --scan` makes it)."""
    if summary is None:
        return [Text("·", justify="right", style="dim") for _ in range(5)]

    def count(value: int, style: str) -> Text:
        return Text(f"{value:,}", justify="right", style=style if value else "")

    starved = count(summary.starved, "yellow")
    if summary.unjudged:
        starved.append("?", style="dim")
    return [
        count(summary.leaks, "bold red"),
        count(summary.scope_violations, "red"),
        count(summary.rejected_writes, "yellow"),
        starved,
        replay_cell(summary),
    ]


def replay_cell(summary: RunSummary) -> Text:
    """`19/19` (reproduced of checked), else "unchecked"."""
    checked, reproduced = summary.replay_checked, summary.replay_reproduced
    if checked is None or reproduced is None:
        return Text(UNCHECKED, style="dim")
    style = "green" if checked and reproduced == checked else "red" if checked else ""
    return Text(f"{reproduced}/{checked}", justify="right", style=style)


def summary_legend(runs: list[RunInfo]) -> list[str]:
    """What the summary columns need said: runs without one, starved nodes not judged."""
    words = []
    missing = sum(1 for r in runs if r.summary is None and r.nodes)
    if missing:
        words.append(f"· {plural(missing, 'run')} not summarized yet (runs --scan)")
    rankers = Counter(
        r.summary.replay_ranker or "?"
        for r in runs
        if r.summary is not None and r.summary.replay_checked is not None
    )
    if rankers:  # a count of reproduced searches means nothing without what replayed them
        by = ", ".join(f"{name} ({plural(n, 'run')})" for name, n in sorted(rankers.items()))
        words.append(f"replay: recorded searches reproduced / checked, replayed by {by}")
    if any(r.summary is not None and r.summary.unjudged for r in runs):
        words.append(
            "starved ?: some nodes' start-up searches are not recorded (health judges them)"
        )
    return words


def when(ts: float | None) -> str:
    """A run's time as every time is shown, its zone named (`2026-05-28 21:52:06 UTC`)."""
    return fmt_ts(ts)


def runs_json(ws: Workspace) -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    return outputs.output(outputs.RunsOutput, ws.as_data())


def render_runs(console: Console, ws: Workspace) -> None:
    """The runs as a table, a line per run (render/table.py: times, counts and verdicts whole,
    the run's name cut to fit), the columns a narrow terminal has no room for left out and
    named."""
    shown = shown_columns(console.width)
    keep = [i for i, c in enumerate(RUN_COLUMNS) if c in shown]
    rows = []
    for run in ws.runs:
        cells = run_cells(run, name_width=30 if console.width < WIDE_FROM else 40)
        rows.append([cells[i] for i in keep])
    title = Text(f"{plural(len(ws.runs), 'run')} in {clean(ws.path, False)}, newest first")
    console.print(cli_table(title, list(shown), rows, flexible="run"))
    marks = _marks(ws.runs)
    if len(shown) < len(RUN_COLUMNS):
        dropped = ", ".join(c for c in RUN_COLUMNS if c not in shown)
        marks.append(f"{dropped}: in a wider terminal, or with --json")
    if marks:
        console.print(Text("   ".join(marks), style="dim"))


def _marks(runs: list[RunInfo]) -> list[str]:
    """What the table's marks mean, for those it shows."""
    marks = []
    if any(r.live for r in runs):
        marks.append(f"{STATUS_GLYPHS['running'][0]} may still be running (.ari_pid)")
    if any(r.recent is not None for r in runs):
        marks.append("★ opened recently")
    if any(r.problems for r in runs):
        marks.append("! a file could not be read whole (--json names it)")
    return marks + summary_legend(runs)
