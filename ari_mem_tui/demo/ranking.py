"""How the demo answers its reads: a cheap stand-in for the Letta server's ranking.

Search results are ranked the way ARI's Letta path does it (docs/ari-format.md §5.1), with a
lexical score in place of embeddings: how many of the query's informative words the entry holds
(words found in more than a tenth of all entries are ignored), over the WHOLE pool existing at
read time (node and react entries), window of top_k = 200, then post-filtered to the scope,
keeping the window order, score = max(0, 1 - 0.01 * window rank). Ranking uses inverted lists
restricted to the words of the run's queries, so a 200,000-entry pool costs milliseconds per
search. Auto entries that log a memory read are ranked by their query only (their final text
depends on the read's results, which are filled in afterwards, in time order).
A `get_node_memory` read returns the node's entries written before it (§5.5); ari-core's own
searches (BFTS selection) rank the react store alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable

import numpy as np

from ari_mem_tui.demo.records import Entry, Read

TOP_K = 200  # ARI_MEMORY_LETTA_OVERFETCH default; limit 5 * 40 is smaller
WORD = re.compile(r"\w+")
STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "on",
        "in",
        "to",
        "and",
        "or",
        "with",
        "for",
        "at",
        "by",
        "is",
        "it",
        "be",
        "as",
        "from",
        "into",
        "vs",
    }
)


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


class Pool:
    """Every entry of the run in time order, indexed for the reads made while it grew.

    `entries` must be sorted by ts with `index` set to each one's position; `unseen` names the
    entries stamped before a read but not yet in the server's pool when it ran (the planted
    late insert)."""

    def __init__(
        self,
        entries: list[Entry],
        queries: Iterable[str],
        unseen: Callable[[Read], list[Entry]],
    ) -> None:
        self.entries = entries
        self.unseen = unseen
        self.ts_list = [e.ts for e in entries]
        self.postings = _postings(entries, queries)
        own = [e for e in entries if e.kind == "node_scope"]
        self.writer_ts = [e.ts for e in own]
        self.writer_id = [e.node_id for e in own]
        self.by_node: dict[str, list[Entry]] = {}
        for entry in own:
            self.by_node.setdefault(entry.node_id, []).append(entry)
        self.by_node_ts = {k: [e.ts for e in v] for k, v in self.by_node.items()}
        self.react = [e for e in entries if e.kind == "react_step"]
        self.react_words = {id(e): words(e.text[:300]) for e in self.react}

    def last_writer(self, ts: float) -> str:
        """The node whose entry was the last written before `ts` ("" before any): the stale
        "current node" a read logs when no node set it (§4.5)."""
        k = bisect.bisect_left(self.writer_ts, ts)
        return self.writer_id[k - 1] if k else ""

    def answer(self, read: Read) -> None:
        """Fill `read.hits` and `read.results` as the server answered it at `read.ts`."""
        ANSWERS[read.mode](self, read)

    def window(self, query: str, n: int, extra: int = 0) -> np.ndarray:
        """Positions of the top-`TOP_K` (+ `extra`) pool entries (pool = first n), best first,
        ties by age."""
        top_k = TOP_K + extra
        counts = np.zeros(n, dtype=np.int32)
        for w in words(query):
            post = self.postings.get(w)
            if post is not None:
                counts[post[: np.searchsorted(post, n)]] += 1
        if n <= top_k:
            return np.argsort(-counts, kind="stable")
        pos = np.flatnonzero(counts)
        if len(pos) >= top_k:
            key = (-counts[pos]).astype(np.int64) * n + pos
            best = np.argpartition(key, top_k - 1)[:top_k]
            return pos[best[np.argsort(key[best])]]
        ranked = pos[np.argsort(-counts[pos], kind="stable")]
        zeros = np.flatnonzero(counts == 0)[: top_k - len(pos)]
        return np.concatenate([ranked, zeros])

    def answer_search(self, read: Read) -> None:
        scope = set(read.ancestor_ids or ())
        n = bisect.bisect_left(self.ts_list, read.ts)
        unseen = {id(e) for e in self.unseen(read)}
        ranked = (self.entries[p] for p in self.window(read.query, n, len(unseen)).tolist())
        for rank, entry in enumerate(e for e in ranked if id(e) not in unseen):
            if entry.kind == "node_scope" and entry.node_id in scope:
                read.hits.append(entry)
                read.results.append(
                    {
                        "entry_id": entry.eid,
                        "src_node_id": entry.node_id,
                        "score": max(0.0, 1.0 - 0.01 * rank),
                    }
                )
                if len(read.hits) == read.limit:
                    break

    def answer_inherit(self, read: Read) -> None:
        target = (read.ancestor_ids or [""])[0]
        entries = self.by_node.get(target, [])
        k = bisect.bisect_left(self.by_node_ts.get(target, []), read.ts)
        read.hits = entries[:k]
        read.results = [
            {"src_node_id": target, "entry_id": e.eid, "type": e.metadata.get("type")}
            for e in read.hits
        ]
        read.limit = len(read.hits)

    def answer_react(self, read: Read) -> None:
        pool = [e for e in self.react if e.ts < read.ts]
        want = words(read.query)
        ranked = sorted(pool, key=lambda e: -len(want & self.react_words[id(e)]))
        read.hits = ranked[: read.limit]
        read.results = [
            {"entry_id": e.eid, "src_node_id": "", "score": max(0.0, 1.0 - 0.01 * r)}
            for r, e in enumerate(read.hits)
        ]


def _postings(entries: list[Entry], queries: Iterable[str]) -> dict[str, np.ndarray]:
    """Inverted lists (entry positions, ascending) for the words any query uses."""
    vocab = set()
    for q in queries:
        vocab.update(words(q))
    lists: dict[str, list[int]] = {}
    for entry in entries:
        text = entry.rank_text if entry.rank_text is not None else entry.text
        for w in set(WORD.findall(text[:300].lower())) & vocab:
            lists.setdefault(w, []).append(entry.index)
    # words in more than a tenth of the pool carry no signal (an IDF cut); dropping them
    # keeps every search's cost proportional to the entries that share a rare word
    common = max(50, len(entries) // 10)
    return {w: np.asarray(v, dtype=np.int64) for w, v in lists.items() if len(v) <= common}


# how a read is answered, by its mode
ANSWERS: dict[str, Callable[[Pool, Read], None]] = {
    "search": Pool.answer_search,
    "inherit": Pool.answer_inherit,
    "react": Pool.answer_react,
}
