"""On-disk cache of BM25 indexes, outside any checkpoint: a run's lexical index is built once.

Layout: `<root>/bm25/<key>.idx`, one index per pool, where the key is a hash of everything the
index depends on (every text, in pool order, the cut the ranker makes, bm25s' version, the
tokenizer settings and FORMAT): a pool that differs in one character gets another key. A file is
one cache file of the tool's one format (checkpoint/cachefile.py: a sealed msgpack body) holding
its key, bm25s's parameters, the stop words a query drops, the vocabulary and the three CSC
arrays, and appears atomically (written to a temp file, then renamed), so a reopen costs
milliseconds instead of a tokenize-and-index pass (about 10 s on 200,000 entries). Before use
it must be a regular file of this user's within `cache-mib` whose bytes match its checksum, its
key this key, and its arrays must describe an index of this pool; anything else is removed and
rebuilt, said once. A stored index is read with numpy alone (`StoredIndex`, its arrays views of
the bytes read): bm25s and scipy under it cost ~0.2 s of import, a warm `saw` needs neither. The
KEEP most recently used indexes are kept (a use touches the file); older ones are removed.
Anything that goes wrong (no cache dir, a damaged file, a read-only or full disk) only costs
the build, said once with its time: the ranker never fails on it.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.model.columns import Texts, utf8

FORMAT = 3  # 2: the manifest holds the stop words; 3: one cache file (the tool's one format)
KIND = f"bm25/{FORMAT}"
SUFFIX = ".idx"
KEEP = 8  # indexes kept; each is about a fifth of its texts' size
# bm25s's methods that score a document by its own terms alone (no non-occurrence array)
TERM_METHODS = ("robertson", "lucene", "atire")


def pool_key(texts: Texts | Sequence[str], settings: str) -> str:
    """The key of a pool's index: `settings`, then every text's size and its UTF-8 bytes in
    pool order (no two lists hash alike by joining). A run's column is hashed as its buffer
    holds it, not decoded (200k texts: 0.6 s less at every open), its sizes found by numpy
    (a loop over 200k rows took half of the key's time at a reopen)."""
    digest = hashlib.sha1(settings.encode())
    if not isinstance(texts, Texts):
        texts = Texts(b"".join(data := [utf8(t) for t in texts]), *_bounds(data))
    starts = np.asarray(texts.starts, dtype=np.int64)
    ends = np.asarray(texts.ends, dtype=np.int64)
    present = starts >= 0  # (a row without text: size 0, no bytes)
    digest.update(np.where(present, ends - starts, 0).astype(np.int64).tobytes())
    buf = texts.buf
    if present.all() and np.array_equal(starts[1:], ends[:-1]):  # one run of the buffer
        digest.update(buf[int(starts[0]) : int(ends[-1])] if len(starts) else b"")
        return digest.hexdigest()
    for start, end in zip(starts[present].tolist(), ends[present].tolist(), strict=True):
        digest.update(buf[start:end])
    return digest.hexdigest()


def _bounds(data: list[bytes]) -> tuple[array, array]:
    ends = array("q", accumulate(map(len, data)))
    return array("q", [0]) + ends[:-1] if data else array("q"), ends


def cached_index(
    root: Path,
    key: str,
    build: Callable[[], tuple[Any, list[str]]],
    docs: int,
    checkpoint: Path | None = None,
) -> tuple[Any, list[str]]:
    """The index of `docs` texts stored under `key` and the stop words it was built with, else
    `build()`'s (a bm25s retriever and its stop words), stored for next time (never when the
    cache dir `root` lies inside `checkpoint`)."""
    if cachefile.refuse_inside(root, checkpoint):
        return build()
    path = root / "bm25" / f"{key}{SUFFIX}"
    try:
        stored = _load(path, key, docs)
    except FileNotFoundError:
        pass
    except cachefile.CacheMiss as exc:
        cachefile.rebuilt("BM25 index", path, exc)
        _remove(path)
    else:
        cachefile.touch(path)  # recently used: kept by the pruning below (when it can be)
        return stored, stored.stopwords
    started = time.monotonic()
    retriever, stopwords = build()
    if retriever is not None:
        _store(retriever, path, key, stopwords, time.monotonic() - started)
    return retriever, stopwords


class Stored(msgspec.Struct, array_like=True):
    """A stored index: its key, bm25s's parameters, the stop words, the vocabulary, and the CSC
    arrays (`data`, `indices`, `indptr`) as bytes of the dtypes named."""

    key: str
    method: str
    num_docs: int
    stopwords: list[str]
    vocab: dict[str, int]
    dtypes: tuple[str, str, str]
    data: memoryview
    indices: memoryview
    indptr: memoryview


class StoredIndex:
    """A stored index as the ranker reads a bm25s retriever (`scores`, `vocab_dict`, `dtype`,
    `get_tokens_ids`). Only methods that score a document by its own terms are stored (no
    `nonoccurrence_array`: BM25L and BM25+ are rebuilt by bm25s instead)."""

    nonoccurrence_array = None

    def __init__(self, stored: Stored) -> None:
        if stored.method not in TERM_METHODS:
            raise cachefile.CacheMiss("its parameters are not those of this ranker")
        if stored.dtypes[0] not in ("float32", "float64") or any(
            kind not in ("int32", "int64") for kind in stored.dtypes[1:]
        ):
            raise cachefile.CacheMiss(f"arrays of type {', '.join(stored.dtypes)[:60]}")
        self.dtype = stored.dtypes[0]
        self.vocab_dict = stored.vocab
        self.scores: dict[str, Any] = {
            name: cachefile.array(getattr(stored, name), kind)
            for name, kind in zip(("data", "indices", "indptr"), stored.dtypes, strict=True)
        }
        self.scores["num_docs"] = stored.num_docs
        self.stopwords: list[str] = stored.stopwords

    def get_tokens_ids(self, tokens: list[str]) -> list[int]:
        """The ids of the tokens in the vocabulary, in query order (others are left out)."""
        vocab = self.vocab_dict
        return [vocab[token] for token in tokens if token in vocab]


def _load(path: Path, key: str, docs: int) -> StoredIndex:
    """The index in `path`, when every check of the module's docstring holds; else CacheMiss
    (FileNotFoundError: none stored)."""
    stored = cachefile.read_packed(path, KIND, Stored)
    if stored.key != key:
        raise cachefile.CacheMiss("it is the index of another pool")
    index = StoredIndex(stored)
    _check_arrays(index, docs)
    return index


def _check_arrays(retriever: Any, docs: int) -> None:
    """CacheMiss unless the arrays are an index of `docs` texts that a query can read within
    bounds: a column pointer per vocabulary word and one past the last (bm25s keeps as many as
    words, its empty token last), rows below `docs`, finite scores."""
    scores, vocab = retriever.scores, retriever.vocab_dict
    data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
    ok = (
        scores.get("num_docs") == docs
        and _vocab_fits(vocab, len(indptr))
        and indptr.ndim == indices.ndim == data.ndim == 1
        and len(indptr) >= 1
        and indptr[0] == 0
        and indptr[-1] == len(data) == len(indices)
        and bool(np.all(np.diff(indptr) >= 0))
        and (not len(indices) or (int(indices.min()) >= 0 and int(indices.max()) < docs))
        and bool(np.isfinite(data).all())
    )
    if not ok:
        raise cachefile.CacheMiss("its arrays do not describe an index of this pool")


def _vocab_fits(vocab: Any, pointers: int) -> bool:
    """Every word's postings within the column pointers: a word's end at its id + 1, so only
    bm25s's empty token ("", never a query's) may take the last pointer."""
    if not isinstance(vocab, dict):
        return False
    return all(type(i) is int and 0 <= i + bool(word) < pointers for word, i in vocab.items())


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():  # (a folder in its place: an older version)
        shutil.rmtree(path, ignore_errors=True)
    else:
        cachefile.remove(path)


def _store(retriever: Any, path: Path, key: str, stopwords: list[str], seconds: float) -> None:
    """Store a built index, when it can be: a read-only or full cache says once what it costs
    (the build, again on every run), and the answer is the same."""
    scores = retriever.scores
    arrays = [np.ascontiguousarray(scores[name]) for name in ("data", "indices", "indptr")]
    stored = Stored(
        key=key,
        method=str(getattr(retriever, "method", "lucene")),
        num_docs=int(scores["num_docs"]),
        stopwords=list(stopwords),
        vocab={str(word): int(i) for word, i in retriever.vocab_dict.items()},
        dtypes=tuple(str(a.dtype) for a in arrays),  # type: ignore[arg-type]
        data=memoryview(arrays[0].astype(arrays[0].dtype.newbyteorder("<"), copy=False)),
        indices=memoryview(arrays[1].astype(arrays[1].dtype.newbyteorder("<"), copy=False)),
        indptr=memoryview(arrays[2].astype(arrays[2].dtype.newbyteorder("<"), copy=False)),
    )
    cost = f"it is built again on every run ({seconds:.1f} s this time)"
    if cachefile.write_optional(path, cachefile.pack(KIND, stored), "BM25 index", cost):
        _prune(path.parent)


def _prune(root: Path) -> None:
    """Keep the KEEP most recently used indexes; remove older ones, an older version's folders
    and a crashed save's temp files (an hour old: a live save is left alone)."""
    try:
        found = [p for p in root.iterdir() if not p.name.startswith(".")]
        found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in found[KEEP:] + [p for p in found[:KEEP] if not p.name.endswith(SUFFIX)]:
            _remove(old)
        for stray in root.glob(".*.tmp"):
            if time.time() - stray.stat().st_mtime > 3600:
                cachefile.remove(stray)
    except OSError:
        pass
