"""Why a node did not see an entry (or why it saw it where it did): its start-up search, taken
apart step by step with the numbers each step was decided on.

ARI's search, in its own order (docs/ari-format.md §5.1, §5.2, §5.8): the node searches only if it has
ancestors; the pool is what was stored before the search ran; `search_memory` reads node-scope
passages of this checkpoint only (the in-memory backend's node store; Letta's post-filter on
`kind` and `ari_checkpoint`); the post-filter keeps the node's ancestors' entries; the ranking
must reach the entry (Letta: its global rank inside the `top_k` window; the in-memory rule: a
query word in its text, score 0 being dropped); it must be among the first `limit` kept; and
Tier 2 skips a hit whose first 120 characters Tier 1b already holds. The first step that fails
is the verdict; every step is evaluated, so the answer also says what else stood in the way.

`NodeSearch` replays one node's search once (`search.replay`, the one post-filter) and answers
for any number of entries from it: `saw --why`, the TUI's `x` and the tests that ask about every
entry of a run share it. The words are render/why.py's.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from typing import Any

from ari_mem_tui.model import Checkpoint, Entries, EntryView, MemoryEntry, Node
from ari_mem_tui.model.why import FAIL, NOT_APPLICABLE, PASS, SEEN, WhyAnswer, WhyStep
from ari_mem_tui.search.in_memory import keyword_score, query_words
from ari_mem_tui.search.rankers import Ranker, Ranking
from ari_mem_tui.search.replay import (
    DEFAULT_LIMIT,
    checkpoint_hash,
    eligible_entry,
    rank_score,
    replay,
)
from ari_mem_tui.search.tiers import DEDUPE_CHARS

Entry = EntryView | MemoryEntry
CANDIDATES_SHOWN = 5
TEXT_PREVIEW = 200


class EntryRefError(LookupError):
    """An entry reference that names no entry, or several (the candidates are in the message)."""


def resolve_entry(ckpt: Checkpoint, ref: str) -> Entry:
    """The entry a person means: its id or passage id, else the one entry whose id or passage
    id starts with `ref`, else the one whose text holds `ref` (as typed, else in any case).
    Several at the first of these that has any: refused with the candidates, as a node is."""
    ref = ref.strip()
    if not ref:
        raise EntryRefError("an empty entry reference names no entry")
    found = ckpt.entries_by_id.get(ref) or ckpt.entries_by_letta_id.get(ref)
    if found is not None:
        return found
    entries = ckpt.entries
    tiers = (
        lambda: _id_prefix(entries, ref),
        lambda: _text_rows(entries, ref),
        lambda: [i for i, t in enumerate(entries.texts()) if ref.lower() in t.lower()],
    )
    for tier in tiers:
        rows = list(dict.fromkeys(tier()))
        if len(rows) == 1:
            return entries[rows[0]]
        if rows:
            shown = "; ".join(_candidate(entries[r]) for r in rows[:CANDIDATES_SHOWN])
            more = " …" if len(rows) > CANDIDATES_SHOWN else ""
            raise EntryRefError(
                f"{ref!r} matches {len(rows)} entries: {shown}{more}; give more of it"
            )
    raise EntryRefError(f"no entry matches {ref!r} (give an entry id, a passage id or its text)")


def _id_prefix(entries: Entries, ref: str) -> list[int]:
    """Rows whose id or passage id starts with `ref`."""
    rows = [i for i, entry_id in enumerate(entries.all_ids()) if entry_id.startswith(ref)]
    letta, strings = entries.letta, entries.strings
    codes = {c for c in range(len(strings)) if (strings[c] or "").startswith(ref)}
    return rows + [i for i, code in enumerate(letta) if code in codes]


def _text_rows(entries: Entries, ref: str) -> list[int]:
    """Rows whose text holds `ref` as typed: found in the text buffer at C speed, each place
    mapped to the row whose slice holds all of it."""
    texts, needle = entries.text, ref.encode("utf-8")
    places = list(texts.find_all(needle))
    if not places:
        return []
    starts, ends = texts.starts, texts.ends
    by_start = sorted((s, row) for row, s in enumerate(starts) if s >= 0)
    firsts = [s for s, _ in by_start]
    rows = []
    for at in places:
        pos = bisect_right(firsts, at) - 1
        if pos >= 0:
            row = by_start[pos][1]
            if at + len(needle) <= ends[row]:
                rows.append(row)
    return sorted(set(rows))


def _candidate(entry: Entry) -> str:
    text = " ".join((entry.text or "").split())
    return f"{entry.id} ({entry.node_id or 'no node'}: {text[:40]!r})"


class _Facts:
    """The fields of one entry the steps read, each read off its columns once."""

    __slots__ = ("ckpt", "id", "kind", "node_id", "text", "ts")

    def __init__(self, entry: Entry) -> None:
        self.id, self.kind, self.node_id = entry.id, entry.kind, entry.node_id or ""
        self.ts, self.text = entry.ts, entry.text or ""
        self.ckpt = entry.ari_checkpoint


class NodeSearch:
    """One node's start-up search, replayed once, that answers `why(entry)` for any entry.

    The replay (`search.replay.replay`) gives the hits, the tiers and the recording; the ranking
    is asked for once more here for what the replay does not keep: every window row (what filled
    the window above an entry) and global ranks beyond it. Rankers are deterministic, so it is
    the ranking the replay post-filtered."""

    def __init__(
        self,
        ckpt: Checkpoint,
        node_id: str,
        ranker: Ranker,
        limit: int = DEFAULT_LIMIT,
        as_of: bool = True,
        query: str | None = None,
        query_from: str = "start",
    ) -> None:
        self.ckpt, self.ranker = ckpt, ranker
        self.node: Node = ckpt.nodes[ckpt.resolve_node(node_id)]
        self.result = replay(
            ckpt, self.node.id, ranker, query=query, limit=limit, as_of=as_of, query_from=query_from
        )
        result = self.result
        self.limit, self.top_k = limit, result.params["top_k"]
        self.before = result.as_of
        self.scope = set(self.node.ancestor_ids)
        self.ckpt_hash = checkpoint_hash(ckpt)
        self.windowless = result.windowless
        self.ranking = self._rank()
        window = self.ranking.window if self.ranking is not None else []
        self.position = {entry.id: i for i, entry in enumerate(window)}
        self.window_nodes = [(e.node_id or "", e.kind) for e in window]
        self.kept = [e for e in window if eligible_entry(e, self.scope, self.ckpt_hash)]
        self.kept_rank = {entry.id: i + 1 for i, entry in enumerate(self.kept)}
        self.hits = {hit.entry_id: hit for hit in result.hits}
        self.tier_1b = self._tier_1b_keys()
        self._filled: dict[str, Any] | None = None
        self._full: dict[str, int] | None = None  # (`_global_rank`'s whole ranking)
        recorded = result.recorded
        self.recorded = (
            {h.entry_id: h for h in recorded.hits}
            if recorded is not None and recorded.query == result.query
            else None
        )

    def _rank(self) -> Ranking | None:
        """The replay's ranking once more (a root ranks nothing), and a note when it did not
        come from the ranker the replay's came from (vectors still being made)."""
        result = self.result
        self.notes = list(result.notes)
        if not self.scope:
            return None
        ranking = self.ranker.rank(result.query, self.top_k, before_ts=self.before)
        if (ranking.used or self.ranker.name) != result.embedder:
            self.notes.append(
                f"the ranker answered with {ranking.used} here but {result.embedder} in the"
                " replay (its vectors were still being made): run it again once they are ready"
            )
        return ranking

    def _tier_1b_keys(self) -> dict[str, str]:
        """Tier 1b's dedupe keys (the first 120 characters of each stripped text) → the entry
        that holds each."""
        keys: dict[str, str] = {}
        for tier in self.result.tiers:
            if tier.key != "1b":
                continue
            for line in tier.lines:
                entry = self.ckpt.entries_by_id.get(line.entry_id or "")
                if entry is not None:
                    keys.setdefault(entry.text.strip()[:DEDUPE_CHARS], entry.id)
        return keys

    # ------------------------------------------------------------------ the answer
    def why(self, entry: Entry) -> WhyAnswer:
        facts = _Facts(entry)
        searched = self._searched()
        time = self._time(facts)
        steps = [searched, time, self._searchable(facts), self._scope(facts)]
        eligible = all(s.status == PASS for s in steps)
        in_pool = searched.status == PASS and time.status == PASS
        reach = [self._window(facts, in_pool), self._match(facts, in_pool)]
        reached = eligible and not any(s.status == FAIL for s in reach)
        steps += [*reach, self._limit(facts, reached), self._context(facts)]
        verdict = next((s.key for s in steps if s.status == FAIL), SEEN)
        result = self.result
        return WhyAnswer(
            node_id=self.node.id,
            entry_id=facts.id,
            passage_id=entry.letta_id,
            entry_node=facts.node_id,
            kind=facts.kind,
            text=facts.text[:TEXT_PREVIEW],
            verdict=verdict,
            steps=steps,
            hit=self._hit(facts),
            recorded=self._recorded(facts),
            query=result.query,
            query_source=result.query_source,
            as_of=result.as_of,
            as_of_source=result.as_of_source,
            params=dict(result.params),
            embedder=result.embedder,
            windowless=self.windowless,
            fidelity=result.fidelity,
            notes=self.notes,
        )

    def _searched(self) -> WhyStep:
        node = self.node
        if not self.scope:
            return WhyStep(key="searched", status=FAIL, reason="root")
        if node.status == "pending" and self.result.recorded is None:
            return WhyStep(key="searched", status=FAIL, reason="never-started")
        numbers = {
            "at": self.before,
            "at_source": self.result.as_of_source,
            "limit": self.limit,
            "top_k": self.top_k,
        }
        return WhyStep(key="searched", status=PASS, reason="searched", numbers=numbers)

    def _time(self, entry: _Facts) -> WhyStep:
        ts, before = entry.ts, self.before
        numbers: dict[str, Any] = {"written": ts, "search": before}
        if before is None:
            return WhyStep(key="time", status=PASS, reason="today's pool", numbers=numbers)
        if ts is None:
            return WhyStep(key="time", status=PASS, reason="no ts", numbers=numbers)
        numbers["after_s"] = round(ts - before, 6)
        numbers["search_source"] = self.result.as_of_source
        if ts < before:
            return WhyStep(key="time", status=PASS, reason="before", numbers=numbers)
        own = entry.node_id == self.node.id
        reason = "own-after-search" if own else "after-start"
        return WhyStep(key="time", status=FAIL, reason=reason, numbers=numbers)

    def _searchable(self, entry: _Facts) -> WhyStep:
        if entry.kind != "node_scope":
            reason = "react-store" if self.windowless else "react-kind"
            return WhyStep(
                key="searchable", status=FAIL, reason=reason, numbers={"kind": entry.kind}
            )
        theirs, ours = entry.ckpt, self.ckpt_hash
        if theirs is not None and ours is not None and theirs != ours:
            numbers = {"entry_checkpoint": theirs, "run_checkpoint": ours}
            return WhyStep(
                key="searchable", status=FAIL, reason="other-checkpoint", numbers=numbers
            )
        return WhyStep(key="searchable", status=PASS, reason="node-scope", numbers={})

    def _scope(self, entry: _Facts) -> WhyStep:
        node, writer = self.node, entry.node_id
        mine = [*node.ancestor_ids, node.id]
        if writer in self.scope:
            numbers = {"writer": writer, "depth": mine.index(writer)}
            return WhyStep(key="scope", status=PASS, reason="ancestor", numbers=numbers)
        if writer == node.id:
            return WhyStep(key="scope", status=FAIL, reason="own", numbers={"writer": writer})
        other = self.ckpt.nodes.get(writer) if writer else None
        if other is None:
            return WhyStep(key="scope", status=FAIL, reason="no-node", numbers={"writer": writer})
        theirs = [*other.ancestor_ids, other.id]
        common = None
        for a, b in zip(mine, theirs, strict=False):
            if a != b:
                break
            common = a
        numbers = {
            "writer": writer,
            "node_lineage": mine,
            "writer_lineage": theirs,
            "common_ancestor": common,
            "common_depth": mine.index(common) if common is not None else None,
        }
        reason = "descendant" if node.id in theirs else "other-branch"
        return WhyStep(key="scope", status=FAIL, reason=reason, numbers=numbers)

    def _window(self, entry: _Facts, in_pool: bool) -> WhyStep:
        if self.windowless:
            return WhyStep(key="window", status=NOT_APPLICABLE, reason="windowless")
        if not in_pool or self.ranking is None:
            return WhyStep(key="window", status=NOT_APPLICABLE, reason="not in the pool")
        pool, window = self.ranking.pool_size, len(self.window_nodes)
        numbers: dict[str, Any] = {"top_k": self.top_k, "window": window, "pool": pool}
        position = self.position.get(entry.id)
        if position is not None:
            numbers["global_rank"] = position
            return WhyStep(key="window", status=PASS, reason="in the window", numbers=numbers)
        numbers["global_rank"] = self._global_rank(entry.id)
        numbers.update(self._filled_by())
        return WhyStep(key="window", status=FAIL, reason="below-window", numbers=numbers)

    def _global_rank(self, entry_id: str) -> int | None:
        """An entry's rank in the whole as-of pool. A ranker that knows only its window (a
        Letta server returns its top_k, no scores) is asked once for the whole pool."""
        ranking = self.ranking
        if ranking is None:
            return None
        if ranking.rank_fn is not None or ranking.ranks_fn is not None or ranking.ranks:
            return ranking.global_rank(entry_id)
        if self._full is None:
            whole = self.ranker.rank(self.result.query, len(self.ckpt.entries) + 1, self.before)
            self._full = {e.id: i for i, e in enumerate(whole.window)}
        return self._full.get(entry_id)

    def _filled_by(self) -> dict[str, Any]:
        """What the window held: rows by writer (the lineage's, the node's own, other
        branches', ReAct steps), most first (counted once a node)."""
        if self._filled is None:
            self._filled = self._count_window()
        return self._filled

    def _count_window(self) -> dict[str, Any]:
        scope, me = self.scope, self.node.id
        rows: Counter[tuple[str, str]] = Counter()
        for writer, kind in self.window_nodes:
            if kind != "node_scope":
                rows[(writer, "react")] += 1
            elif writer in scope:
                rows[(writer, "ancestor")] += 1
            elif writer == me:
                rows[(writer, "own")] += 1
            else:
                rows[(writer, "other-branch")] += 1
        by_relation: Counter[str] = Counter()
        for (_writer, relation), count in rows.items():
            by_relation[relation] += count
        return {
            "filled_by": [
                {"node_id": writer, "relation": relation, "rows": count}
                for (writer, relation), count in sorted(rows.items(), key=lambda i: -i[1])
            ],
            "by_relation": dict(by_relation.most_common()),
        }

    def _match(self, entry: _Facts, in_pool: bool) -> WhyStep:
        if not self.windowless:
            return WhyStep(key="match", status=NOT_APPLICABLE, reason="windowed")
        if not in_pool or entry.kind != "node_scope":
            return WhyStep(key="match", status=NOT_APPLICABLE, reason="not in the node store")
        query = self.result.query
        words = query_words(query)
        lowered = (entry.text or "").lower()
        found = [w for w in words if w in lowered]
        numbers = {"words": words, "found": found, "score": keyword_score(entry.text, query)}
        if not (query or "").strip():
            return WhyStep(key="match", status=PASS, reason="blank query", numbers=numbers)
        if not found:
            return WhyStep(key="match", status=FAIL, reason="no-word", numbers=numbers)
        return WhyStep(key="match", status=PASS, reason="words found", numbers=numbers)

    def _limit(self, entry: _Facts, applies: bool) -> WhyStep:
        rank = self.kept_rank.get(entry.id)
        if not applies or rank is None:
            return WhyStep(key="limit", status=NOT_APPLICABLE, reason="not kept")
        numbers: dict[str, Any] = {"rank": rank, "limit": self.limit, "kept": len(self.kept)}
        numbers.update(self._scored(entry))
        if rank <= self.limit:
            return WhyStep(key="limit", status=PASS, reason="within the limit", numbers=numbers)
        last = self.kept[self.limit - 1]
        numbers["last_hit"] = {"entry_id": last.id, "rank": self.limit, **self._scored(last)}
        return WhyStep(key="limit", status=FAIL, reason="past-limit", numbers=numbers)

    def _scored(self, entry: Entry) -> dict[str, Any]:
        """An entry's score as the hits carry it: the backend's own (in-memory), else ARI's
        rank score of its global rank; and that global rank (windowed rankers)."""
        if self.windowless:
            return {"score": (self.ranking.scores or {}).get(entry.id, 0.0)}  # type: ignore[union-attr]
        position = self.position[entry.id]
        return {"score": rank_score(position), "global_rank": position}

    def _context(self, entry: _Facts) -> WhyStep:
        hit = self.hits.get(entry.id)
        if hit is None:
            return WhyStep(key="context", status=NOT_APPLICABLE, reason="not a hit")
        text = (entry.text or "").strip()
        if not text:
            return WhyStep(key="context", status=FAIL, reason="blank", numbers={"rank": hit.rank})
        holder = self.tier_1b.get(text[:DEDUPE_CHARS])
        if holder is not None:
            held = self.ckpt.entries_by_id.get(holder)
            numbers = {
                "rank": hit.rank,
                "tier_1b_entry": holder,
                "tier_1b_node": held.node_id if held is not None else "",
                "chars": DEDUPE_CHARS,
            }
            return WhyStep(key="context", status=FAIL, reason="in-tier-1b", numbers=numbers)
        numbers = {"rank": hit.rank, "cut": len(text) > 400}
        return WhyStep(key="context", status=PASS, reason="in tier 2", numbers=numbers)

    def _hit(self, entry: _Facts) -> dict[str, Any] | None:
        """For a hit: its rank, score and global rank, and the next entry out (the first
        kept entry past the limit; else the first eligible entry below the window)."""
        hit = self.hits.get(entry.id)
        if hit is None:
            return None
        out: dict[str, Any] | None = None
        if len(self.kept) > self.limit:
            nxt = self.kept[self.limit]
            scored = self._scored(nxt)
            out = {
                "entry_id": nxt.id,
                "node_id": nxt.node_id,
                "rank": self.limit + 1,
                "score": scored["score"],
                "global_rank": scored.get("global_rank"),
                "where": "past the limit",
            }
        elif self.result.missed:
            missed = self.result.missed[0]
            out = {
                "entry_id": missed.entry_id,
                "node_id": missed.node_id,
                "rank": None,
                "score": None,
                "global_rank": missed.global_rank,
                "where": "below the window",
            }
        return {
            "rank": hit.rank,
            "score": hit.score,
            "global_rank": hit.global_rank,
            "limit": self.limit,
            "hits": len(self.hits),
            "next_out": out,
        }

    def _recorded(self, entry: _Facts) -> dict[str, Any] | None:
        """What the logged start-up search returned for the entry (None: none logged, or the
        replay asked another query)."""
        if self.recorded is None:
            return None
        found = self.recorded.get(entry.id)
        if found is None:
            return {"returned": False, "rank": None, "score": None}
        return {"returned": True, "rank": found.rank, "score": found.score}


def why_not(
    ckpt: Checkpoint,
    node_id: str,
    entry_ref: str,
    ranker: Ranker,
    limit: int = DEFAULT_LIMIT,
    as_of: bool = True,
    query: str | None = None,
    query_from: str = "start",
) -> WhyAnswer:
    """`saw NODE --why ENTRY`: why `node_id` did (not) see the entry `entry_ref` names."""
    entry = resolve_entry(ckpt, entry_ref)
    search = NodeSearch(ckpt, node_id, ranker, limit, as_of, query, query_from)
    return search.why(entry)
