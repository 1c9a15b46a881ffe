"""The ranker protocol: one ranking of a checkpoint's whole memory pool for a query.

ARI's `passages.search(query, top_k)` ranks every passage of the agent (node-scope AND react
entries) and returns the first `top_k`; the post-filter happens afterwards in Python. A `Ranker`
reproduces that ranking; `search.replay.replay()` applies the post-filter. The embedded rankers
(MiniLM, BM25) live here; the Letta ranker (ari_mem_tui.memory) implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ari_mem_tui.model import EntryView

ProgressFn = Callable[[int, int], None]  # (done, total) while vectors are computed

RANKER_NAMES = ("minilm", "bm25", "in-memory")


class Ranking:
    """The result of one `Ranker.rank` call.

    `window`: the first top_k pool entries in rank order, what ARI's passages.search(query,
    top_k) returns. A ranker over a run's column table (`table`) gives it as that table's
    `rows` (an int array) instead, and the entry views are made only when `window` is read:
    `health` reads a whole run's windows off the columns and needs no view.
    """

    def __init__(
        self,
        window: list[Any] | None = None,
        pool_size: int = 0,  # entries in the (as-of) pool that was ranked
        ranks: dict[str, int] | None = None,  # entry id -> 0-based rank
        rank_fn: Callable[[str], int | None] | None = None,  # lazy ranks
        ranks_fn: Callable[[list[str]], list[int | None]] | None = None,
        # a key per entry that sorts like its global rank, without computing ranks (None: unknown)
        order_fn: Callable[[list[str]], list[tuple | None]] | None = None,
        used: str = "",  # the ranking actually used, e.g. "bm25" while MiniLM vectors are not ready
        note: str = "",  # why `used` differs from the ranker's name, etc.
        # a backend that scores only the reader's scope (ARI's in-memory one): `window` is every
        # entry it could return, best first, `scores` their own scores, and no top-k cut, so
        # there is no global rank and nothing is missed outside a window
        windowless: bool = False,
        scores: dict[str, float] | None = None,
        rows: Any = None,  # the window as rows of `table` (see above): a numpy int array
        table: Any = None,
    ) -> None:
        if window is None and (rows is None or table is None):
            raise ValueError("a Ranking needs its window, or its rows and their table")
        self._window = window
        self.pool_size = pool_size
        self.ranks, self.rank_fn, self.ranks_fn, self.order_fn = ranks, rank_fn, ranks_fn, order_fn
        self.used, self.note = used, note
        self.windowless, self.scores = windowless, scores
        self.rows, self.table = rows, table

    @property
    def window(self) -> list[Any]:
        if self._window is None:
            self._window = self.table.views(self.rows.tolist())
        return self._window

    @property
    def window_len(self) -> int:
        """Entries in the window (its views not made for it)."""
        return len(self.rows) if self._window is None else len(self._window)

    def window_rows(self, table: Any) -> Sequence[int]:
        """The window as rows of `table`, -1 for an entry it does not hold (a passage the
        Letta server added since the run was read, a record of another list)."""
        if self.rows is not None and self.table is table:
            return self.rows
        return [e.row if isinstance(e, EntryView) and e.table is table else -1 for e in self.window]

    def __repr__(self) -> str:
        return f"Ranking({len(self.window)} in the window of {self.pool_size}, used={self.used!r})"

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
