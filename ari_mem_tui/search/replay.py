"""ARI's node-scoped search, replayed: the ONE implementation of the post-filter (§5.1–§5.2).

`passages.search(query, top_k)` ranks the agent's whole pool; ARI then keeps, in rank order,
rows whose node is in `ancestor_ids`, from this checkpoint, of kind `node_scope`, and returns
the first `limit`, each scored `max(0, 1 - 0.01 * global_rank)`. Every ranker (MiniLM, BM25,
Letta) feeds this function, and the diagnostics (window composition, eligible, missed, exact
scope, recorded vs replayed) are computed from the same ranking.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ari_mem_tui.model import (
    Checkpoint,
    Hit,
    MemoryEntry,
    Missed,
    Node,
    RankerFidelity,
    RecordedSearch,
    Replay,
)
from ari_mem_tui.model.words import plural
from ari_mem_tui.search.backends import event_scores, recorded_backend, run_backend
from ari_mem_tui.search.causes import likely_cause
from ari_mem_tui.search.fidelity import node_verdict, ranker_fidelity, recording_ranker
from ari_mem_tui.search.index import replay_index
from ari_mem_tui.search.rankers import Ranker, Ranking
from ari_mem_tui.search.startup import (
    node_query,
    query_source_name,
    recorded_startup_search,
    start_time,
    startup_notes,
)
from ari_mem_tui.search.tiers import build_tiers

OVERFETCH = 200  # ARI_MEMORY_LETTA_OVERFETCH default
DEFAULT_LIMIT = 5
WINDOWLESS_NOTE = (
    "ranked as ARI's in-memory backend does: only the reader's ancestors' entries, scored by "
    "keyword overlap (no ranking of the whole pool: no global ranks, nothing missed)"
)


def top_k_for(limit: int, overfetch: int = OVERFETCH) -> int:
    return max(overfetch, limit * 40)


def ari_score(global_rank: int) -> float:
    """ARI's synthetic score for the row at 0-based rank r of the unfiltered window, in ARI's
    own float arithmetic (`max(0, 1 - 0.01 * r)`: 0.9299999999999999), as its access log holds
    it."""
    return max(0.0, 1.0 - 0.01 * global_rank)


def rank_score(global_rank: int) -> float:
    """`ari_score` rounded to the 0.01 step it encodes, as shown."""
    return round(ari_score(global_rank), 2)


def checkpoint_hash(ckpt: Checkpoint) -> str | None:
    return ckpt.checkpoint_hash or None


def eligible_entry(entry: MemoryEntry, scope: set[str], ckpt_hash: str | None) -> bool:
    """ARI's post-filter on one row: node in scope, this checkpoint, kind node_scope."""
    same_ckpt = (
        entry.ari_checkpoint is None or ckpt_hash is None or entry.ari_checkpoint == ckpt_hash
    )
    return entry.kind == "node_scope" and entry.node_id in scope and same_ckpt


def post_filter(
    window: list[MemoryEntry],
    scope: set[str],
    ckpt_hash: str | None,
    limit: int,
    scores: dict[str, float] | None = None,
) -> list[Hit]:
    """Keep eligible window rows in rank order (no re-sort), first `limit`, rank scores; with
    `scores` (a backend without a window: ARI's in-memory one) its own scores, no global rank."""
    hits: list[Hit] = []
    for position, entry in enumerate(window):
        if len(hits) >= limit:
            break
        if eligible_entry(entry, scope, ckpt_hash):
            if scores is None:
                hits.append(_hit(len(hits) + 1, position, rank_score(position), entry))
            else:
                hits.append(_hit(len(hits) + 1, -1, scores[entry.id], entry))
    return hits


def _hit(rank: int, global_rank: int, score: float, entry: MemoryEntry) -> Hit:
    return Hit(
        rank=rank,
        global_rank=global_rank,
        score=score,
        entry_id=entry.id,
        node_id=entry.node_id,
        kind=entry.kind,
        text=entry.text,
    )


def replay(
    ckpt: Checkpoint,
    node_id: str,
    ranker: Ranker,
    query: str | None = None,
    limit: int = DEFAULT_LIMIT,
    as_of: bool = True,
    query_from: str = "start",
    with_tiers: bool = True,
    exact_ranks: bool = True,
) -> Replay:
    """What `node_id` saw (or would see for `query`): hits, diagnostics, recorded, tiers.

    By default the pool is cut at the node's start (`as_of`): what it could have seen. With
    `as_of=False` today's whole pool is ranked, later writes (its own, other branches') included.
    With `exact_ranks=False` the global ranks of entries outside the window (missed ones, and
    the exact scope's) stay unknown (None / -1) until `result.resolve_ranks()`: they need a
    pass over the whole pool, which the window itself does not (the TUI asks only when the
    missed list is shown). Their order is exact either way.
    """
    node = ckpt.nodes[ckpt.resolve_node(node_id)]
    query, query_source, query_field = _query(ckpt, node, query, query_from)
    top_k = top_k_for(limit)
    notes: list[str] = []
    started, started_how = start_time(ckpt, node)
    before = started if as_of else None
    as_of_source = _as_of_source(as_of, before, started_how, notes)
    scope = set(node.ancestor_ids)
    ckpt_hash = checkpoint_hash(ckpt)
    ranking, hits = _search(ranker, query, top_k, before, scope, ckpt_hash, limit, notes)
    windowless = ranking is not None and ranking.windowless

    eligible = eligible_entries(ckpt, node.ancestor_ids, ckpt_hash, before)
    if windowless:  # the backend's answer IS the pre-filtered one: nothing beyond a window
        missed, exact, pending = [], [hit.replaced() for hit in hits], None
        notes.append(WINDOWLESS_NOTE)
    else:
        missed, exact, pending = _beyond_window(eligible, ranking, limit, exact_ranks)
    recorded = _recorded(ckpt, node, notes)
    embedder = _embedder_label(ranker, ranking)
    fallback = ranking is not None and embedder != ranker.name
    compared = recorded is not None and recorded.query == query
    fidelity = ranker_fidelity(
        ranker,
        embedder,
        recorded.backend if compared else "unknown",
        ckpt.letta_embedding_config,
        recorded.ranker if compared else "",
        run_backend(ckpt).name,
    )
    if recorded is not None and compared:
        _mark_recorded(hits, recorded, windowless, before, notes)
    checked = (recorded, compared, embedder)
    _check_itself(ckpt, ranker, fidelity, checked, scope, before, limit)
    result = Replay(
        node_id=node.id,
        query=query,
        query_source=query_source,
        query_field=query_field,
        params=_params(limit, top_k, windowless),
        pool=_pool_stats(ckpt, node, before, ranking),
        hits=hits,
        eligible=len(eligible),
        missed=missed,
        exact_scope=exact,
        recorded=recorded,
        as_of=before,
        as_of_source=as_of_source,
        core=ckpt.core,
        writes=list(ckpt.node_writes(node.id)),
        embedder=embedder,
        windowless=windowless,
        fallback=fallback,
        fidelity=fidelity,
        notes=notes,
    )
    if pending is not None:
        result.set_rank_resolver(pending)
    if with_tiers:
        result.tiers = build_tiers(ckpt, node, result, started)
    return result


def _query(
    ckpt: Checkpoint, node: Node, query: str | None, query_from: str
) -> tuple[str, str, str]:
    """The query searched with, where it came from (a query source, or "custom" for one the
    caller gave) and the node's field it was read from ("" for a custom one)."""
    if query is not None:
        return query, "custom", ""
    query_source = query_source_name(query_from)
    text, query_field = node_query(ckpt, node, query_source)
    return text, query_source, query_field


def _as_of_source(as_of: bool, before: float | None, started_how: str, notes: list[str]) -> str:
    """Which pool was ranked, as the replay labels it: today's ("now"), or the pool at the
    node's start and how that start was known; a note when the start was asked for but is
    unknown (today's pool is ranked then)."""
    if not as_of:
        return "now"
    if before is None:
        notes.append("as-of requested but the node's start time is unknown: whole pool ranked")
        return "now: start unknown"
    return started_how


def _search(
    ranker: Ranker,
    query: str,
    top_k: int,
    before: float | None,
    scope: set[str],
    ckpt_hash: str | None,
    limit: int,
    notes: list[str],
) -> tuple[Ranking | None, list[Hit]]:
    """ARI's search as the node ran it: the ranking of the pool (None for a root, which ARI
    does not search) and the hits its post-filter keeps, with the ranker's notes."""
    ranking: Ranking | None = None
    hits: list[Hit] = []
    if not scope:
        # ARI returns [] before calling the server: nothing ranked, nothing logged (§5.1)
        notes.append("empty ancestor_ids (a root): ARI returns no results without searching")
    else:
        ranking = ranker.rank(query, top_k, before_ts=before)
        hits = post_filter(ranking.window, scope, ckpt_hash, limit, ranking.scores)
        if ranking.note:
            notes.append(ranking.note)
    if getattr(ranker, "backend_note", ""):
        notes.append(ranker.backend_note)
    return ranking, hits


def _mark_recorded(
    hits: list[Hit],
    recorded: RecordedSearch,
    windowless: bool,
    before: float | None,
    notes: list[str],
) -> None:
    """Mark on `recorded` where the replayed hits differ from it (its search had the same
    query), and note when today's pool, not the node's, explains differences."""
    # both sides scored by ARI's in-memory rule (a windowless replay, an in-memory recording):
    # their scores compare as they are, unknown ones included
    same_scores = windowless and recorded.backend == "in_memory"
    recorded.differences = mark_differences(hits, recorded.hits, same_scores)
    if before is None and recorded.differences:
        notes.append(
            "today's pool was ranked: entries written after the node started take window "
            "ranks, so ranks and scores can differ from the recording"
        )


def eligible_entries(
    ckpt: Checkpoint, ancestors: list[str], ckpt_hash: str | None, before: float | None
) -> list[MemoryEntry]:
    """Every pool entry ARI's post-filter would keep (whatever its rank), ancestor order."""
    scope = set(ancestors)
    found = []
    for aid in dict.fromkeys(ancestors):
        for entry in ckpt.entries_by_node.get(aid, []):
            if before is not None and entry.ts is not None and entry.ts >= before:
                continue
            if eligible_entry(entry, scope, ckpt_hash):
                found.append(entry)
    return found


def _embedder_label(ranker: Ranker, ranking: Ranking | None) -> str:
    used = ranking.used if ranking is not None and ranking.used else ""
    return used or ranker.name


def _beyond_window(
    eligible: list[MemoryEntry], ranking: Ranking | None, limit: int, exact_ranks: bool
) -> tuple[list[Missed], list[Hit], Callable[[Replay], None] | None]:
    """Eligible entries ranked outside the window ("missed"), the pre-filter's answer, and (when
    their global ranks are deferred) what fills those ranks in."""
    if ranking is None:
        return [], [], None
    in_window = {e.id: pos for pos, e in enumerate(ranking.window)}
    outside = [e for e in eligible if e.id not in in_window]
    ranked: list[tuple[int | None, MemoryEntry]] = [
        (in_window[e.id], e) for e in eligible if e.id in in_window
    ]
    ranked.sort(key=lambda pair: pair[0])  # every window row outranks every row outside it
    # ranks of the rows outside cost a pass over the whole pool: only their order when asked
    lazy = not exact_ranks and ranking.order_fn is not None and bool(outside)
    order_outside = _order_outside if lazy else _rank_outside
    outside, ranks, beyond = order_outside(ranking, outside)
    ranked += beyond
    missed = [
        Missed(entry_id=e.id, node_id=e.node_id, global_rank=rank, text=e.text)
        for e, rank in zip(outside, ranks, strict=True)
    ]
    exact = [
        _hit(i + 1, -1 if rank is None else rank, rank_score(i), entry)
        for i, (rank, entry) in enumerate(ranked[:limit])
    ]
    return missed, exact, _rank_resolver(ranking) if lazy else None


_Outside = tuple[list[MemoryEntry], list[int | None], list[tuple[int | None, MemoryEntry]]]


def _rank_outside(ranking: Ranking, outside: list[MemoryEntry]) -> _Outside:
    """The eligible rows outside the window in global-rank order (unranked last), their global
    ranks, and the ranked ones as (rank, entry) for the exact scope."""
    ranks = ranking.global_ranks([e.id for e in outside]) if outside else []
    pairs = sorted(zip(outside, ranks, strict=True), key=lambda p: (p[1] is None, p[1] or 0))
    beyond = [(rank, e) for e, rank in pairs if rank is not None]
    return [p[0] for p in pairs], [p[1] for p in pairs], beyond


def _order_outside(ranking: Ranking, outside: list[MemoryEntry]) -> _Outside:
    """As `_rank_outside`, from the ranking's order keys alone: the same order, every global
    rank unknown (None) until `_rank_resolver`'s resolve fills them in."""
    assert ranking.order_fn is not None
    keys = ranking.order_fn([e.id for e in outside])
    order = sorted(range(len(outside)), key=lambda i: (keys[i] is None, keys[i] or ()))
    beyond: list[tuple[int | None, MemoryEntry]] = [
        (None, outside[i]) for i in order if keys[i] is not None
    ]
    return [outside[i] for i in order], [None] * len(outside), beyond


def _rank_resolver(ranking: Ranking) -> Callable[[Replay], None]:
    """What fills in a replay's deferred global ranks (its missed entries', its exact scope's
    beyond the window), in one pass of `ranking` over the pool."""

    def resolve(result: Replay) -> None:
        wanted = [m.entry_id for m in result.missed]
        wanted += [h.entry_id for h in result.exact_scope if h.global_rank < 0]
        found = dict(zip(wanted, ranking.global_ranks(wanted), strict=True))
        for item in result.missed:
            item.global_rank = found.get(item.entry_id, item.global_rank)
        for hit in result.exact_scope:
            if hit.global_rank < 0 and found.get(hit.entry_id) is not None:
                hit.global_rank = found[hit.entry_id]

    return resolve


def _pool_stats(
    ckpt: Checkpoint, node: Node, before: float | None, ranking: Ranking | None
) -> dict:
    index = replay_index(ckpt)
    node_scope = index.kind_count("node_scope", before)
    react = index.kind_count("react_step", before)
    stats: dict = {
        "size": ranking.pool_size if ranking is not None else node_scope + react,
        "node_scope": node_scope,
        "react_step": react,
    }
    if ranking is None:
        stats["window"] = None
        return stats
    if ranking.windowless:
        stats["window"] = None  # the backend ranks the reader's scope only: no window
        return stats
    scope = set(node.ancestor_ids)
    window = Counter()
    branches: Counter = Counter()
    for entry in ranking.window:
        if entry.kind != "node_scope":
            window["react_step"] += 1
            continue
        window["node_scope"] += 1
        if entry.node_id in scope:
            window["lineage"] += 1
        elif entry.node_id == node.id:
            window["self"] += 1
        else:
            window["other_branches"] += 1
        branches[_branch_of(ckpt, entry.node_id)] += 1
    stats["window"] = {
        "size": len(ranking.window),
        "node_scope": window["node_scope"],
        "react_step": window["react_step"],
        "lineage": window["lineage"],
        "self": window["self"],
        "other_branches": window["other_branches"],
        "by_branch": dict(branches.most_common()),
    }
    return stats


def _branch_of(ckpt: Checkpoint, node_id: str) -> str:
    """The root's child the node descends from (the root itself, or "?" when unknown)."""
    node = ckpt.nodes.get(node_id)
    if node is None:
        return "?"
    lineage = [*node.ancestor_ids, node.id]
    return lineage[1] if len(lineage) > 1 else lineage[0]


def _params(limit: int, top_k: int, windowless: bool) -> dict[str, int | None]:
    """The search's parameters; a backend without a window (ARI's in-memory one) has no
    top_k or overfetch to speak of: null."""
    if windowless:
        return {"limit": limit, "overfetch": None, "top_k": None}
    return {"limit": limit, "overfetch": OVERFETCH, "top_k": top_k}


def _check_itself(
    ckpt: Checkpoint,
    ranker: Ranker,
    fidelity: RankerFidelity,
    checked: tuple[RecordedSearch | None, bool, str],
    scope: set[str],
    before: float | None,
    limit: int,
) -> None:
    """`fidelity` with what the node's recording showed (`checked`: the recording, whether it
    was compared, what ranked the replay), why nothing could be, or the likely cause of a
    difference (search/fidelity.py's words)."""
    recorded, compared, used = checked
    why = unchecked_why(scope, recorded, compared, before, limit)
    verified = None if why else recorded is not None and recorded.differences == 0
    cause = ""
    if verified is False and fidelity.own and recorded is not None:
        cause = likely_cause(ckpt, ranker, used, before, recorded.ts)
    node_verdict(fidelity, verified, cause, why)


def unchecked_why(
    scope: set[str],
    recorded: RecordedSearch | None,
    compared: bool,
    before: float | None,
    limit: int,
) -> str:
    """Why this replay cannot check itself against the node's recording ("" when it can)."""
    if not scope:
        return "a root: ARI searches nothing"
    if recorded is None:
        return "no recorded start-up search for this node"
    if not compared:
        return "its recorded search had another query"
    if before is None:
        return "today's pool, not the one its recorded search ranked"
    if recorded.limit is not None and recorded.limit != limit:
        return f"limit {limit}, its recorded search's {recorded.limit}"
    return ""


def _recorded(ckpt: Checkpoint, node: Node, notes: list[str]) -> RecordedSearch | None:
    event, how = recorded_startup_search(ckpt, node)
    if event is None:
        return None
    recorded, unresolved = recorded_search(ckpt, event)
    notes.append(f"recorded start-up search: {how}")
    notes.extend(startup_notes(ckpt, node))
    if recorded.backend == "in_memory":
        notes.append(
            "the recording's scores are keyword overlap (ARI's in-memory backend), not "
            "1 − 0.01·rank: its global ranks are unknown"
        )
    if unresolved:
        notes.append(f"{plural(unresolved, 'recorded hit')} could not be joined to an entry's text")
    return recorded


def recorded_search(ckpt: Checkpoint, event: object) -> tuple[RecordedSearch, int]:
    """A recorded search read event as hits (joined to the run's entries by passage id), and
    how many of them could not be joined."""
    scores = event_scores(event.results)  # type: ignore[attr-defined]
    backend = recorded_backend(scores)
    if backend != "unknown" and run_backend(ckpt).in_memory:
        backend = "in_memory"  # one recording can look like Letta's (1.0, 0.5): the run decides
    hits: list[Hit] = []
    unresolved = 0
    for i, (row, score) in enumerate(zip(event.results, scores, strict=True)):  # type: ignore[attr-defined]
        letta_id = str(row.get("entry_id") or "")
        # Letta's score encodes the window position (score = 1 - 0.01 r; unknown once it is 0);
        # any other backend's score is shown as it is, its global rank unknown
        global_rank = round((1.0 - score) * 100) if backend == "letta" and score > 0 else -1
        entry = ckpt.entries_by_letta_id.get(letta_id)
        if entry is None:
            unresolved += 1
            hits.append(
                Hit(
                    rank=i + 1,
                    global_rank=global_rank,
                    score=score,
                    entry_id=letta_id,
                    node_id=str(row.get("src_node_id") or ""),
                    kind="node_scope",
                    text="",
                )
            )
        else:
            hits.append(_hit(i + 1, global_rank, score, entry))
    recorded = RecordedSearch(
        ts=event.ts,  # type: ignore[attr-defined]
        query=event.query or "",  # type: ignore[attr-defined]
        limit=event.limit,  # type: ignore[attr-defined]
        hits=hits,
        backend=backend,
        ranker=recording_ranker(backend, ckpt.letta_embedding_config),
    )
    return recorded, unresolved


COMPARED = ("rank", "global_rank", "score")


def mark_differences(replayed: list[Hit], recorded: list[Hit], same_scores: bool = False) -> int:
    """Mark every hit that differs in entry, rank, global rank or score; count ENTRIES.

    A global rank or score the recording does not know (-1: in-memory scores, or Letta's 0.0
    past rank 99) is not compared: unknown is not different, unless `same_scores` (both sides
    scored by the same backend rule, ARI's in-memory one): then scores are compared as they
    are. An entry in both lists counts once, however many fields differ and although both
    sides carry the mark.
    """
    rec = {h.entry_id: h for h in recorded}
    rep = {h.entry_id: h for h in replayed}
    differing: set[str] = set()
    for mine, others in ((replayed, rec), (recorded, rep)):
        for hit in mine:
            other = others.get(hit.entry_id)
            if other is None:
                hit.mark = "replay-only" if mine is replayed else "recorded-only"
                hit.differs, hit.counterpart = [], None
                differing.add(hit.entry_id)
                continue
            hit.counterpart = {
                "rank": other.rank,
                "global_rank": other.global_rank,
                "score": other.score,
            }
            hit.differs = [f for f in COMPARED if _differs(f, hit, other, same_scores)]
            hit.mark = "moved" if "rank" in hit.differs else ("changed" if hit.differs else "")
            if hit.differs:
                differing.add(hit.entry_id)
    return len(differing)


def _differs(field: str, a: Hit, b: Hit, same_scores: bool = False) -> bool:
    if field == "rank":
        return a.rank != b.rank
    if field == "global_rank":
        return a.global_rank >= 0 and b.global_rank >= 0 and a.global_rank != b.global_rank
    if same_scores:
        return a.score != b.score
    if a.global_rank < 0 or b.global_rank < 0:
        return False  # a score that encodes no rank cannot be compared with a rank score
    return abs(a.score - b.score) > 0.005
