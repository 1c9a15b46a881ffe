"""The run's own embedding model without a Letta server (`--embedder run`), against a FAKE
in-process endpoint (tests/fake_embeddings.py): where it sends, what it sends, batching,
retries (429 with Retry-After, 5xx), the one deadline, wrong dimensions and shapes, the key
never shown, vectors cached by model and text, Letta's order and as-of rule, nothing sent
without being asked. The equality with a real Letta server is the live suite's
(tests/test_letta_live.py)."""

from __future__ import annotations

import functools
import gzip
import json
import socket
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from fake_embeddings import error, fake_embeddings
from search_helpers import build_tree, make_entry

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.passages import SEPARATOR, passage_text
from ari_mem_tui.search.embed_client import (
    EmbeddingClient,
    EndpointFailed,
    batches,
    embeddings_url,
    retry_after,
)
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.run_model import (
    KEY_ENV,
    EmbedOptions,
    EmbedSetupError,
    handle_defaults,
    plan_endpoint,
)
from ari_mem_tui.search.run_ranker import (
    MAX_SEND_CHARS,
    LettaAsOfPool,
    RunModelRanker,
    make_run_ranker,
    micros,
)
from ari_mem_tui.search.vector_cache import endpoint_dims, endpoint_folder

KEY = "sk-test-SECRET-0123456789"


class Clock:
    """A clock that only moves when the client sleeps: retries cost no test time."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def client(fake, clock: Clock | None = None, **kwargs) -> EmbeddingClient:
    clock = clock or Clock()
    return EmbeddingClient(fake.url, "fake-model", sleep=clock.sleep, clock=clock, **kwargs)


# ---------------------------------------------------------------- where it sends


def test_the_handle_names_letta_s_own_endpoints_and_the_flags_override_them():
    assert handle_defaults("letta/letta-free") == (
        "https://embeddings.letta.com/",
        "letta-free",
        1536,
    )
    assert handle_defaults("letta-default") == handle_defaults("letta/letta-free")  # ARI's name
    assert handle_defaults("openai/text-embedding-3-small") == (
        "https://api.openai.com/v1",
        "text-embedding-3-small",
        1536,
    )
    assert handle_defaults("openai/text-embedding-3-large")[2] == 3072
    assert handle_defaults("ollama/nomic-embed-text:latest") == (
        "http://localhost:11434/v1",
        "nomic-embed-text:latest",
        None,
    )
    plan = plan_endpoint(EmbedOptions(), "openai/text-embedding-3-small", env={})
    assert (plan.url, plan.model, plan.dim, plan.matches_handle) == (
        "https://api.openai.com/v1",
        "text-embedding-3-small",
        1536,
        True,
    )
    assert "the run's handle openai/text-embedding-3-small" in plan.describe()
    assert f"no key (${KEY_ENV} is not set)" in plan.describe()
    mine = plan_endpoint(
        EmbedOptions(url="http://u:pw@127.0.0.1:9/v1?api_key=Q"),
        "openai/text-embedding-3-small",
        env={KEY_ENV: KEY},
    )
    assert mine.url.startswith("http://u:pw@") and mine.shown_url == "http://127.0.0.1:9/v1"
    assert f"key from ${KEY_ENV}" in mine.describe() and "pw" not in mine.describe()
    assert KEY not in mine.describe() and "api_key" not in mine.describe()
    other = plan_endpoint(EmbedOptions(model="bge-small"), "openai/text-embedding-3-small", env={})
    assert other.matches_handle is False and other.dim is None
    with pytest.raises(EmbedSetupError, match="settings.json names no handle"):
        plan_endpoint(EmbedOptions(), None, env={})
    with pytest.raises(EmbedSetupError, match="for handle ari-mem-tui/x"):
        plan_endpoint(EmbedOptions(), "ari-mem-tui/x", env={})
    with pytest.raises(EmbedSetupError, match="not an http"):
        plan_endpoint(EmbedOptions(url="ftp://host/v1", model="m"), None, env={})


# ---------------------------------------------------------------- the client


def test_texts_go_in_batches_as_letta_sends_them_and_come_back_in_order():
    texts = [f"passage {i} about kernels" for i in range(150)] + ["", "   "]
    with fake_embeddings() as fake:
        got = client(fake, batch_texts=64).embed(texts, 10**9)
        sizes = [len(r["body"]["input"]) for r in fake.requests]
        assert sizes == [64, 64, 24]
        assert all(r["path"] == "/v1/embeddings" for r in fake.requests)
        assert {r["body"]["model"] for r in fake.requests} == {"fake-model"}
        assert {r["body"]["encoding_format"] for r in fake.requests} == {"base64"}
        assert "authorization" not in {h.lower() for h in fake.requests[0]["headers"]}
        assert fake.texts() == texts[:150] + [
            " ",
            " ",
        ]  # blank texts are sent as " ", as Letta does
        want = np.array([fake.vector(t) for t in texts], dtype=np.float32)
    assert got.dtype == np.float32 and np.array_equal(got, want)


def test_an_answer_of_plain_numbers_is_read_too():
    with fake_embeddings(as_floats=True) as fake:
        got = client(fake).embed(["one", "two"], 10**9)
        assert np.array_equal(got, np.array([fake.vector("one"), fake.vector("two")], np.float32))


def test_batches_also_stop_at_a_character_budget():
    assert batches(["a" * 10, "b" * 10, "c" * 10], most=64, chars=25) == [
        ["a" * 10, "b" * 10],
        ["c" * 10],
    ]
    assert batches(["x" * 100], most=64, chars=25) == [["x" * 100]]  # one long text alone


def test_429_is_retried_after_the_time_it_asks_for_and_5xx_with_backoff():
    clock = Clock()
    with fake_embeddings() as fake:
        fake.script = [
            error(429, "slow down", **{"Retry-After": "7"}),
            error(429, "slow down", **{"Retry-After": "3"}),
            error(503, "busy"),
            error(502, "busy"),
        ]
        got = client(fake, clock).embed(["a", "b"], clock.now + 600)
        assert len(fake.requests) == 5 and got.shape == (2, fake.dim)
    assert clock.slept == [7.0, 3.0, 2.0, 4.0]  # Retry-After as asked; then the backoff (doubled)


def test_the_embeddings_path_goes_before_a_query():
    assert embeddings_url("http://h:1/v1/") == "http://h:1/v1/embeddings"
    assert embeddings_url("https://h/v1?api-version=2#x") == "https://h/v1/embeddings?api-version=2"


def test_retry_after_may_be_an_http_date():
    import httpx

    assert retry_after(httpx.Headers({"Retry-After": "12"})) == 12.0
    assert retry_after(httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after(httpx.Headers({})) is None


def test_a_wait_past_the_deadline_fails_at_once_in_one_line():
    clock = Clock()
    with fake_embeddings() as fake:
        fake.script = [error(429, "quota", **{"Retry-After": "120"})]
        with pytest.raises(EndpointFailed) as exc:
            client(fake, clock).embed(["a"], clock.now + 30)
    assert exc.value.kind == "rate-limited" and clock.slept == []
    line = str(exc.value)
    assert "\n" not in line and "HTTP 429" in line and "deadline" in line and "120" in line


def test_one_deadline_covers_every_batch_and_every_retry():
    clock = Clock()
    with fake_embeddings() as fake:
        fake.script = [error(503, "down")] * 100
        with pytest.raises(EndpointFailed) as exc:
            client(fake, clock, batch_texts=1).embed(["a", "b", "c"], clock.now + 5)
    assert sum(clock.slept) <= 5 and "deadline" in str(exc.value)
    assert len(fake.requests) == len(clock.slept) + 1  # every pause was followed by a try


def test_an_endpoint_that_is_not_there_is_offline():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clock = Clock()
    dead = EmbeddingClient(f"http://127.0.0.1:{port}/v1", "m", sleep=clock.sleep, clock=clock)
    with pytest.raises(EndpointFailed) as exc:
        dead.embed(["a"], clock.now + 600)
    assert exc.value.kind == "offline" and "connection refused" in str(exc.value)
    assert len(clock.slept) == 5  # retried: an endpoint may be starting


@pytest.mark.parametrize(
    ("answer", "kind", "words"),
    [
        ((200, {}, b"<html>hello</html>"), "wrong-shape", "not JSON"),
        ((200, {}, json.dumps({"data": []}).encode()), "wrong-shape", "0 embeddings for 2"),
        (
            (200, {}, json.dumps({"data": [{"embedding": "@@"}, {"embedding": "@@"}]}).encode()),
            "wrong-shape",
            "neither base64",
        ),
        (
            (
                200,
                {},
                json.dumps({"data": [{"embedding": [1.0, 2.0]}, {"embedding": [1.0]}]}).encode(),
            ),
            "wrong-dimension",
            "several dimensions",
        ),
        (
            (200, {}, json.dumps({"data": [{"embedding": [1.0] * 5000}] * 2}).encode()),
            "wrong-dimension",
            "5000-dimensional",
        ),
        ((200, {}, b"[" + b"1," * 300_000 + b"1]"), "wrong-shape", "more than"),
        (  # 1e400 written out: an int no float holds (OverflowError, exit 3)
            (200, {}, json.dumps({"data": [{"embedding": [10**400, 1.0]}] * 2}).encode()),
            "wrong-shape",
            "neither base64",
        ),
        ((400, {}, b'{"error": {"message": "no such model"}}'), "refused", "no such model"),
    ],
)
def test_an_answer_that_is_not_embeddings_is_one_line(answer, kind, words):
    with fake_embeddings() as fake:
        fake.script = [answer]
        with pytest.raises(EndpointFailed) as exc:
            client(fake).embed(["a", "b"], 10**9)
    assert exc.value.kind == kind and words in str(exc.value)
    assert "\n" not in str(exc.value)


def test_a_dimension_other_than_the_expected_one_is_an_error():
    with fake_embeddings(dim=8) as fake, pytest.raises(EndpointFailed) as exc:
        client(fake, dim=1536).embed(["a"], 10**9)
    assert exc.value.kind == "wrong-dimension" and "8-dimensional embeddings, not 1536" in str(
        exc.value
    )


def test_the_key_goes_in_the_header_and_nowhere_else():
    with fake_embeddings() as fake:
        fake.script = [error(401, f"Incorrect API key provided: {KEY}")]
        keyed = EmbeddingClient(fake.url, "m", api_key=KEY)
        with pytest.raises(EndpointFailed) as exc:
            keyed.embed(["a"], 10**12)
        assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in str(exc.value) and "Incorrect API key provided: ***" in str(exc.value)


def test_tls_against_a_plain_port_fails_at_once():
    """Issue 31 §8: a handshake that cannot succeed is not retried until the deadline (it was,
    for 23 s)."""
    clock = Clock()
    with fake_embeddings() as fake:
        tls = fake.url.replace("http://", "https://")
        with pytest.raises(EndpointFailed) as exc:
            EmbeddingClient(tls, "m", sleep=clock.sleep, clock=clock).embed(["a"], clock.now + 600)
    line = str(exc.value)
    assert exc.value.kind == "misconfigured" and clock.slept == [] and "\n" not in line
    assert "TLS handshake" in line and "plain http" in line


def test_a_key_holding_a_line_break_fails_at_once_and_sends_nothing():
    clock = Clock()
    with fake_embeddings() as fake:
        with pytest.raises(EndpointFailed) as exc:
            EmbeddingClient(
                fake.url, "m", api_key=f"{KEY}\r\nX-Injected: 1", sleep=clock.sleep, clock=clock
            ).embed(["a"], clock.now + 600)
        assert fake.requests == []
    assert exc.value.kind == "misconfigured" and clock.slept == []
    assert "line break" in str(exc.value) and KEY not in str(exc.value)


def test_an_illegal_header_is_never_retried(monkeypatch):
    """Past the key's own check (a header value httpx refuses for any other reason): the
    request cannot be sent, so it is not sent again until the deadline."""
    clock = Clock()
    with fake_embeddings() as fake:
        bad = EmbeddingClient(fake.url, "m", sleep=clock.sleep, clock=clock)
        bad._http.headers["X-Bad"] = "a\r\nb"
        with pytest.raises(EndpointFailed) as exc:
            bad.embed(["a"], clock.now + 600)
        assert fake.requests == []
    assert (
        exc.value.kind == "misconfigured"
        and clock.slept == []
        and "cannot be asked" in str(exc.value)
    )


@functools.cache
def gzip_bomb(mib: int) -> bytes:
    """`mib` MiB of zeros, gzipped (about 1 KB a MiB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    return b"".join([*(packer.compress(zeros) for _ in range(mib)), packer.flush()])


def test_a_gzip_bomb_is_cut_where_its_output_passes_the_cap():
    """Issue 31 §8: the decoded size is capped as the raw size is. httpx inflates each piece
    whole before it is counted (a 64 KiB piece of this bomb is 64 MB); here it is inflated
    only up to what the cap still allows."""
    bomb = gzip_bomb(256)
    with fake_embeddings() as fake:
        fake.script = [(200, {"Content-Encoding": "gzip"}, bomb)]
        tracemalloc.start()
        try:
            with pytest.raises(EndpointFailed) as exc:
                client(fake).embed(["a"], 10**9)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert exc.value.kind == "wrong-shape" and "more than 196,608 bytes" in str(exc.value)
    assert peak < 8 << 20, peak


def test_a_gzipped_answer_within_the_cap_is_read():
    with fake_embeddings() as fake:
        status, headers, body = fake.answer({"input": ["a", "b"]})
        fake.script = [(status, {**headers, "Content-Encoding": "gzip"}, gzip.compress(body))]
        got = client(fake).embed(["a", "b"], 10**9)
        assert np.allclose(got[1], fake.vector("b"))
        fake.script = [(status, {**headers, "Content-Encoding": "br"}, body)]
        with pytest.raises(EndpointFailed, match="an encoding this tool does not read"):
            client(fake).embed(["a", "b"], 10**9)
        assert fake.requests[0]["headers"]["Accept-Encoding"] == "gzip, deflate"


# ---------------------------------------------------------------- the ranker


def run_ckpt():
    """A small hand-built run: root with two children, a react step, an entry without ts."""
    ckpt = build_tree([0, 0], [4, 3, 3], react=1, seed=3)
    untimed = make_entry(len(ckpt.entries), "node_root", "no time kept", ts=None)
    ckpt.entries = [*ckpt.entries, untimed]
    ckpt.reindex()
    return ckpt


def ranker_over(
    ckpt, fake, tmp_path: Path, model: str = "fake-model", cache: str = "cache", **kwargs
) -> RunModelRanker:
    """The run ranker through `fake` serving `model`, built now, its cache in tmp_path/cache."""
    plan = plan_endpoint(EmbedOptions(url=fake.url, model=model), None, env={})
    options = EmbedOptions(checkpoint_hash="0123456789ab")
    cache_dir = tmp_path / cache
    return make_run_ranker(ckpt, options, plan, cache_dir=cache_dir, background=False, **kwargs)


def cosine_order(fake, texts: list[str], query: str, keep: list[bool]) -> list[int]:
    """pgvector's order, computed here from the fake's vectors in float64: distance ascending."""
    q = np.array(fake.vector(query))
    rows = np.array([fake.vector(t) for t in texts])
    distance = 1 - rows @ q / np.sqrt((rows * rows).sum(1) * (q @ q))
    return [i for i in np.argsort(distance, kind="stable") if keep[i]]


def test_the_ranker_embeds_each_passage_s_letta_text_and_orders_by_cosine_distance(tmp_path):
    ckpt = run_ckpt()
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
        assert ranker.ready and ranker.usable and ranker.error is None
        texts = [passage_text(e, "0123456789ab") for e in ckpt.entries]
        sent = fake.texts()
        assert set(texts) <= set(sent)  # every passage as Letta holds it, footer included
        assert all(SEPARATOR in t and '"ari_checkpoint": "0123456789ab"' in t for t in texts)
        queries = set(sent) - set(texts)
        assert "direction 1" in queries and "root direction" in queries  # start-up queries
        ranking = ranker.rank("kernel cache tile", top_k=5)
        want = cosine_order(fake, texts, "kernel cache tile", [True] * len(texts))[:5]
        assert [ckpt.entries.index(e) for e in ranking.window] == want
        assert ranking.used == "run:fake-model" and ranking.pool_size == len(texts)
        # every entry has a global rank, in the same order
        ranks = ranking.global_ranks([e.id for e in ckpt.entries])
        assert sorted(range(len(texts)), key=lambda i: ranks[i])[:5] == want


def test_as_of_keeps_what_was_there_before_the_search(tmp_path):
    """The pool as of a search is what was stamped strictly before it (ARI stamps the read
    event once the search returned), in Letta's microseconds; an entry without ts is not in
    it (a restore stamps it with the restore's time)."""
    ckpt = run_ckpt()
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
        cut = ckpt.entries[5].ts  # entry 5's own moment: not before it
        ranking = ranker.rank("kernel", top_k=100, before_ts=cut)
        kept = [e.ts is not None and e.ts < cut for e in ckpt.entries]
        texts = [passage_text(e, "0123456789ab") for e in ckpt.entries]
        assert [ckpt.entries.index(e) for e in ranking.window] == cosine_order(
            fake, texts, "kernel", kept
        )
        assert ranking.pool_size == sum(kept) == 5  # the entry without ts is not in it
        assert ranker.rank("kernel", top_k=100).pool_size == len(ckpt.entries)
    # microseconds, rounded as datetime.fromtimestamp rounds (what a restore and a search send)
    pool = LettaAsOfPool(
        [make_entry(0, "n", "t", ts=10.0000004), make_entry(1, "n", "u", ts=10.0000006)]
    )
    assert micros(10.0000004) == 10_000_000 and micros(None) > micros(4e9)
    assert pool.size_before(10.0) == 0 and pool.size_before(10.000001) == 1
    assert list(pool.kept(slice(None), 10.000001)) == [True, False]  # (u rounds to 10.000001)


def test_a_blank_query_finds_nothing_as_letta_s_search_does(tmp_path):
    ckpt = run_ckpt()
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
        before = len(fake.requests)
        ranking = ranker.rank("   ", top_k=5)
        assert ranking.window == [] and "blank query" in ranking.note
        assert len(fake.requests) == before  # not even embedded


def test_a_text_longer_than_letta_inserts_is_never_sent_said_and_ranked_last(tmp_path):
    """GIVEN an entry longer than MAX_SEND_CHARS (Letta refuses to insert it) THEN its text
    is not sent, the ranking's note says how many were left out, and it ranks last."""
    ckpt = run_ckpt()
    huge = make_entry(len(ckpt.entries), "node_root", "kernel " * (MAX_SEND_CHARS // 7 + 1))
    ckpt.entries = [*ckpt.entries, huge]
    ckpt.reindex()
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
        assert not any(t.startswith("kernel kernel") for t in fake.texts())
        ranking = ranker.rank("kernel", top_k=len(ckpt.entries))
        assert ranking.window[-1].id == huge.id
        assert ranking.window[0].id != huge.id
        note = f"not sent: 1 text longer than {MAX_SEND_CHARS:,} characters"
        assert note in ranking.note


def test_equal_distances_keep_pool_order_and_a_zero_vector_ranks_last(tmp_path):
    ckpt = build_tree([0], [3, 0])
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
        rows = ranker._rows
        rows[:] = 0.0
        rows[0, 0] = 1.0  # cosine 1
        rows[2, 0] = 1.0  # the same
        ranker._norms = np.einsum("ij,ij->i", rows, rows, dtype=np.float64)  # row 1: zero
        vec = np.zeros(rows.shape[1], np.float32)
        vec[0] = 2.0
        ranker._vectors["q"] = vec
        ranking = ranker.rank("q", top_k=3)
        assert [e.id for e in ranking.window] == ["e00000", "e00002", "e00001"]
        assert "near-tie" in ranking.note  # said: Postgres does not promise this order


def test_vectors_are_cached_by_endpoint_model_dimension_and_text(tmp_path):
    ckpt = run_ckpt()
    with fake_embeddings() as fake, fake_embeddings() as other_host:
        ranker_over(ckpt, fake, tmp_path)
        first = len(fake.requests)
        assert first >= 1
        again = ranker_over(ckpt, fake, tmp_path)  # the same endpoint and model: nothing sent
        assert len(fake.requests) == first and again.usable
        assert endpoint_dims(tmp_path / "cache", fake.url, "fake-model") == [fake.dim]
        folder = endpoint_folder(fake.url, "fake-model", fake.dim)
        assert (tmp_path / "cache" / "vectors" / folder).is_dir()
        assert "127.0.0.1" not in folder and str(fake.dim) in folder
        # another URL, same model name: its own vectors, asked for
        ranker_over(ckpt, other_host, tmp_path)
        assert len(other_host.requests) == first
        # another model: asked again
        ranker_over(ckpt, fake, tmp_path, model="other-model")
        assert len(fake.requests) > first


def test_the_endpoint_s_identity_leaves_out_credentials_query_and_spelling():
    base = endpoint_folder("http://127.0.0.1:8080/v1", "m", 8)
    for same in (
        "http://user:secret@127.0.0.1:8080/v1/",
        "HTTP://127.0.0.1:8080/v1?key=sk-123#x",
    ):
        assert endpoint_folder(same, "m", 8) == base
    for other in ("http://127.0.0.1:8081/v1", "https://127.0.0.1:8080/v1", "http://h:8080/v1"):
        assert endpoint_folder(other, "m", 8) != base
    assert endpoint_folder("https://api.openai.com:443/v1", "m", 8) == endpoint_folder(
        "https://api.openai.com/v1", "m", 8
    )


QUERY = "kernel cache tile"


def window_of(ranker, query: str = QUERY) -> list[str]:
    return [e.id for e in ranker.rank(query, top_k=5).window]


def test_a_poisoned_cache_of_the_same_model_name_is_not_used(tmp_path):
    """Issue 29 §3: another endpoint serving the same model name filled the cache with its
    vectors; this endpoint's ranking is its own (asked for), never the other's labelled as
    the run's."""
    ckpt = run_ckpt()
    texts = [passage_text(e, "0123456789ab") for e in ckpt.entries]
    with fake_embeddings(salt="poison") as poisoner, fake_embeddings() as fake:
        theirs = window_of(ranker_over(ckpt, poisoner, tmp_path))
        ranker = ranker_over(ckpt, fake, tmp_path)
        assert fake.requests  # not answered from the other endpoint's vectors
        want = cosine_order(fake, texts, QUERY, [True] * len(texts))[:5]
        assert window_of(ranker) == [ckpt.entries[i].id for i in want]
        assert window_of(ranker) != theirs  # (the poison would have shown)
        assert ranker.rank(QUERY, top_k=5).used == "run:fake-model"


def reversed_index(data: list[dict]) -> list[dict]:
    count = len(data)
    return [{**item, "index": count - 1 - i} for i, item in enumerate(data)]


def test_an_answer_with_reversed_index_fields_is_refused_in_one_line():
    with fake_embeddings(mangle=reversed_index) as fake:
        with pytest.raises(EndpointFailed) as exc:
            client(fake).embed(["a", "b", "c"], 10**9)
        assert len(fake.requests) == 1  # not retried: an endpoint that misorders may again
    line = str(exc.value)
    assert exc.value.kind == "wrong-shape" and "\n" not in line
    assert "index fields are not 0…2 in order: a misbehaving endpoint" in line
    unnumbered = lambda data: [{**d, "index": None} for d in data]
    with fake_embeddings(mangle=unnumbered) as fake, pytest.raises(EndpointFailed, match="index"):
        client(fake).embed(["a", "b"], 10**9)


def test_reversed_index_fields_leave_the_ranking_to_a_labelled_stand_in(tmp_path):
    """Mapped by position, each vector would sit on another text: a wrong ranking labelled
    the run's. Refused, the stand-in answers, labelled as one, with the endpoint's line."""
    ckpt = run_ckpt()
    with fake_embeddings(mangle=reversed_index) as fake:
        plan = plan_endpoint(EmbedOptions(url=fake.url, model="fake-model"), None, env={})
        bm25 = BM25Ranker(Pool(ckpt.entries), tmp_path / "c")
        ranker = RunModelRanker(
            LettaAsOfPool(ckpt.entries), [passage_text(e, "0123456789ab") for e in ckpt.entries],
            plan, deadline=60, cache_dir=tmp_path / "c", background=False,
            stand_in=lambda: bm25, client=EmbeddingClient(fake.url, "fake-model"),
        )  # fmt: skip
    assert "a misbehaving endpoint" in ranker.error
    ranking = ranker.rank(QUERY, top_k=5)
    assert ranking.used == "bm25" and "misbehaving endpoint" in ranking.note
    assert not list((tmp_path / "c" / "vectors").rglob("seg-*"))  # nothing of it cached


def test_endpoint_segments_are_checksummed_and_a_damaged_one_is_rebuilt_and_said_once(tmp_path):
    """The endpoint's vectors go through the same wary cache as MiniLM's (vector_cache.py,
    checkpoint/cachefile.py): segments named by their checksum; a flipped byte is a miss."""
    ckpt = run_ckpt()
    cachefile.take_notes()
    with fake_embeddings() as fake:
        first = ranker_over(ckpt, fake, tmp_path).rank("kernel cache tile", top_k=5)
        asked = len(fake.requests)
        folder = tmp_path / "cache" / "vectors" / endpoint_folder(fake.url, "fake-model", fake.dim)
        segments = sorted(folder.glob("seg-*.vec"))
        assert segments
        for seg in segments:
            body = cachefile.unseal(seg.read_bytes(), "vectors/1")
            assert seg.name == f"seg-{cachefile.checksum(body)}.vec"
        data = bytearray(segments[0].read_bytes())
        data[len(data) // 2] ^= 0xFF
        segments[0].write_bytes(bytes(data))
        rebuilt = ranker_over(ckpt, fake, tmp_path)
        assert len(fake.requests) > asked  # the damaged segment's vectors were asked for again
        assert [e.id for e in rebuilt.rank("kernel cache tile", top_k=5).window] == [
            e.id for e in first.window
        ]
    notes = cachefile.take_notes()
    assert len([n for n in notes if "checksum does not match" in n]) == 1, notes
    assert "rebuilt" in notes[0] and segments[0].with_name(segments[0].name + ".corrupt").exists()


def test_an_endpoint_cache_inside_the_checkpoint_is_neither_read_nor_written(tmp_path):
    ckpt = build_tree([0, 0], [4, 3, 3], seed=3, path=tmp_path / "run")
    (tmp_path / "run").mkdir()
    cachefile.take_notes()
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path, cache="run/cache")
        assert ranker.usable and ranker.rank("kernel", top_k=3).used == "run:fake-model"
    assert list((tmp_path / "run").iterdir()) == []  # nothing written into the run
    assert any("inside the checkpoint" in note for note in cachefile.take_notes())


def test_progress_counts_the_texts_sent(tmp_path):
    ckpt = build_tree([0], [70, 0])
    seen: list[tuple[int, int]] = []
    with fake_embeddings() as fake:
        ranker_over(ckpt, fake, tmp_path, progress=lambda d, t: seen.append((d, t)))
    total = 70 + 2  # the passages and the two nodes' start-up queries
    assert seen == [(64, total), (total, total)]


def test_a_failing_endpoint_is_one_line_and_the_local_ranker_answers_labelled(tmp_path):
    ckpt = run_ckpt()
    with fake_embeddings(dim=8) as fake:
        plan = plan_endpoint(EmbedOptions(url=fake.url, model="m"), None, env={})
        bm25 = BM25Ranker(Pool(ckpt.entries), tmp_path / "c")
        ranker = RunModelRanker(
            LettaAsOfPool(ckpt.entries),
            [e.text for e in ckpt.entries],
            plan,
            deadline=60,
            cache_dir=tmp_path / "c",
            background=False,
            stand_in=lambda: bm25,
            client=EmbeddingClient(fake.url, "m", dim=16),  # expected 16, the fake answers 8
        )
    assert ranker.ready and ranker.error and "\n" not in ranker.error
    ranking = ranker.rank("kernel", top_k=5)
    assert ranking.used == "bm25" and ranking.note.startswith(ranker.error)


def test_a_setup_that_names_no_endpoint_answers_with_the_stand_in(tmp_path):
    ckpt = run_ckpt()
    ranker = RunModelRanker(
        LettaAsOfPool(ckpt.entries),
        [],
        None,
        deadline=1,
        error="no handle",
        stand_in=lambda: BM25Ranker(Pool(ckpt.entries), tmp_path / "c"),
    )
    assert ranker.name == "run" and "no handle" in ranker.error
    assert ranker.rank("kernel", 5).used == "bm25"


def test_the_progress_line_names_the_endpoint_with_count_rate_and_estimate(tmp_path):
    """The run ranker keeps the one Progress shape (search/progress.py); the CLI's line names
    the endpoint, not MiniLM, while it is the run's vectors that are made."""
    from ari_mem_tui.cli.commands import _progress_words
    from ari_mem_tui.render.progress import progress_line
    from ari_mem_tui.search.progress import Progress

    ckpt = build_tree([0], [70, 0])
    with fake_embeddings() as fake:
        ranker = ranker_over(ckpt, fake, tmp_path)
    assert (ranker.progress.done, ranker.progress.total) == (72, 72) == (ranker.done, ranker.total)
    words = _progress_words(ranker)
    what = f"embedding memory texts through fake-model at {fake.url}"
    assert words["what"] == what
    now = [0.0]
    progress = Progress(clock=lambda: now[0])
    assert progress_line(progress, **words).startswith(f"{what}: reading the vector cache … 0 s")
    progress.update(0, 200)
    now[0] = 1.0
    progress.update(20)
    now[0] = 3.0
    progress.update(60)
    assert progress_line(progress, **words) == f"{what}: 60 of 200 texts (30%), 20 texts/s, ETA 7 s"
    assert progress_line(Progress()).startswith("loading MiniLM")  # the default's own
