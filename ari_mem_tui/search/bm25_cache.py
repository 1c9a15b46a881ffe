"""On-disk cache of BM25 indexes, outside any checkpoint: a run's lexical index is built once.

Layout: `<root>/bm25/<key>/`, one bm25s index per pool, where the key is a hash of everything
the index depends on (every text, in pool order, the cut the ranker makes, bm25s' version,
the tokenizer settings and FORMAT): a pool that differs in one character gets another key. A folder
appears atomically (saved under a temp name, then renamed) with a manifest holding its key,
the checksum of each of its files and the stop words a query drops, and is read memory-mapped, so a reopen costs milliseconds
instead of a tokenize-and-index pass (about 10 s on 200,000 entries). Before use every file must
be a regular file within `cache-mib` whose bytes match the manifest, the manifest's key this
key, and the arrays must describe an index of this pool (checkpoint/cachefile.py); anything
else is removed and rebuilt, said once. A stored index is read with numpy and json alone
(`StoredIndex`): bm25s and scipy under it cost ~0.2 s of import, a warm `saw` needs neither. The KEEP most recently used folders are kept; older ones
are removed. Anything that goes wrong (no cache dir, a damaged folder, a full disk) only costs
the build: the ranker never fails on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.model.columns import Texts, utf8

FORMAT = 2  # 2: the manifest holds the stop words (a query is tokenised without bm25s)
KEEP = 8  # indexes kept; each is about a fifth of its texts' size
MANIFEST = "manifest.ari-mem-tui.json"
MANIFEST_BYTES = 1 << 16
# bm25s's methods that score a document by its own terms alone (no non-occurrence array)
TERM_METHODS = ("robertson", "lucene", "atire")
FILES = (  # what bm25s saves for our (Robertson) index, and all it loads
    "params.index.json",
    "vocab.index.json",
    "data.csc.index.npy",
    "indices.csc.index.npy",
    "indptr.csc.index.npy",
)


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
    folder = root / "bm25" / key
    if os.path.lexists(folder):
        try:
            stored = _load(folder, key, docs)
            os.utime(folder)  # recently used: kept by the pruning below
            return stored, stored.stopwords
        except cachefile.CacheMiss as exc:
            cachefile.rebuilt("BM25 index", folder, exc)
            _remove(folder)
    retriever, stopwords = build()
    if retriever is not None:
        _store(retriever, folder, key, stopwords)
    return retriever, stopwords


class StoredIndex:
    """A stored bm25s index as the ranker reads a retriever (`scores`, `vocab_dict`, `dtype`,
    `get_tokens_ids`), from bm25s's own files: its `load` reads these same files with numpy
    and json. Only methods that score a document by its own terms are read here (no
    `nonoccurrence_array`: BM25L and BM25+ are rebuilt by bm25s instead)."""

    nonoccurrence_array = None

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        params = cachefile.decode_json(cachefile.read_file(folder / "params.index.json"))
        vocab = cachefile.decode_json(cachefile.read_file(folder / "vocab.index.json"))
        if not isinstance(params, dict) or params.get("method") not in TERM_METHODS:
            raise cachefile.CacheMiss("its parameters are not those of this ranker")
        self.dtype = str(params.get("dtype", "float32"))
        if self.dtype not in ("float32", "float64"):
            raise cachefile.CacheMiss(f"its dtype {self.dtype!r} is not a float")
        self.vocab_dict = vocab
        self.scores = {
            name: np.load(folder / f"{name}.csc.index.npy", mmap_mode="r", allow_pickle=False)
            for name in ("data", "indices", "indptr")
        }
        self.scores["num_docs"] = params.get("num_docs")
        words = manifest.get("stopwords")
        if not isinstance(words, list) or not all(type(w) is str for w in words):
            raise cachefile.CacheMiss("its manifest holds no stop words")
        self.stopwords: list[str] = words

    def get_tokens_ids(self, tokens: list[str]) -> list[int]:
        """The ids of the tokens in the vocabulary, in query order (others are left out)."""
        vocab = self.vocab_dict
        return [vocab[token] for token in tokens if token in vocab]


def _load(folder: Path, key: str, docs: int) -> StoredIndex:
    """The index in `folder`, when every check of the module's docstring holds; else CacheMiss."""
    if folder.is_symlink() or not folder.is_dir():
        raise cachefile.CacheMiss("not a folder")
    try:
        manifest = cachefile.decode_json(cachefile.read_file(folder / MANIFEST, MANIFEST_BYTES))
        if not isinstance(manifest, dict) or manifest.get("key") != key:
            raise cachefile.CacheMiss("its manifest is for another pool")
        sums = manifest.get("files")
        if not isinstance(sums, dict) or set(sums) != set(FILES):
            raise cachefile.CacheMiss("its manifest lists other files")
        for name in FILES:
            if cachefile.checksum(cachefile.read_file(folder / name)) != sums[name]:
                raise cachefile.CacheMiss(f"{name} damaged: its checksum does not match")
    except FileNotFoundError as exc:
        raise cachefile.CacheMiss(f"{Path(exc.filename or '?').name} missing") from None
    try:
        stored = StoredIndex(folder, manifest)
        _check_arrays(stored, docs)
    except cachefile.CacheMiss:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever numpy makes of bad bytes
        raise cachefile.CacheMiss(f"unreadable ({type(exc).__name__})") from None
    return stored


def _check_arrays(retriever: Any, docs: int) -> None:
    """CacheMiss unless the arrays are an index of `docs` texts that a query can read within
    bounds: a column pointer per vocabulary word (bm25s keeps as many as words, the last
    word's end being the data's), rows below `docs`, finite scores."""
    scores, vocab = retriever.scores, retriever.vocab_dict
    data, indices, indptr = scores["data"], scores["indices"], scores["indptr"]
    ids = list(vocab.values()) if isinstance(vocab, dict) else None
    ok = (
        scores.get("num_docs") == docs
        and ids is not None
        and all(type(i) is int and 0 <= i < len(indptr) for i in ids)
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


def _remove(folder: Path) -> None:
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink(missing_ok=True)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _store(retriever: Any, folder: Path, key: str, stopwords: list[str]) -> None:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".tmp-"))
    except OSError:
        return
    try:
        retriever.save(str(tmp), show_progress=False)
        sums = {name: cachefile.checksum(cachefile.read_file(tmp / name)) for name in FILES}
        manifest = json.dumps({"key": key, "files": sums, "stopwords": stopwords}).encode()
        (tmp / MANIFEST).write_bytes(manifest)
        os.replace(tmp, folder)  # fails if another process stored it first: theirs is kept
    except (OSError, ValueError, cachefile.CacheMiss):
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
