"""`ari-mem-tui summary CKPT`: load a checkpoint and say what it holds and what was wrong.

Exit 0 when the checkpoint loaded (problems or not), 2 when it could not be read at all (no such
directory, or no tree in it). Every string from the files is printed as data, never as markup.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ari_mem_tui.checkpoint.load import checkpoint_hash
from ari_mem_tui.model import Checkpoint, Problem
from ari_mem_tui.render.text import clean as clean_text
from ari_mem_tui.render.words import plural


def clean(text: str) -> str:
    """One line of terminal-safe text (the one cleaner every output path uses)."""
    return clean_text(text, multiline=False)


def counts(ckpt: Checkpoint) -> dict[str, Any]:
    kinds = ckpt.entries.kind_counts()  # (columns: counted in C, no row read)
    ops = ckpt.access_events.op_counts()
    readers = ckpt.access_events.read_hows()
    severities = Counter(p.severity for p in ckpt.problems)
    return {
        "nodes": len(ckpt.nodes),
        "roots": len(ckpt.roots),
        "entries": len(ckpt.entries),
        "node_scope": kinds.get("node_scope", 0),
        "react_step": kinds.get("react_step", 0),
        "partial_entries": ckpt.entries.partial_count(),
        "events": len(ckpt.access_events),
        "reads": ops.get("read", 0),
        "write_events": ops.get("write", 0),
        "reads_by_attribution": dict(readers),
        "trace_calls": ckpt.trace_call_count(),
        "writes": sum(ckpt.write_counts()),
        "accepted_writes": ckpt.write_counts()[0],
        "rejected_writes": ckpt.write_counts()[1],
        "problems": len(ckpt.problems),
        "problems_by_severity": dict(severities),
    }


def summary_json(ckpt: Checkpoint, source: str = "") -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    data = {
        "path": str(ckpt.path),
        "memory_source": source or f"files: {ckpt.path}",
        "checkpoint_hash": ckpt.checkpoint_hash or checkpoint_hash(ckpt.path),
        "run_id": ckpt.run_id,
        "tree_source": ckpt.tree_source,
        "core": {
            "seeded": ckpt.core.seeded,
            "source": ckpt.core.source,
            "approximate": ckpt.core.approximate,
        },
        "counts": counts(ckpt),
        "access_summary": ckpt.access_summary,
        "problems": [p.as_data() for p in ckpt.problems],
    }
    return outputs.output(outputs.SummaryOutput, data)


def loaded(ckpt: Checkpoint) -> bool:
    return ckpt.path.is_dir() and ckpt.tree_source is not None


def render(ckpt: Checkpoint, console: Console, source: str = "") -> None:
    numbers = counts(ckpt)
    title = Text("checkpoint ")
    title.append(clean(str(ckpt.path)), style="bold")
    console.print(title)
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim")
    facts.add_column(overflow="fold")
    facts.add_row("run id", Text(clean(ckpt.run_id or "?")))
    facts.add_row("tree from", Text(clean(ckpt.tree_source or "no tree")))
    facts.add_row("hash", Text(ckpt.checkpoint_hash or checkpoint_hash(ckpt.path)))
    own = f"files: {ckpt.path}"  # the header named the path: not again
    facts.add_row(
        "memory", Text(clean("the checkpoint's files" if source in ("", own) else source))
    )
    facts.add_row("nodes", Text(f"{numbers['nodes']} ({plural(numbers['roots'], 'root')})"))
    facts.add_row(
        "entries",
        Text(
            f"{numbers['entries']} ({numbers['node_scope']} node_scope, {numbers['react_step']} "
            f"react_step, {numbers['partial_entries']} partial)"
        ),
    )
    facts.add_row(
        "events",
        Text(
            f"{numbers['events']} in the access log ({numbers['reads']} reads, "
            f"{numbers['write_events']} writes)"
        ),
    )
    facts.add_row(  # node-memory writes judged by ARI's copy-on-write rule; rejected ones
        "writes",  # are in trace_log only, so the two write counts can differ
        Text(
            f"{numbers['writes']} to node memory ({numbers['accepted_writes']} accepted, "
            f"{numbers['rejected_writes']} rejected by copy-on-write)"
        ),
    )
    core = "seeded" if ckpt.core.seeded else "not seeded"
    if ckpt.core.source:
        core += f" from {clean(ckpt.core.source)}" + (
            " (approximate)" if ckpt.core.approximate else ""
        )
    facts.add_row("core", Text(core))
    facts.add_row("problems", Text(str(numbers["problems"])))
    console.print(facts)
    styles = {"error": "red", "warning": "yellow", "info": "dim"}
    for problem in ckpt.problems:
        line = Text(f"{problem.severity:7} ", style=styles[problem.severity])
        line.append(clean(problem_line(problem, ckpt)))
        console.print(line)


def problem_line(problem: Problem, ckpt: Checkpoint) -> str:
    """A problem's line, without the checkpoint's path when it is about the folder itself:
    the path was said already (the header, `cannot read PATH:`)."""
    line = problem.line()
    return line.removeprefix(f"{problem.file}: ") if problem.file == str(ckpt.path) else line
