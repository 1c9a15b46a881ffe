"""The arrays the one cache format hands out (checkpoint/cachefile.array): numpy's own dtype, in
this machine's byte order, aligned and read-only, wherever msgpack left their bytes in the file.

numpy's fast loops skip an array that is unaligned or whose dtype is spelled little-endian rather
than native (equal dtypes, another descriptor): BM25's `np.add.at` took 6.0 s instead of 0.4 s
in a 2k-node `health --embedder bm25` when the stored index came back as '<f4' views. Checked
here by the arrays' descriptors and flags, not by timing: the BM25 index and the vector segments
read back from files whose arrays lie at every offset, and what the BM25 ranker adds up.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pytest
from search_helpers import make_entry

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.search import bm25_cache
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.vector_cache import KIND as VECTORS
from ari_mem_tui.search.vector_cache import Segment, VectorCache, text_key

TEXTS = [
    "Cache tiling of the GEMM kernel doubled throughput on the A100.",
    "The learning rate warmup stabilised training; the kernel ran again.",
    "Tiling the SpMV kernel by rows of the CSR matrix helped little.",
    "The dataset loader crashed on a malformed JSON line.",
]


def address(buffer: bytes | memoryview) -> int:
    return np.frombuffer(buffer, dtype=np.uint8).ctypes.data


def offset_in_file(view: memoryview) -> int:
    """Where a decoded field's bytes start in the file's bytes they are a view of."""
    return address(view) - address(view.obj)


def assert_numpy_own(got: np.ndarray, kind: str) -> None:
    """numpy's own descriptor for `kind` (byte order '=' or '|', never '<'), aligned."""
    assert got.dtype == np.dtype(kind)
    assert got.dtype.byteorder in "=|" and got.dtype.isnative, got.dtype.byteorder
    assert got.flags.aligned and got.flags.c_contiguous


@pytest.mark.parametrize("kind", ["float32", "float64", "int32", "int64"])
def test_an_array_is_numpy_own_at_every_offset_and_copied_only_when_unaligned(kind: str) -> None:
    values = (np.arange(-5, 6) * 3).astype(kind)
    raw = values.astype(np.dtype(kind).newbyteorder("<")).tobytes()
    copied = 0
    for offset in range(8):
        view = memoryview(bytes(offset) + raw)[offset:]
        got = cachefile.array(view, kind)
        assert_numpy_own(got, kind)
        assert not got.flags.writeable
        assert np.array_equal(got, values)
        aligned = address(view) % np.dtype(kind).itemsize == 0
        assert (got.ctypes.data == address(view)) == aligned  # a view where it can be
        copied += not aligned
    assert copied  # some offsets left the bytes unaligned: the copy was checked too


def test_bytes_that_are_not_whole_items_are_a_cache_miss() -> None:
    with pytest.raises(cachefile.CacheMiss, match="an array of int64 cut short"):
        cachefile.array(memoryview(bytes(12)), "int64")


def test_the_bm25_index_read_back_is_numpy_own_wherever_its_arrays_lie(tmp_path: Path) -> None:
    """The stored index with its arrays shifted by 0-7 bytes (one more stop word, of 0-7
    letters, before them): each array read back is aligned, native, of the dtype bm25s built,
    equal to the built one; and what the ranker adds up (`np.add.at`'s scores) is too."""
    pool = Pool([make_entry(i, "node_root", t, ts=float(i)) for i, t in enumerate(TEXTS)])
    built = BM25Ranker(pool, tmp_path)._retriever  # (bm25s's; stored for the next)
    (path,) = (tmp_path / "bm25").iterdir()
    key, sound = path.stem, path.read_bytes()
    stored = cachefile.unpack(sound, bm25_cache.KIND, bm25_cache.Stored)
    names = ("data", "indices", "indptr")
    offsets = set()
    for extra in range(8):
        word = "q" * extra  # (a str of n letters: n + 1 bytes of msgpack)
        shifted = msgspec.structs.replace(stored, stopwords=[*stored.stopwords, word])
        data = cachefile.pack(bm25_cache.KIND, shifted)
        path.write_bytes(data)
        again = cachefile.unpack(data, bm25_cache.KIND, bm25_cache.Stored)
        offsets |= {offset_in_file(getattr(again, n)) % 8 for n in names}
        index = bm25_cache._load(path, key, len(TEXTS))
        for name in names:
            assert_numpy_own(index.scores[name], str(built.scores[name].dtype))
            assert np.array_equal(index.scores[name], built.scores[name])
    assert len(offsets) == 8  # every offset in the file was read
    path.write_bytes(sound)
    ranker = BM25Ranker(pool, tmp_path)
    assert isinstance(ranker._retriever, bm25_cache.StoredIndex)
    for array, name in zip(ranker._posting_arrays(), names, strict=True):
        assert_numpy_own(array, str(built.scores[name].dtype))
    assert len(ranker.rank("kernel tiling", 2, before_ts=10.0).window) == 2
    assert ranker._by_time  # the posting lists `np.add.at` took
    for rows, values in ranker._by_time.values():
        assert_numpy_own(rows, "int64")
        assert_numpy_own(values, ranker._retriever.dtype)


@pytest.mark.parametrize(("dim", "offset"), [(4, 0), (200, 2)])
def test_vector_segments_read_back_are_numpy_own(tmp_path: Path, dim: int, offset: int) -> None:
    """A segment's vectors aligned in its file (4 dimensions) and unaligned (200: 2 bytes past
    a multiple of 4, the dimension's msgpack and the vectors' length being longer): aligned
    native float32 either way, from a segment read (`_verified`), `load` and `find`."""
    cache = VectorCache(tmp_path, "m", dim)
    keys = [text_key(t) for t in TEXTS]
    vecs = np.arange(len(TEXTS) * dim, dtype=np.float32).reshape(len(TEXTS), dim) / 7
    cache.add(keys, vecs)
    (seg,) = cache.segments()
    body = cachefile.unpack(seg.read_bytes(), VECTORS, Segment)
    assert offset_in_file(body.vecs) % 4 == offset  # the case it stands for
    got_keys, got = cache._verified(seg)
    assert got_keys == keys
    assert_numpy_own(got, "float32")
    assert np.array_equal(got, vecs)
    loaded_keys, loaded = cache.load()
    assert loaded_keys == keys
    assert_numpy_own(loaded, "float32")
    assert np.array_equal(loaded, vecs)
    found = cache.find({keys[2]})[keys[2]]
    assert_numpy_own(found, "float32")
    assert np.array_equal(found, vecs[2])
