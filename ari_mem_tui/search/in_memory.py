"""ARI's in-memory backend's search, replayed exactly.

`ARI_MEMORY_BACKEND=in_memory` (ari-skill-memory's InMemoryBackend) searches its node store
only, and only the reader's ancestors' entries in it: each scores the share of the query's
whitespace words (`str.split()`, lower-cased) found as substrings of the lower-cased text;
zero scores are dropped unless the query is blank; the sort is by score, descending and
stable, so ties keep insertion order (docs/ari-format.md §5.2). There is no top-k window over a global
pool, hence no global rank and nothing "outside the window": a replay with this rule gives the
recording itself, scores included. A query without spaces (Japanese) is one word. Which runs
it recorded: search/backends.py.
"""

from __future__ import annotations

from ari_mem_tui.model import MemoryEntry
from ari_mem_tui.search.rankers import Ranking

NAME = "in-memory"


def query_words(query: str) -> list[str]:
    return [word.lower() for word in (query or "").split() if word]


def keyword_score(text: str, query: str) -> float:
    """InMemoryBackend's score: matched query words / query words (0.0 for a blank query)."""
    return _overlap((text or "").lower(), query_words(query))


def _overlap(lowered: str, words: list[str]) -> float:
    if not words:
        return 0.0
    return sum(1 for word in words if word in lowered) / len(words)


class InMemoryRanker:
    """The in-memory backend's search as a Ranker: its `window` is every node-scope entry the
    backend would return for some scope, best first (ties in insertion order, i.e. by ts),
    with the backend's own scores; the post-filter then keeps the ancestors' first `limit`."""

    name = NAME

    def __init__(self, entries: list[MemoryEntry]) -> None:
        store = [e for e in entries if e.kind == "node_scope"]
        # ARI's dict keeps insertion order: the order of the writes, which their ts follows
        self.store = sorted(store, key=lambda e: (e.ts is not None, e.ts or 0.0))
        self.lowered = [e.text.lower() for e in self.store]  # once, not per query

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        del top_k  # no window: every matching entry is a candidate
        words, blank = query_words(query), not (query or "").strip()
        pool = [
            (entry, lowered)
            for entry, lowered in zip(self.store, self.lowered, strict=True)
            if before_ts is None or entry.ts is None or entry.ts < before_ts
        ]
        scored = [(_overlap(lowered, words), entry) for entry, lowered in pool]
        kept = [(s, e) for s, e in scored if s > 0 or blank]
        kept.sort(key=lambda pair: -pair[0])  # stable
        return Ranking(
            window=[e for _, e in kept],
            pool_size=len(pool),
            rank_fn=lambda _entry_id: None,  # no global rank in this backend
            used=NAME,
            scores={e.id: s for s, e in kept},
            windowless=True,
        )
