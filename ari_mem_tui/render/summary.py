"""`ari-mem-tui summary CKPT`: load a checkpoint and say what it holds and what was wrong.

Exit 0 when the checkpoint loaded (problems or not), 2 when it could not be read at all (no such
directory, or no tree in it). Every string from the files is printed as data, never as markup.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
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


def summary_json(ckpt: Checkpoint, source: str = "", check: Any = None) -> dict[str, Any]:
    """`check`: the run's replay check (search/check.py), `replay_check` in the JSON."""
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    found = getattr(check, "hash", None)
    data = {
        "path": str(ckpt.path),
        "memory_source": source or f"files: {ckpt.path}",
        "checkpoint_hash": found.hash
        if found
        else ckpt.checkpoint_hash or checkpoint_hash(ckpt.path),
        "checkpoint_hash_source": found.as_data() if found else None,
        "replay_check": check_json(check),
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


def check_json(check: Any) -> dict[str, Any] | None:
    """The replay check as `summary --json` has it: every search's result left out (the text
    names the nodes that differ; `saw NODE` shows each)."""
    if check is None:
        return None
    data = check.as_data()
    data.pop("searches", None)
    data.pop("hash", None)  # (`checkpoint_hash_source`)
    keys = ("ranker", "checked", "reproduced", "differs", "by_kind", "word", "label", "note")
    keys += ("complete",)
    return {key: data[key] for key in keys}


def loaded(ckpt: Checkpoint) -> bool:
    return ckpt.path.is_dir() and ckpt.tree_source is not None


def render(ckpt: Checkpoint, console: Console, source: str = "", check: Any = None) -> None:
    numbers = counts(ckpt)
    title = Text("checkpoint ")
    title.append(clean(str(ckpt.path)), style="bold")
    console.print(title, soft_wrap=True)  # a long path is never folded onto its own line
    facts: list[tuple[str, str | Text]] = [
        ("run id", clean(ckpt.run_id or "?")),
        ("tree from", clean(ckpt.tree_source or "no tree")),
    ]
    found = getattr(check, "hash", None)
    if found is not None:
        facts.append(("hash", clean(found.line().removeprefix("hash "))))
    else:
        facts.append(("hash", ckpt.checkpoint_hash or checkpoint_hash(ckpt.path)))
    own = f"files: {ckpt.path}"  # the header named the path: not again
    facts.append(("memory", clean("the checkpoint's files" if source in ("", own) else source)))
    facts.append(("nodes", f"{numbers['nodes']} ({plural(numbers['roots'], 'root')})"))
    entries = (
        f"{numbers['entries']} ({numbers['node_scope']} node_scope, {numbers['react_step']} "
        f"react_step, {numbers['partial_entries']} partial)"
    )
    events = (
        f"{numbers['events']} in the access log ({numbers['reads']} reads, "
        f"{numbers['write_events']} writes)"
    )
    # node-memory writes judged by ARI's copy-on-write rule; rejected ones are in trace_log
    # only, so the two write counts can differ
    writes = (
        f"{numbers['writes']} to node memory ({numbers['accepted_writes']} accepted, "
        f"{numbers['rejected_writes']} rejected by copy-on-write)"
    )
    facts += [("entries", entries), ("events", events), ("writes", writes)]
    core = "seeded" if ckpt.core.seeded else "not seeded"
    if ckpt.core.source:
        core += f" from {clean(ckpt.core.source)}" + (
            " (approximate)" if ckpt.core.approximate else ""
        )
    facts.append(("core", core))
    if check is not None:
        facts.append(("replays", check_text(check)))
    facts.append(("problems", str(numbers["problems"])))
    width = max(len(name) for name, _ in facts)
    for name, value in facts:  # lines, not a grid: a grid pads each line with spaces
        console.print(Text.assemble((f"{name:<{width}}  ", "dim"), value), soft_wrap=True)
    styles = {"error": "red", "warning": "yellow", "info": "dim"}
    for problem in ckpt.problems:
        line = Text(f"{problem.severity:7} ", style=styles[problem.severity])
        line.append(clean(problem_line(problem, ckpt)))
        console.print(line)


def check_text(check: Any) -> Text:
    """The replay check in a line: green only when it is exact, with its note when nothing
    was checked."""
    style = {"exact": "green", "stand-in": "yellow"}.get(check.word, "yellow")
    if check.word == "not reproduced":
        style = "bold red"
    text = Text(clean(check.line()), style=style)
    if check.note and not check.checked:
        text.append(f"\n{clean(check.note)}", style="dim")
    return text


def problem_line(problem: Problem, ckpt: Checkpoint) -> str:
    """A problem's line, without the checkpoint's path when it is about the folder itself:
    the path was said already (the header, `cannot read PATH:`)."""
    line = problem.line()
    return line.removeprefix(f"{problem.file}: ") if problem.file == str(ckpt.path) else line
