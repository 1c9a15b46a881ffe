"""The words every surface (saw, the TUI, the dossier) uses for a replay's pool, query and marks.

One place, so the CLI, the Hits pane and the dossier never describe the same result differently.
"""

from __future__ import annotations

from ari_mem_tui.model import Checkpoint, Hit, Replay, Tier
from ari_mem_tui.model.words import plural
from ari_mem_tui.render.text import clean, fmt_ts, short_id
from ari_mem_tui.search.startup import QUERY_SOURCE_WORDS

MARK_WORDS = {
    "replay-only": "only in the replay",
    "recorded-only": "only in the recording",
    "moved": "at another rank",
    "changed": "same rank, another global rank or score",
}
FIELD_SHORT = {"rank": "rank", "global_rank": "glob", "score": "score"}


def cut_note(shown: int, total: int, what: str, rest: str) -> str:
    """What a list cut for size says: `8 of 64 passages shown; all: <where the rest is>`."""
    noun = f" {what}" if what else ""
    return f"{shown:,} of {total:,}{noun} shown; all: {rest}"


def pool_words(replay: Replay) -> str:
    """Which pool was ranked, always said: as of the node's start, or today's."""
    if replay.as_of is not None:
        how = clean(replay.as_of_source or "?", False)
        return f"pool as of the node's start, {fmt_ts(replay.as_of)} ({how})"
    if replay.as_of_source == "now: start unknown":
        return "today's pool: the node's start time is unknown"
    return "today's pool (every entry, later writes included)"


def pool_parts(pool: dict) -> str:
    """What the ranked pool holds: `120 node-scope, 20 react`; where the ranker searched only
    the node-scope entries (ARI's in-memory backend holds no react steps), the react steps the
    files hold are said to be left out, so the parts add up to the pool's size."""
    size, scope, react = pool.get("size"), pool.get("node_scope", 0), pool.get("react_step", 0)
    if react and size == scope:
        return f"node-scope only, {react} react not searched"
    return f"{scope} node-scope, {react} react"


# which field gave the query, said for a reader: ARI falls back field by field (eval_summary,
# then the goal, then a fixed phrase), and a root has no direction of its own
FIELD_WORDS = {
    ("start", "original_direction"): "its direction, original_direction",
    ("start", "eval_summary"): "eval_summary as stored today: no original_direction",
    ("now", "eval_summary"): "",
}
# where the goal stood in for an empty eval_summary, the goal is the query: said first
GOAL_WORDS = {
    "start": "the experiment goal (the node's eval_summary was empty at its start)",
    "now": "the experiment goal (the node's eval_summary is empty now)",
}


def ranker_short(replay: Replay) -> str:
    """The ranker in a title's few words: `exact: run:text-embedding-3-small`, `stand-in: bm25`
    (the full sentence is `replay.fidelity.label`)."""
    return replay.fidelity.short or f"{replay.fidelity.kind}: {replay.embedder}"


def query_words(replay: Replay) -> str:
    """`eval_summary at start (its direction, original_direction)`, `eval_summary now`, …"""
    words = QUERY_SOURCE_WORDS.get(replay.query_source, clean(replay.query_source, False))
    field = replay.query_field
    if not field or field == replay.query_source:
        return words
    if field == "goal" and replay.query_source in GOAL_WORDS:
        return GOAL_WORDS[replay.query_source]
    if field == "default":
        detail = 'ARI\'s fixed "experiment result": no eval_summary, no goal'
    else:
        detail = FIELD_WORDS.get((replay.query_source, field), clean(field, False))
    return f"{words} ({detail})" if detail else words


SCORE_SHOWN = 1e6  # past it a score is shown as 1e+308, not its 309 digits


def fmt_score(score: float) -> str:
    """Rank scores are hundredths; keyword-overlap scores (0.125, 0.444…) keep three places;
    a score no ranker gives (a recorded 1e308: its hundredths are no float) in short form."""
    if not -SCORE_SHOWN < score < SCORE_SHOWN:
        return f"{score:.3g}"
    return f"{score:.2f}" if abs(score * 100 - round(score * 100)) < 1e-6 else f"{score:.3f}"


def fmt_global(hit: Hit) -> str:
    return str(hit.global_rank) if hit.global_rank >= 0 else "?"


def mark_short(hit: Hit) -> str:
    """The diff column: `+replay`, `-record`, or `~` and the fields that differ."""
    if hit.mark == "replay-only":
        return "+replay"
    if hit.mark == "recorded-only":
        return "-record"
    if hit.differs:
        return "~" + ",".join(FIELD_SHORT[f] for f in hit.differs)
    return ""


def mark_long(hit: Hit, side: str) -> str:
    """What differs, always as `recorded→replayed`: `rank 5→1 glob 11→1 score 0.89→0.99`.

    `side` is the list `hit` belongs to: "replay" or "recorded".
    """
    if hit.mark in ("replay-only", "recorded-only"):
        return MARK_WORDS[hit.mark]
    if not hit.differs or hit.counterpart is None:
        return ""
    parts = []
    for field in hit.differs:
        mine, theirs = getattr(hit, field), hit.counterpart.get(field)
        if field == "score":
            mine, theirs = fmt_score(float(mine)), fmt_score(float(theirs or 0))
        recorded, replayed = (theirs, mine) if side == "replay" else (mine, theirs)
        parts.append(f"{FIELD_SHORT[field]} {recorded}→{replayed}")
    return " ".join(parts)


MARKS_LEGEND = "marks read recorded→replayed"


def differences_words(replay: Replay) -> str:
    """`3 differences (entries)`, or why none were counted."""
    rec = replay.recorded
    if rec is None:
        return "no recording to compare with"
    if rec.query != replay.query:
        return "not compared: the recording used another query"
    n = rec.differences
    if not n:
        return "same entries, ranks, global ranks and scores as the recording"
    return f"{plural(n, 'difference')} (entries differing in entry, rank, global rank or score)"


def shared_memory_words(ckpt: Checkpoint, a: str, b: str) -> str:
    """What two nodes could both read: the memory of the nodes in both scopes (the lineage
    through their common ancestor; a node reads its ancestors', not its own)."""
    shared = ckpt.shared_scope(a, b)
    if not shared:
        return "no memory both could read (no node is in both scopes)"
    entries = sum(len(ckpt.entries_by_node.rows(node_id)) for node_id in shared)
    nodes = short_id(shared[0])  # (as the lineage above names them)
    if len(shared) > 1:
        nodes = f"{len(shared)} nodes, {nodes} … {short_id(shared[-1])}"
    return f"memory both could read: {plural(entries, 'entry', 'entries')} of {nodes}"


def unseen_words(ckpt: Checkpoint, node_id: str) -> str:
    """What `d` dims: the nodes outside the node's scope, its descendants (they started after
    it) told apart from other branches."""
    scope = {n for n in ckpt.nodes[node_id].ancestor_ids if n in ckpt.nodes}
    unseen = len(ckpt.nodes) - len(scope) - 1
    below = len(ckpt.descendants(node_id))
    return (
        f"dimming the {plural(unseen, 'node')} {clean(node_id, False)}'s search could not see:"
        f" {below} below it (they started after it), {unseen - below} on other branches"
    )


def tier_badge(tier: Tier) -> str:
    """A context tier's one word: "recorded" (Tier 2 from the access log's search itself),
    "rebuilt" (from the run's files by ARI's rules, nothing missing), "approximate" (a part is
    a guess, the note says which). Not "exact": nothing compares a tier with what ARI sent."""
    if not tier.exact:
        return "approximate"
    return "recorded" if tier.key == "2" and "recorded" in (tier.note or "") else "rebuilt"
