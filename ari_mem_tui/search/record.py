"""Recording searches as a Letta server embedding with the local MiniLM would have answered them.

The demo (`ari_mem_tui.demo`, which imports nothing of ours) writes a run and then asks an
injected recorder for the results of its start-up searches, so that they come from the very
ranker a replay uses by default. This is that recorder: it loads the written run, ranks each
search's query over the pool as it stood at the read's time (`before_ts`: the entries written
before it, less those whose insert had not landed yet) with MiniLM, applies ARI's post-filter
(`search.replay.post_filter`, the one implementation) and returns the rows ARI's access log holds
for a `search_memory` read (§4.2): `{entry_id, src_node_id, score}` in rank order, the passage id
as the entry id and the score `1 − 0.01·r` of the unfiltered window rank, in ARI's arithmetic.

Computing the vectors is the cost (~140 texts/s on two idle cores); they land in the vector
cache, so the TUI opening the demo afterwards ranks at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.search import embedder as minilm
from ari_mem_tui.search.embedded import EmbeddingRanker, make_ranker
from ari_mem_tui.search.replay import ari_score, checkpoint_hash, post_filter, top_k_for


class RecorderUnavailable(RuntimeError):
    """The recorder's ranker cannot rank (MiniLM missing or broken)."""


class MiniLMRecorder:
    """Callable `(checkpoint dir, searches) -> results`, for `demo.write_demo(record=…)`.

    Each search is a dict: `ts` (the read's time), `query`, `ancestor_ids`, `limit`, and
    `unseen`: passage ids written before `ts` whose insert had not landed on the server by then
    (the demo's planted late insert), left out of that search's pool.
    """

    # what settings.json says the run's Letta server embedded with (ARI's letta_embedding_config)
    embedding_config = minilm.LETTA_HANDLE

    def __init__(
        self,
        wait: Callable[[EmbeddingRanker], object] = EmbeddingRanker.wait,
        cache_dir: Path | str | None = None,
    ) -> None:
        self.wait = wait  # blocks until the vectors are ready (the CLI shows progress meanwhile)
        self.cache_dir = cache_dir

    def __call__(self, checkpoint: Path, searches: list[dict[str, Any]]) -> list[list[dict]]:
        ckpt = load_checkpoint(Path(checkpoint))
        ranker = make_ranker(ckpt, "minilm", cache_dir=self.cache_dir)
        assert isinstance(ranker, EmbeddingRanker)
        try:
            self.wait(ranker)
            # the nodes' start-up queries go to the vector cache too, so a replay embeds none
            ranker.queries_ready.wait()
            if not ranker.usable:
                raise RecorderUnavailable(ranker.error or "MiniLM vectors are not ready")
            ckpt_hash = checkpoint_hash(ckpt)
            by_passage = ckpt.entries_by_letta_id
            results = []
            for search in searches:
                unseen = {by_passage[p].id for p in search.get("unseen", ()) if p in by_passage}
                limit = int(search["limit"])
                top_k = top_k_for(limit)
                ranking = ranker.rank(search["query"], top_k + len(unseen), search["ts"])
                if ranking.used != minilm.MODEL_NAME:
                    raise RecorderUnavailable(ranking.note or f"ranked with {ranking.used}")
                window = [e for e in ranking.window if e.id not in unseen][:top_k]
                hits = post_filter(window, set(search["ancestor_ids"]), ckpt_hash, limit)
                results.append(
                    [
                        {
                            "entry_id": ckpt.entries_by_id[hit.entry_id].letta_id,
                            "src_node_id": hit.node_id,
                            "score": ari_score(hit.global_rank),
                        }
                        for hit in hits
                    ]
                )
            return results
        finally:
            ranker.stop()
