"""bm25s's BM25 index of a pool, computed in columns: the same posting lists, bit for bit.

`bm25s.tokenize` and `BM25.index` walk every token of every text in Python (a Counter and five
small numpy calls per text): 6–7 s for a 10,000-node run's 200,000 texts, the whole of a cold
first open's wait for its first hits after the load. Here each text is split in C (an ASCII
text by a byte table and `str.split`, any other by bm25s's own pattern), every word is given its
stem's id by one dict lookup, and the term frequencies, document frequencies and scores are
numpy over all the (token, text) pairs at once: about 2 s, and less memory at its peak.

What must stay bm25s's, and does (tests/test_bm25_index.py compares every posting list with
bm25s's own build, bit for bit):
- the tokens: lower case, then `(?u)\\b\\w\\w+\\b`, English stop words dropped before the
  Snowball stemmer;
- the Lucene scores as bm25s rounds them: idf by `math.log` in double, stored as float32;
  tf / (k1 · (1 − b + b · len / avg len) + tf) in double; their product rounded to float32;
- the CSC layout: per token, the texts in order; an extra "" token with no postings.
Token ids are another matter: bm25s numbers stems in the order of a `set` (so by string hash,
from one process to the next); here they come in order of first use. A score does not depend on
them: a token's posting list is the same under any id.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np

TOKEN = re.compile(r"(?u)\b\w\w+\b")  # bm25s.tokenize's default token pattern
K1, B = 1.5, 0.75  # bm25s.BM25's defaults (method "lucene")
CHUNK = 8192  # texts split at a time: their word strings are let go before the next chunk

# An ASCII text's word characters (the pattern's \w on ASCII: letters, digits, "_") kept, every
# other byte a space: `split()` then gives the pattern's runs, and single characters, dropped
# with the stop words.
_WORD_BYTES = bytes(c if chr(c).isalnum() or c == ord("_") else 32 for c in range(128)) + bytes(
    [32] * 128
)


def words(text: str) -> list[str]:
    """The text's lower-cased words as bm25s splits them, single characters included when
    ASCII (the callers drop them)."""
    low = text.lower()
    if low.isascii():
        return low.encode().translate(_WORD_BYTES).decode().split()
    return TOKEN.findall(low)


def query_words(text: str) -> list[str]:
    """The text's words as bm25s keeps them, before stop words and stemming."""
    return [w for w in words(text) if len(w) > 1]


class Vocabulary:
    """Each word met → the id of its stem (-1: a stop word or a single character), stems
    numbered in order of first use."""

    def __init__(self, stopwords: frozenset[str], stem_words: Callable[[list[str]], Any]) -> None:
        self.stopwords, self.stem_words = stopwords, stem_words
        self.word_id: dict[str, int] = {}
        self.stem_id: dict[str, int] = {}

    def ids(self, found: list[str]) -> np.ndarray:
        """The stem id of every word of `found`, new words stemmed (once each) and added."""
        word_id = self.word_id
        new = [w for w in dict.fromkeys(found) if w not in word_id]
        if new:
            kept = [w for w in new if len(w) > 1 and w not in self.stopwords]
            stems = list(self.stem_words(kept))
            stem_id = self.stem_id
            for stem in stems:
                stem_id.setdefault(stem, len(stem_id))
            word_id.update(dict.fromkeys(new, -1))
            word_id.update(zip(kept, map(stem_id.__getitem__, stems)))
        return np.fromiter(map(word_id.__getitem__, found), dtype=np.int64, count=len(found))


def token_keys(texts: Sequence[str], vocab: Vocabulary) -> np.ndarray:
    """`stem id × len(texts) + text index` of every kept token of every text: one int64 per
    token (sorted, they are the CSC order: per token, its texts ascending)."""
    n_docs = len(texts)
    keys: list[np.ndarray] = []
    for start in range(0, n_docs, CHUNK):
        found = list(map(words, texts[start : start + CHUNK]))
        lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
        ids = vocab.ids(list(chain.from_iterable(found)))
        docs = np.repeat(np.arange(start, start + len(found), dtype=np.int64), lengths)
        kept = ids >= 0
        keys.append(ids[kept] * n_docs + docs[kept])
    return np.concatenate(keys) if keys else np.zeros(0, np.int64)


def build(
    texts: Sequence[str], stopwords: frozenset[str], stem_words: Callable[[list[str]], Any]
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """bm25s's `scores` dict (data, indices, indptr, num_docs) and vocabulary of the texts; None
    when they hold no token (bm25s cannot index that). Arrays are freed, sorted and divided in
    place as it goes: at 10k nodes there are 4.5 million tokens."""
    vocab = Vocabulary(stopwords, stem_words)
    keys = token_keys(texts, vocab)
    n_docs, n_vocab = len(texts), len(vocab.stem_id)
    if not n_vocab:
        return None
    doc_len = np.bincount(keys % n_docs, minlength=n_docs)
    avg_len = doc_len.mean()  # (bm25s: the mean of an int64 array of the lengths, as here)
    keys.sort()
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    first = np.flatnonzero(new)
    del new
    tf = np.diff(first, append=len(keys))  # each (token, text)'s count
    pairs = keys[first]
    del keys, first
    token = np.empty(len(pairs), dtype=np.int32)
    doc = np.empty(len(pairs), dtype=np.int32)
    np.divmod(pairs, n_docs, out=(token, doc), casting="unsafe")  # (both fit: see the keys)
    del pairs
    df = np.bincount(token, minlength=n_vocab)
    idf_of = {d: math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for d in np.unique(df).tolist()}
    idf = np.array([idf_of[d] for d in df.tolist()], dtype=np.float32)
    # bm25s's arithmetic, in its order and types: idf32 × (tf / (norm + tf)) in double
    score = K1 * ((1 - B) + B * doc_len.astype(np.float64) / avg_len)[doc]
    score += tf
    np.divide(tf, score, out=score)
    score *= idf[token]
    del token
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    data = score.astype(np.float32)
    del score
    scores = {"data": data, "indices": doc, "indptr": indptr, "num_docs": n_docs}
    vocabulary = dict(vocab.stem_id)
    vocabulary.setdefault("", n_vocab)  # bm25s's empty token, after the others
    return scores, vocabulary
