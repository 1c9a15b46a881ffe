"""Facts about a node's start: its search query, its start time, its recorded start-up search.

ARI builds the start-up query from the node's direction (§5.8 Tier 2); the start time is best
estimated by the first start-up read attributed to the node (§4.5), else its `created_at`.
"""

from __future__ import annotations

from ari_mem_tui.checkpoint.values import parse_iso
from ari_mem_tui.model import AccessEvent, Checkpoint, Node
from ari_mem_tui.search.index import replay_index

QUERY_CHARS = 200
GOAL_CAP = 1500
DEFAULT_QUERY = "experiment result"
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
    """(query, field used) for `which` = "start" or "now".

    ARI's start-up query is `(node.eval_summary or goal or "experiment result")[:200]` with the
    eval_summary the node had at start: its direction (`original_direction`). "now" uses the
    eval_summary the tree holds today (after evaluation: the verdict).
    """
    goal = (ckpt.experiment_goal or "")[:GOAL_CAP]
    if query_source_name(which) == "now":
        candidates = [("eval_summary", node.eval_summary), ("goal", goal)]
    else:
        candidates = [
            ("original_direction", node.original_direction),
            ("eval_summary", node.eval_summary),
            ("goal", goal),
        ]
    for source, text in candidates:
        if text:
            return text[:QUERY_CHARS], source
    return DEFAULT_QUERY, "default"


def start_time(ckpt: Checkpoint, node: Node) -> tuple[float | None, str | None]:
    """(epoch, how): the first start-up read attributed to the node, else its `created_at`."""
    for event in replay_index(ckpt).reads_by_reader.get(node.id, []):
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
    for event in index.reads_by_reader.get(node.id, []):
        if event.reader_how == "startup-search" and not event.is_inherit:
            return event, "attributed by the loader (startup-search)"
    if not node.ancestor_ids:
        return None, ""
    query, _ = node_query(ckpt, node)
    for event in index.unattributed_by_query.get(query, []):
        if (event.ancestor_ids or []) == node.ancestor_ids and event.limit == 5:
            return event, "matched by query, scope and limit (§4.5)"
    return None, ""
