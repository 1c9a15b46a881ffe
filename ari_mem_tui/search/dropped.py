"""Kinds of memory a what-if can leave out, and a ranker that ranks as if ARI had not stored
them (`health --what-if drop=…`).

Two kinds: ARI's automatic `Tool <name>: …` entries (one per LLM tool call, written under the
calling node's id with `{"step", "tool"}` metadata, docs/ari-format.md §3.9: the entries that break the
"≤ 200 passages a checkpoint" assumption of its window, §5.3), and ReAct steps (the react
store, which ARI's Letta backend ranks in the same pool). Left out, they are not in the pool:
they take no window row, are nobody's hit and nobody's eligible entry.

`Dropping` wraps any ranker: it asks the ranker for a deeper window until `top_k` rows that are
kept fill it (or the pool ends), then drops the others. For a ranker whose score of an entry
does not depend on the rest of the pool (cosine: MiniLM, the run's embedding model, a Letta
server; ARI's in-memory keyword overlap) that is the ranking of the pool without them, exactly.
BM25's term statistics still count the entries left out (its documents' frequencies come from
the whole pool): the stand-in stays a stand-in, said in its note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ari_mem_tui.model import Entries
from ari_mem_tui.search.rankers import Ranker, Ranking

TOOL_AUTO, REACT = "tool-auto", "react"
DROPPABLE = {
    TOOL_AUTO: "ARI's automatic `Tool …` entries",
    REACT: "ReAct steps",
}
_TOOL = b"Tool "
_NODE_SCOPE, _REACT_STEP = 0, 1  # model/columns/ KINDS codes
_INT_NONE = -(1 << 63)  # OptInts' None


def tool_auto_mask(entries: Entries) -> np.ndarray:
    """Which rows are ARI's automatic tool-call entries: node-scope, a `step` in their
    metadata, and a text that starts `Tool ` (read off the text buffer's bytes, no decoding)."""
    n = len(entries)
    if not n:
        return np.zeros(0, dtype=bool)
    kind = np.frombuffer(bytes(entries.kind), dtype=np.uint8)
    step = np.asarray(entries.step.values, dtype=np.int64)
    stepped = step != _INT_NONE
    if entries.step.big:
        stepped[list(entries.step.big)] = True
    texts = entries.text
    starts = np.asarray(texts.starts, dtype=np.int64)
    ends = np.asarray(texts.ends, dtype=np.int64)
    mask = (kind == _NODE_SCOPE) & stepped & (starts >= 0) & (ends - starts >= len(_TOOL))
    buf = np.frombuffer(texts.buf, dtype=np.uint8)
    at = starts[mask]
    ok = np.ones(len(at), dtype=bool)
    for i, byte in enumerate(_TOOL):
        ok &= buf[at + i] == byte
    mask[np.flatnonzero(mask)[~ok]] = False
    return mask


def react_mask(entries: Entries) -> np.ndarray:
    return np.frombuffer(bytes(entries.kind), dtype=np.uint8) == _REACT_STEP


def drop_mask(entries: Entries, kinds: Sequence[str]) -> np.ndarray | None:
    """The rows of the kinds left out (None: none is)."""
    if not kinds:
        return None
    mask = np.zeros(len(entries), dtype=bool)
    if TOOL_AUTO in kinds:
        mask |= tool_auto_mask(entries)
    if REACT in kinds:
        mask |= react_mask(entries)
    return mask


def is_tool_auto(entry: Any) -> bool:
    """`tool_auto_mask`'s test on one entry (one that is no row of the run: a passage a Letta
    server added since the run was read, a record)."""
    text = entry.text or ""
    return entry.kind == "node_scope" and entry.step is not None and text.startswith("Tool ")


def _dropped_record(entry: Any, kinds: Sequence[str]) -> bool:
    if entry.kind == "react_step":
        return REACT in kinds
    return TOOL_AUTO in kinds and is_tool_auto(entry)


class Dropping:
    """`ranker` over the pool without the rows `mask` marks (the kinds `kinds` names)."""

    def __init__(self, ranker: Ranker, entries: Entries, mask: np.ndarray, kinds: Sequence[str]):
        self.inner, self.entries, self.mask, self.kinds = ranker, entries, mask, tuple(kinds)
        self.name = getattr(ranker, "name", "?")
        ts = np.frombuffer(entries.ts, dtype=np.float64) if len(entries) else np.zeros(0)
        self._dropped_ts = np.sort(ts[mask])  # NaN (no ts) sorts last: in every pool

    def __getattr__(self, name: str) -> Any:  # progress, wait, error … are the ranker's
        return getattr(self.inner, name)

    def dropped_before(self, before_ts: float | None) -> int:
        if before_ts is None:
            return len(self._dropped_ts)
        no_ts = int(np.count_nonzero(np.isnan(self._dropped_ts)))
        return int(np.searchsorted(self._dropped_ts, before_ts)) + no_ts

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        depth = top_k + min(top_k, self.dropped_before(before_ts))
        while True:
            ranking = self.inner.rank(query, depth, before_ts=before_ts)
            keep = self._kept(ranking)
            full = ranking.windowless or ranking.window_len < depth
            if full or int(np.count_nonzero(keep)) >= top_k:
                return self._cut(ranking, keep, top_k, before_ts)
            depth = min(depth * 4, max(ranking.pool_size, depth + 1))

    def _kept(self, ranking: Ranking) -> np.ndarray:
        rows = np.asarray(ranking.window_rows(self.entries), dtype=np.int64)
        keep = np.ones(len(rows), dtype=bool)
        known = rows >= 0
        keep[known] = ~self.mask[rows[known]]
        if not known.all():
            window = ranking.window
            for i in np.flatnonzero(~known).tolist():
                keep[i] = not _dropped_record(window[i], self.kinds)
        return keep

    def _cut(self, ranking: Ranking, keep: np.ndarray, top_k: int, before: float | None) -> Ranking:
        at = np.flatnonzero(keep)
        if not ranking.windowless:
            at = at[:top_k]
        pool = max(0, ranking.pool_size - self.dropped_before(before))
        note = ranking.note
        if self.name == "bm25" or ranking.used == "bm25":
            note = "; ".join(
                filter(None, [note, "BM25's term statistics still count the entries left out"])
            )
        if ranking.rows is not None and ranking.table is self.entries:
            rows = np.asarray(ranking.rows, dtype=np.int64)[at]
            window = None
        else:
            rows, window = None, [ranking.window[i] for i in at.tolist()]
        scores = ranking.scores
        if scores is not None:
            kept = window if window is not None else self.entries.views(rows.tolist())  # type: ignore[union-attr]
            scores = {e.id: scores[e.id] for e in kept}
        return Ranking(
            window=window,
            rows=rows,
            table=self.entries if rows is not None else None,
            pool_size=pool,
            used=ranking.used,
            note=note,
            windowless=ranking.windowless,
            scores=scores,
        )
