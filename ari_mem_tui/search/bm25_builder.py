"""The process search/bm25_warm.py starts on a first open: `python -m
ari_mem_tui.search.bm25_builder CHECKPOINT CACHE` reads the run's backup, says its pool's key on
stdout, builds that pool's BM25 index and stores it in CACHE; exit 1 when the backup gives no
entry (nothing said). A module of its own: the rankers it imports import bm25_warm."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from ari_mem_tui.checkpoint.load import backup_entries
from ari_mem_tui.search.embedded import BM25Ranker, Pool, bm25_key


def build(checkpoint: Path, cache: Path) -> int:
    """Read the backup, say its pool's key, build and store its index; the exit code."""
    gc.disable()  # (its objects live until it ends: nothing for the collector to find)
    entries = backup_entries(checkpoint)
    if entries is None:
        return 1
    pool = Pool(entries)
    print(bm25_key(pool), flush=True)
    BM25Ranker(pool, cache, checkpoint)  # built, and stored by bm25_cache.cached_index
    return 0


if __name__ == "__main__":
    code = build(Path(sys.argv[1]), Path(sys.argv[2]))
    sys.stdout.flush()
    os._exit(code)  # (no teardown of the heap it built: the index is stored)
