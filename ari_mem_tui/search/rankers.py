"""The ranker protocol: one ranking of a checkpoint's whole memory pool for a query.

ARI's `passages.search(query, top_k)` ranks every passage of the agent (node-scope AND react
entries) and returns the first `top_k`; the post-filter happens afterwards in Python. A `Ranker`
reproduces that ranking; `search.replay.replay()` applies the post-filter. The embedded rankers
(MiniLM, BM25) live here; the Letta ranker (ari_mem_tui.memory) implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ari_mem_tui.model import MemoryEntry

ProgressFn = Callable[[int, int], None]  # (done, total) while vectors are computed

RANKER_NAMES = ("minilm", "bm25", "in-memory")


@dataclass
class Ranking:
    """The result of one `Ranker.rank` call."""

    # the first top_k pool entries in rank order: what ARI's passages.search(query, top_k) returns
    window: list[MemoryEntry]
    pool_size: int  # entries in the (as-of) pool that was ranked
    ranks: dict[str, int] | None = field(default=None, repr=False)  # entry id -> 0-based rank
    rank_fn: Callable[[str], int | None] | None = field(default=None, repr=False)  # lazy ranks
    ranks_fn: Callable[[list[str]], list[int | None]] | None = field(default=None, repr=False)
    # a key per entry that sorts like its global rank, without computing ranks (None: unknown)
    order_fn: Callable[[list[str]], list[tuple | None]] | None = field(default=None, repr=False)
    used: str = ""  # the ranking actually used, e.g. "bm25" while MiniLM vectors are not ready
    note: str = ""  # why `used` differs from the ranker's name, etc.
    # a backend that scores only the reader's scope (ARI's in-memory one): `window` is every
    # entry it could return, best first, `scores` their own scores, and no top-k cut, so
    # there is no global rank and nothing is missed outside a window
    windowless: bool = False
    scores: dict[str, float] | None = field(default=None, repr=False)
    # the window as rows of a run's column table (`table`), when the pool is one: read off the
    # columns, the window's fields cost no view each (health reads 200 rows a node)
    rows: list[int] | None = field(default=None, repr=False)
    table: Any = field(default=None, repr=False)

    def global_rank(self, entry_id: str) -> int | None:
        """0-based rank of any pool entry in the full ranking; None when unknown."""
        if self.rank_fn is not None:
            return self.rank_fn(entry_id)
        if self.ranks is not None:
            return self.ranks.get(entry_id)
        for position, entry in enumerate(self.window):
            if entry.id == entry_id:
                return position
        return None

    def global_ranks(self, entry_ids: list[str]) -> list[int | None]:
        """`global_rank` of many entries at once (vectorised by the embedded rankers)."""
        if self.ranks_fn is not None:
            return self.ranks_fn(entry_ids)
        return [self.global_rank(entry_id) for entry_id in entry_ids]


@runtime_checkable
class Ranker(Protocol):
    name: str  # "minilm", "bm25", "letta:<url>": shown in the UI / JSON `embedder`

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        """Rank the pool (entries with ts < before_ts when given) and return the top_k window."""
        ...
