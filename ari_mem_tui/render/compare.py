"""Two nodes side by side: their default start-up searches and context, aligned at their
common ancestor; what only one side has marked `◆`. The TUI's compare view (`m`, then `c`)
and `ari-mem-tui compare RUN A B` show the same."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.report import saw_json
from ari_mem_tui.render.text import clean, preview, short_id
from ari_mem_tui.render.words import (
    fmt_global,
    fmt_score,
    pool_words,
    ranker_short,
    shared_memory_words,
    tier_badge,
)


def lineage_text(ckpt: Checkpoint, node_id: str, common: str | None) -> Text:
    lineage = ckpt.lineage(node_id)
    start = lineage.index(common) if common in lineage else 0
    out = Text()
    for position, nid in enumerate(lineage[start:]):
        if position:
            out.append(" › ", style="bright_black")
        out.append(
            short_id(nid), style="bold" if nid == node_id else ("cyan" if nid == common else "")
        )
    return out


def side_text(replay: Replay, other: Replay, side: str) -> Text:
    """One side: hits then tiers; what the other side lacks is marked `◆ only <side>`."""
    other_ids = {h.entry_id for h in other.hits}
    other_lines = {line.text for tier in other.tiers for line in tier.lines}
    out = Text()
    out.append(f"Hits ({len(replay.hits)})  ", style="bold")
    out.append(f"query: {preview(replay.query, 60)}\n", style="bright_black")
    out.append(
        f"{pool_words(replay)} · {clean(ranker_short(replay), False)}\n", style="bright_black"
    )
    if not replay.hits:
        out.append("  no hits\n", style="italic")
    for hit in replay.hits:
        unique = hit.entry_id not in other_ids
        out.append("◆ " if unique else "  ", style=f"bold {'yellow' if side == 'A' else 'magenta'}")
        glob = f"g{fmt_global(hit)}"  # `?`: a global rank the backend has not (in-memory)
        out.append(f"{hit.rank:>2} {glob:<4} {fmt_score(hit.score)} {short_id(hit.node_id)} ")
        out.append(preview(hit.text, 120) + "\n", style="" if unique else "bright_black")
    out.append("\nSaw\n", style="bold")
    for tier in replay.tiers:
        badge = tier_badge(tier)
        out.append(f"Tier {tier.key} {clean(tier.title, False)} [{badge}] ", style="cyan")
        out.append(f"{len(tier.lines)} lines\n", style="bright_black")
        for line in tier.lines:
            unique = line.text not in other_lines
            out.append(
                "◆ " if unique else "  ", style="bold yellow" if side == "A" else "bold magenta"
            )
            out.append(preview(line.text, 120), style="" if unique else "bright_black")
            out.append(" ✂\n" if line.truncated else "\n", style="red")
    return out


def compare_head(ckpt: Checkpoint, a: str, b: str) -> Text:
    """The common ancestor and the lineage both share, and what `◆` means."""
    common = ckpt.common_ancestor(a, b)
    head = Text("Compare  ", style="bold")
    if common is None:
        head.append("no common ancestor (different roots)", style="yellow")
    else:
        head.append("common ancestor ")
        head.append(short_id(common), style="bold cyan")
        shared = ckpt.lineage(common)
        head.append(f" (depth {len(shared) - 1}; shared lineage: ")
        head.append(" › ".join(short_id(n) for n in shared), style="bright_black")
        head.append(")")
    head.append(f"\n{shared_memory_words(ckpt, a, b)}", style="bright_black")
    head.append("\n◆ marks what only that side has", style="bright_black")
    return head


def only_here(replay: Replay, other: Replay) -> tuple[list[str], list[str]]:
    """(hit entry ids, context lines) `replay` has and `other` has not: what `◆` marks."""
    other_ids = {h.entry_id for h in other.hits}
    other_lines = {line.text for tier in other.tiers for line in tier.lines}
    hits = [h.entry_id for h in replay.hits if h.entry_id not in other_ids]
    lines = [ln.text for tier in replay.tiers for ln in tier.lines if ln.text not in other_lines]
    return hits, lines


def compare_json(ckpt: Checkpoint, a: Replay, b: Replay) -> dict[str, Any]:
    """`compare --json`: the common ancestor, then each side's lineage below it, its whole
    replay (as `saw --json` has it) and what only it has (render/outputs.py CompareOutput)."""
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models where JSON is made

    common = ckpt.common_ancestor(a.node_id, b.node_id)

    def side(mine: Replay, other: Replay) -> dict[str, Any]:
        lineage = ckpt.lineage(mine.node_id)
        below = lineage[lineage.index(common) :] if common in lineage else lineage
        hits, lines = only_here(mine, other)
        return {
            "node_id": mine.node_id,
            "lineage_from_common": below,
            "only_here_hits": hits,
            "only_here_context": lines,
            "replay": saw_json(mine),
        }

    data = {
        "path": str(ckpt.path),
        "common_ancestor": common,
        "shared_lineage": ckpt.lineage(common) if common else [],
        "a": side(a, b),
        "b": side(b, a),
    }
    return outputs.output(outputs.CompareOutput, data)


def render_compare(console: Console, ckpt: Checkpoint, a: Replay, b: Replay) -> None:
    """The compare view as text: the head, then side A, then side B (one after the other:
    a pipe or a narrow terminal has no room for two columns)."""
    common = ckpt.common_ancestor(a.node_id, b.node_id)
    console.print(compare_head(ckpt, a.node_id, b.node_id))
    for side, mine, other in (("A", a, b), ("B", b, a)):
        title = Text(f"\n{side} ", style="bold")
        title.append_text(lineage_text(ckpt, mine.node_id, common))
        console.print(title)
        console.print(side_text(mine, other, side))
