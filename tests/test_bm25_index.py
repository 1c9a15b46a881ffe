"""search/bm25_index.py builds the BM25 index bm25s builds: every token's posting list (texts and
float32 scores, bit for bit) equal to bm25s's own `tokenize` + `BM25.index`, on the demo's pool
and on generated texts (any Unicode, stop words, single letters, empty texts)."""

from __future__ import annotations

import bm25s
import numpy as np
import Stemmer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ari_mem_tui.search import bm25_index
from ari_mem_tui.search.embedded import BM25Ranker, Pool, english_stopwords

STEMMER = Stemmer.Stemmer("english")
STOPS = frozenset(english_stopwords())


def bm25s_own(texts: list[str]) -> tuple[dict, dict] | None:
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False)
    if not tokens.vocab:
        return None
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    return retriever.scores, retriever.vocab_dict


def postings(scores: dict, vocab: dict) -> dict[str, tuple[list[int], bytes]]:
    """Each token's texts and the bytes of its float32 scores (bit for bit)."""
    out = {}
    indptr = scores["indptr"]
    for token, tid in vocab.items():
        if token == "":  # (no postings: bm25s's empty token, past the matrix's last column)
            continue
        span = slice(int(indptr[tid]), int(indptr[tid + 1]))
        out[token] = (scores["indices"][span].tolist(), scores["data"][span].tobytes())
    return out


def assert_same_index(texts: list[str]) -> None:
    theirs = bm25s_own(texts)
    ours = bm25_index.build(texts, STOPS, STEMMER.stemWords)
    if theirs is None:
        assert ours is None
        return
    assert ours is not None
    (our_scores, our_vocab), (their_scores, their_vocab) = ours, theirs
    assert set(our_vocab) == set(their_vocab)
    assert our_scores["num_docs"] == their_scores["num_docs"] == len(texts)
    for key in ("data", "indices", "indptr"):
        assert our_scores[key].dtype == their_scores[key].dtype
        assert our_scores[key].shape == their_scores[key].shape
    assert postings(our_scores, our_vocab) == postings(their_scores, their_vocab)
    assert our_vocab[""] == len(our_vocab) - 1 == len(our_scores["indptr"]) - 1


def test_the_demo_pool_is_indexed_as_bm25s_indexes_it(demo_ckpt):
    from ari_mem_tui.checkpoint.load import load_checkpoint

    texts = Pool(load_checkpoint(demo_ckpt).entries).texts()
    assert len(texts) > 1000
    assert_same_index(texts)


ODD = [
    "",
    "a b c",  # single letters only: no token
    "the of and",  # stop words only
    "Straße İstanbul ΣΊΣΥΦΟΣ naïve café_au_lait 42 x2",
    "K-means (Kelvin sign: \u212a) and ﬁ ligatures; CJK 漢字テスト 한국어",
    "snake_case __dunder__ CamelCase 3.14159 v1.2.3 e-mail a.b.c",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u2003em-space",
    "kernel kernel KERNEL kernels tiling tiled tile",
]


def test_odd_texts_are_indexed_as_bm25s_indexes_them():
    assert_same_index(ODD)
    assert_same_index(ODD[:3])  # no token at all: both give none
    assert_same_index([])


def test_words_split_as_bm25s_pattern_splits():
    for text in ODD:
        assert bm25_index.query_words(text) == bm25_index.TOKEN.findall(text.lower())


PIECES = st.one_of(
    st.sampled_from("abcdeKLMN _-.,İıßé漢ﬁ0123\n\t\u212a"),
    st.sampled_from(["the ", "and ", "kernel ", "tiling ", "running ", "Kernels. "]),
    st.characters(),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(PIECES, max_size=40).map("".join), max_size=25))
def test_generated_texts_are_indexed_as_bm25s_indexes_them(texts):
    for text in texts:
        assert bm25_index.query_words(text) == bm25_index.TOKEN.findall(text.lower())
    assert_same_index(texts)


def test_many_texts_cross_the_chunks_as_one(monkeypatch):
    """Texts split a few at a time (the word strings let go between chunks) index as at once."""
    texts = [f"kernel {i % 7} tiling run{i % 13} the {'x' * (i % 3)} loop{i}" for i in range(50)]
    whole = bm25_index.build(texts, STOPS, STEMMER.stemWords)
    monkeypatch.setattr(bm25_index, "CHUNK", 3)
    chunked = bm25_index.build(texts, STOPS, STEMMER.stemWords)
    assert whole is not None and chunked is not None
    assert postings(*whole) == postings(*chunked)
    assert_same_index(texts)


def test_the_ranker_scores_its_built_index_as_bm25s_scores_its_own(demo_ckpt, tmp_path):
    """The ranker's index (built here, stored in bm25s's format) scores every query as an index
    bm25s built itself does, bit for bit."""
    from ari_mem_tui.checkpoint.load import load_checkpoint
    from ari_mem_tui.search.embedded import start_queries

    ckpt = load_checkpoint(demo_ckpt)
    ranker = BM25Ranker(Pool(ckpt.entries), tmp_path)
    cut = ranker._cut
    texts = [t if len(t) <= cut else t[:cut] for t in ranker.pool.texts()]
    theirs = bm25s.BM25()
    theirs.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=STEMMER, show_progress=False),
        show_progress=False,
    )
    scored = 0
    for query in start_queries(ckpt):
        tokens = ranker.query_tokens(query)
        if tokens:
            expected = theirs.get_scores(tokens)
            assert np.array_equal(ranker._relevance(tokens), expected)
            scored += int(np.count_nonzero(expected) > 0)
    assert scored > 30
