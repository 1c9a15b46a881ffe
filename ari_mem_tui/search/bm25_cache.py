"""On-disk cache of BM25 indexes, outside any checkpoint: a run's lexical index is built once.

Layout: `<root>/bm25/<key>/`, one bm25s index per pool, where the key is a hash of everything
the index depends on (every text as the ranker cuts it, in pool order, the cut, bm25s' version
and the tokenizer settings): a pool that differs in one character gets another key. A folder
appears atomically (saved under a temp name, then renamed) and is read memory-mapped, so a
reopen costs milliseconds instead of a tokenize-and-index pass (about 10 s on 200,000 entries).
The KEEP most recently used folders are kept; older ones are removed. Anything that goes wrong
(no cache dir, a damaged folder, a full disk) only costs the build: the ranker never fails on it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KEEP = 8  # indexes kept; each is about a fifth of its texts' size


def pool_key(texts: list[str], settings: str) -> str:
    digest = hashlib.sha1(settings.encode())
    for text in texts:
        digest.update(len(text).to_bytes(8, "little"))  # no two lists hash alike by joining
        digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def cached_index(root: Path, key: str, build: Callable[[], Any], bm25s: Any) -> Any:
    """The bm25s index stored under `key`, else `build()`'s, stored for next time."""
    folder = root / "bm25" / key
    if folder.is_dir():
        try:
            retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
            os.utime(folder)  # recently used: kept by the pruning below
            return retriever
        except Exception:  # noqa: BLE001 - a damaged index is rebuilt, never fatal
            shutil.rmtree(folder, ignore_errors=True)
    retriever = build()
    if retriever is not None:
        _store(retriever, folder)
    return retriever


def _store(retriever: Any, folder: Path) -> None:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
    except OSError:
        return
    try:
        retriever.save(str(tmp), show_progress=False)
        os.replace(tmp, folder)  # fails if another process stored it first: theirs is kept
    except (OSError, ValueError):
        shutil.rmtree(tmp, ignore_errors=True)
        return
    _prune(folder.parent)


def _prune(root: Path) -> None:
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
        folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in folders[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
        for stray in root.glob(".tmp-*"):  # a crash mid-save; an hour leaves a live save alone
            if time.time() - stray.stat().st_mtime > 3600:
                shutil.rmtree(stray, ignore_errors=True)
    except OSError:
        pass
