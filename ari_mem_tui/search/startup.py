"""Facts about a node's start: its search query, its start time, its recorded start-up search.

ARI builds the start-up query from the node's direction (§5.8 Tier 2; the rule itself,
`ari_query`, lives with the attribution, `checkpoint/attribution.py`, which needs it first). The pool a start-up
search ranked is the one of the moment it ran: its own read event's ts when it was logged,
else the first start-up read attributed to the node (§4.5), else its `created_at`.
"""

from __future__ import annotations

from ari_mem_tui.checkpoint.attribution import ari_query, startup_query
from ari_mem_tui.checkpoint.values import parse_iso
from ari_mem_tui.model import AccessEvent, Checkpoint, Node
from ari_mem_tui.search.index import replay_index

STARTUP_HOWS = ("startup-search", "inherit-burst")


QUERY_SOURCES = ("start", "now", "custom")
QUERY_SOURCE_WORDS = {
    "start": "eval_summary at start",
    "now": "eval_summary now",
    "custom": "custom query",
}


def query_source_name(which: str) -> str:
    """`start` / `now` / `custom`; `eval_summary` (the older CLI spelling) means `now`."""
    return "now" if which == "eval_summary" else which


def node_query(ckpt: Checkpoint, node: Node, which: str = "start") -> tuple[str, str]:
    """(query, field used) for `which` = "start" or "now", by ARI's rule (`ari_query`).

    "start" is the query the node searched with: the rule on the eval_summary it had at
    start, its direction (`original_direction`, even when empty: then the goal). "now" uses
    the eval_summary the tree holds today (after evaluation: the verdict). A direction the
    files lost (a resumed or old tree, `start_direction`) is taken from the node's recorded
    start-up search, else the verdict stands in, and `query_field` says so.
    """
    goal = ckpt.experiment_goal or ""
    if query_source_name(which) == "now":
        return ari_query(node.eval_summary, "eval_summary", goal)
    found = startup_query(node, goal)
    if found is not None:
        return found
    event, _how = recorded_startup_search(ckpt, node)
    if event is not None and event.query:
        return event.query, "recorded search (direction lost)"
    return ari_query(node.eval_summary, "eval_summary (verdict: direction lost)", goal)


def start_time(ckpt: Checkpoint, node: Node) -> tuple[float | None, str | None]:
    """(epoch, how): when the node's start-up search ran (its read event), else its first
    start-up read (an inheritance read of its burst), else its `created_at`.

    The search's own moment, not the burst's: other nodes may write between the two, and a
    replay must rank the pool the search ranked."""
    reads = replay_index(ckpt).reads_of(node.id)
    for event in reads:
        if event.reader_how == "startup-search":
            return event.ts, "start-up search"
    for event in reads:
        if event.reader_how in STARTUP_HOWS:
            return event.ts, "first start-up read"
    created = parse_iso(node.created_at)
    if created is not None:
        return created, "created_at"
    return None, None


def recorded_startup_search(ckpt: Checkpoint, node: Node) -> tuple[AccessEvent | None, str]:
    """The node's start-up `search_memory` read event, and how it was identified.

    Prefers the loader's attribution; when the loader attributed nothing at all (an older
    reader, or events it could not place), matches §4.5's rule directly: same query, same
    `ancestor_ids`, limit 5.
    """
    index = replay_index(ckpt)
    for event in index.reads_of(node.id):
        if event.reader_how == "startup-search" and not event.is_inherit:
            return event, "attributed by the loader (startup-search)"
    if not node.ancestor_ids:
        return None, ""
    found = startup_query(node, ckpt.experiment_goal or "")
    if found is None:
        return None, ""
    for event in index.unattributed(found[0]):
        if (event.ancestor_ids or []) == node.ancestor_ids and event.limit == 5:
            return event, "matched by query, scope and limit (§4.5)"
    return None, ""


def startup_notes(ckpt: Checkpoint, node: Node) -> list[str]:
    """What the attribution had to assume about the node's start-up reads (same-direction
    siblings it could not tell apart, a direction found from the search), once each."""
    reads = replay_index(ckpt).reads_of(node.id)
    return list(dict.fromkeys(e.reader_note for e in reads if e.reader_note))
