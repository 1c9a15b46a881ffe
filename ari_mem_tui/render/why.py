"""A why-not answer (search/why.py) in words: `saw NODE --why ENTRY`, its JSON, and the TUI's
why view (`Y`) all print this, so they say the same thing.

Each step of the node's start-up search is one line with its numbers; the verdict (the first
step that failed, or "seen") comes first, then every step in ARI's order, marked ✓ passed,
✗ failed, · does not apply. Memory text and ids are data: cleaned, never markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ari_mem_tui.model.why import FAIL, PASS, SEEN, WhyAnswer, WhyStep
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import fmt_score

MARKS = {PASS: ("✓", "green"), FAIL: ("✗", "bold red"), "n/a": ("·", "bright_black")}
STEP_NAMES = {
    "searched": "searched",
    "time": "in the pool",
    "searchable": "searchable",
    "scope": "in scope",
    "window": "in the window",
    "match": "a word matches",
    "limit": "within the limit",
    "context": "in the context",
}
VERDICT_WORDS = {
    "searched": "no start-up search",
    "time": "not in the pool yet",
    "searchable": "not searchable",
    "scope": "not in the node's scope",
    "window": "in scope but below the window",
    "match": "no word of the query in it",
    "limit": "in the window but below the limit",
    "context": "seen by ARI but dropped from the context",
    SEEN: "seen",
}
BY_NODE_SHOWN = 4


def _node(node_id: str | None) -> str:
    return short_id(node_id) if node_id else "no node"


def _delta(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 120:
        return f"{seconds:.2f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _lineage(ids: list[str]) -> str:
    return " → ".join(_node(i) for i in ids)


# ------------------------------------------------------------------ one line per step
def _searched(s: WhyStep) -> str:
    if s.reason == "root":
        return "the node is a root: ARI searches nothing without ancestors"
    if s.reason == "never-started":
        return "the node never started (pending): it made no start-up search"
    at = s.numbers.get("at")
    when = f"as of {fmt_ts(at)} ({clean(s.numbers.get('at_source') or '?', False)})"
    if at is None:
        when = "today's whole pool"
    return f"its start-up search ranked {when}, limit {s.numbers.get('limit')}"


def _time(s: WhyStep) -> str:
    n = s.numbers
    if s.reason == "today's pool":
        return "today's pool was ranked: every entry written so far is in it"
    if s.reason == "no ts":
        return "it has no time stamp: it is in every as-of pool"
    written, search = fmt_ts(n.get("written")), fmt_ts(n.get("search"))
    delta = _delta(n.get("after_s", 0.0))
    if s.reason == "before":
        return f"written {written}, {delta} before the search ({search})"
    who = "by the node itself " if s.reason == "own-after-search" else ""
    return (
        f"written {who}{written}, {delta} after its start-up search ({search},"
        f" {clean(n.get('search_source') or '?', False)}): not in the pool that search ranked"
    )


def _searchable(s: WhyStep) -> str:
    n = s.numbers
    if s.reason == "react-store":
        return (
            "a ReAct step: ARI's in-memory backend keeps it in the react store, which"
            " search_memory never reads"
        )
    if s.reason == "react-kind":
        return (
            "a ReAct step (kind react_step): it is ranked with the rest of the pool, but ARI's"
            " post-filter keeps node_scope passages only"
        )
    if s.reason == "other-checkpoint":
        return (
            f"another checkpoint's passage (ari_checkpoint {clean(n['entry_checkpoint'], False)},"
            f" this run's {clean(n['run_checkpoint'], False)}): ARI's post-filter drops it"
        )
    return "a node-scope entry of this checkpoint"


def _scope(s: WhyStep) -> str:
    n = s.numbers
    writer = _node(n.get("writer"))
    if s.reason == "ancestor":
        return f"written by {writer}, an ancestor (depth {n['depth']} of the node's lineage)"
    if s.reason == "own":
        return "the node's own entry: ARI searches its ancestors' entries only"
    if s.reason == "no-node":
        return f"written by no node of this tree ({clean(n.get('writer') or 'none', False)})"
    if s.reason == "descendant":
        return f"written by {writer}, a descendant of the node: ARI searches ancestors only"
    common = n.get("common_ancestor")
    meet = (
        f"nearest common ancestor {_node(common)} (depth {n['common_depth']})"
        if common is not None
        else "no common ancestor (another root)"
    )
    return (
        f"written by {writer}, not an ancestor: {meet}; the node's lineage"
        f" {_lineage(n['node_lineage'])}, the writer's {_lineage(n['writer_lineage'])}"
    )


def _window(s: WhyStep) -> str:
    n = s.numbers
    if s.status != FAIL:
        if s.reason == "windowless":
            return "no window: ARI's in-memory backend scores the node's ancestors' entries only"
        if s.reason == "not in the pool":
            return "not ranked: it was not in the pool"
        return (
            f"global rank {n['global_rank']} of the window's {n['window']} (top_k {n['top_k']},"
            f" a pool of {n['pool']:,})"
        )
    rank = n.get("global_rank")
    where = (
        f"global rank {rank} (0-based) in a pool of {n['pool']:,}"
        if rank is not None
        else f"not among the server's {n['window']} (its global rank past them is unknown)"
    )
    return (
        f"{where}: below the window, which holds ranks 0–{n['window'] - 1} (top_k"
        f" {n['top_k']}); filled by {_filled(n)}"
    )


RELATION_WORDS = {
    "other-branch": "other branches",
    "ancestor": "the lineage",
    "own": "the node's own",
    "react": "ReAct steps",
}


def _filled(n: dict[str, Any]) -> str:
    """`153 rows of other branches (a1b2c3d4 60, …), 44 of the lineage, 3 ReAct steps`."""
    parts = []
    rows = n.get("filled_by", [])
    for relation, count in n.get("by_relation", {}).items():
        mine = [r for r in rows if r["relation"] == relation]
        detail = ""
        if relation != "react":
            shown = ", ".join(f"{_node(r['node_id'])} {r['rows']}" for r in mine[:BY_NODE_SHOWN])
            more = f", {len(mine) - BY_NODE_SHOWN} more nodes" if len(mine) > BY_NODE_SHOWN else ""
            detail = f" ({shown}{more})"
        parts.append(f"{count} rows of {RELATION_WORDS.get(relation, relation)}{detail}")
    return "; ".join(parts) or "nothing"


def _match(s: WhyStep) -> str:
    n = s.numbers
    if s.status == "n/a":
        if s.reason == "windowed":
            return "a ranker with a window scores every entry: no keyword match is needed"
        return "not scored: it is not in the node store the search read"
    words = ", ".join(clean(w, False) for w in n.get("words", []))
    if s.reason == "blank query":
        return "a blank query: every entry is kept, score 0"
    if s.status == FAIL:
        return (
            f"none of the query's {len(n['words'])} words ({words}) is in its text: score 0,"
            " which ARI's in-memory backend drops"
        )
    return (
        f"{len(n['found'])} of the query's {len(n['words'])} words in its text: score"
        f" {fmt_score(n['score'])}"
    )


def _limit(s: WhyStep) -> str:
    n = s.numbers
    if s.status == "n/a":
        return "not among the entries the ranking kept for the node"
    glob = f", global rank {n['global_rank']}" if "global_rank" in n else ""
    if s.status == PASS:
        return f"rank {n['rank']} of {n['kept']} kept (limit {n['limit']}): score {fmt_score(n['score'])}{glob}"
    last = n["last_hit"]
    last_glob = f", global rank {last['global_rank']}" if "global_rank" in last else ""
    return (
        f"rank {n['rank']} among the {n['kept']} ancestor entries the ranking kept, past the"
        f" limit of {n['limit']}: score {fmt_score(n['score'])}{glob}, beside the last hit's"
        f" {fmt_score(last['score'])} (rank {last['rank']}{last_glob})"
    )


def _context(s: WhyStep) -> str:
    n = s.numbers
    if s.status == "n/a":
        return "not a hit: nothing to put in the context"
    if s.reason == "blank":
        return "a hit, but its text is blank: Tier 2 skips it"
    if s.reason == "in-tier-1b":
        return (
            f"hit {n['rank']}, but Tier 2 skips it: its first {n['chars']} characters are already"
            f" in Tier 1b (entry {clean(n['tier_1b_entry'], False)} of"
            f" {_node(n.get('tier_1b_node'))}, the ancestor conclusions)"
        )
    cut = ", cut at 400 characters" if n.get("cut") else ""
    return f"in the context: Tier 2's supplement, hit {n['rank']}{cut}"


SAYS: dict[str, Callable[[WhyStep], str]] = {
    "searched": _searched,
    "time": _time,
    "searchable": _searchable,
    "scope": _scope,
    "window": _window,
    "match": _match,
    "limit": _limit,
    "context": _context,
}


def step_words(step: WhyStep) -> str:
    return SAYS[step.key](step)


def headline(a: WhyAnswer) -> str:
    """The answer in one line: the verdict, and the failing step (or the hit) in words."""
    node = _node(a.node_id)
    if a.verdict == SEEN:
        return f"node {node} saw it: {hit_words(a)}"
    step = a.step(a.verdict)
    return f"node {node} did not see it: {VERDICT_WORDS[a.verdict]}: {step_words(step)}"


def hit_words(a: WhyAnswer) -> str:
    """For a hit: its rank and score, and the next entry out."""
    h = a.hit
    if h is None:
        return ""
    glob = f", global rank {h['global_rank']}" if h["global_rank"] >= 0 else ""
    said = f"rank {h['rank']} of {h['hits']}, score {fmt_score(h['score'])}{glob}"
    out = h.get("next_out")
    if out is None:
        return said + "; no entry out: every eligible entry is a hit"
    who = f"entry {clean(out['entry_id'], False)} of {_node(out['node_id'])}"
    if out["where"] == "below the window":
        glob = out.get("global_rank")
        at = f"global rank {glob}" if glob is not None else "global rank unknown"
        return said + f"; next out: {who}, below the window ({at})"
    glob = f", global rank {out['global_rank']}" if out.get("global_rank") is not None else ""
    return said + f"; next out: {who} at rank {out['rank']}, score {fmt_score(out['score'])}{glob}"


def recorded_words(a: WhyAnswer) -> str | None:
    r = a.recorded
    if r is None:
        return None
    if r["returned"]:
        said = f"the recorded start-up search returned it at rank {r['rank']}, score {fmt_score(r['score'])}"
    else:
        said = "the recorded start-up search did not return it"
    hit = a.hit is not None
    if hit != r["returned"]:
        said += f" (this replay disagrees: ranker {clean(a.fidelity.label or a.embedder, False)})"
    return said


def why_text(a: WhyAnswer) -> Group:
    """The answer as the CLI prints it and the TUI's why view shows it: a head, then the steps
    in a grid, so that a step's sentence wraps under itself, not under its mark."""
    # (the entry's text is a preview: one line, cut where the screen ends)
    text = Text(f"  {preview(a.text, 100)}", style="italic", no_wrap=True, overflow="ellipsis")
    notes = [Text(f"note: {clean(note, False)}", style="dim") for note in a.notes]
    return Group(_title(a), text, _head(a), _steps(a), *notes)


def _title(a: WhyAnswer) -> Text:
    out = Text()
    out.append("why ", style="bold")
    out.append(f"node {_node(a.node_id)}", style="bold cyan")
    out.append(" and entry ", style="bold")
    out.append(clean(a.entry_id, False), style="bold")
    out.append(f" ({a.kind}, written by {_node(a.entry_node)})", style="cyan")
    return out


def _head(a: WhyAnswer) -> Text:
    out = Text()
    verdict_style = "bold green" if a.verdict == SEEN else "bold red"
    out.append(f"{VERDICT_WORDS[a.verdict]}: ", style=verdict_style)
    out.append(hit_words(a) if a.verdict == SEEN else step_words(a.step(a.verdict)))
    out.append("\n")
    said = recorded_words(a)
    if said:
        out.append(said + "\n", style="yellow" if "disagrees" in said else "")
    out.append(
        f"search: query {clean(preview(a.query, 90), False)!r} ({clean(a.query_source, False)});"
        f" limit {a.params.get('limit')}, top_k {a.params.get('top_k')}; ranker"
        f" {clean(a.fidelity.label or a.embedder, False)}\n",
        style="dim",
    )
    out.append("steps, in ARI's order:", style="bold")
    return out


def _steps(a: WhyAnswer) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=3, justify="right")  # (two spaces of indent, then the mark)
    grid.add_column(width=max(len(name) for name in STEP_NAMES.values()) + 1)
    grid.add_column()
    for step in a.steps:
        if step.reason in ("windowed", "windowless"):  # the other kind of ranker's step
            continue
        mark, style = MARKS.get(step.status, ("?", ""))
        grid.add_row(
            Text(mark, style=style),
            Text(STEP_NAMES[step.key], style="bold" if step.status == FAIL else ""),
            Text(step_words(step), style="" if step.status != "n/a" else "dim"),
        )
    return grid


def why_json(a: WhyAnswer) -> dict[str, Any]:
    """The answer's fields, each step's sentence beside its numbers, and the headline."""
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    data = a.as_data()
    data["headline"] = headline(a)
    for step, dumped in zip(a.steps, data["steps"], strict=True):
        dumped["says"] = step_words(step)
    return outputs.output(outputs.WhyOutput, data)
