"""Reading memory, core blocks and rankings from a Letta server: against tests/fake_letta.py.

The real `letta_client` SDK (strict response validation) talks HTTP to an in-process FAKE server
built from real 0.16.7 responses; the live suite (test_letta_live.py) repeats the contract
against a real server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_letta import FakeLetta, HtmlServer, fixture, free_port
from letta_helpers import as_original_server, letta_args

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.cli import main
from ari_mem_tui.letta.api import LettaConnection
from ari_mem_tui.letta.errors import LettaUnavailable
from ari_mem_tui.letta.footer import SEPARATOR, agent_name, node_footer, react_footer
from ari_mem_tui.letta.source import (
    LettaRanker,
    open_letta_run,
    pool_size_before,
    read_letta_memory,
)
from ari_mem_tui.model import MemoryEntry, StringTable
from ari_mem_tui.model.columns import entries_of
from ari_mem_tui.search.replay import replay

HASH = "0123456789ab"


@pytest.fixture
def fake() -> FakeLetta:
    with FakeLetta() as server:
        yield server


def conn_for(url: str, **kw) -> LettaConnection:
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_retries", 0)
    return LettaConnection(url, **kw)


def add_node_entries(fake: FakeLetta, agent_id: str, n: int, node_id: str = "n1") -> None:
    for i in range(n):
        footer = node_footer(HASH, node_id, {"i": i}, 1_700_000_000.0 + i)
        fake.add_ari_passage(agent_id, f"entry {i}", footer)


# ---- reading ------------------------------------------------------------------------------


def test_reads_every_passage_page_by_page(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    add_node_entries(fake, agent, 7)
    progress: list[tuple[int, int]] = []
    memory = read_letta_memory(
        conn_for(fake.url), agent, page_size=3, progress=lambda d, t: progress.append((d, t))
    )
    assert [e.text for e in memory.entries] == [f"entry {i}" for i in range(7)]
    assert [e.metadata for e in memory.entries] == [{"i": i} for i in range(7)]
    assert all(e.source == "letta" and e.ari_checkpoint == HASH for e in memory.entries)
    assert [e.ts for e in memory.entries] == [1_700_000_000.0 + i for i in range(7)]
    listed = [q for m, path, q in fake.requests if path.endswith("/archival-memory")]
    assert len(listed) == 4  # 3 + 3 + 1, then the empty page that ends it
    assert "after" not in listed[0] and all("after" in q for q in listed[1:])
    assert progress == [(3, 6), (6, 9), (7, 7)]
    assert not memory.capped and memory.problems == []
    # letta_id is the passage id; ids are the loader's content ids (stable across sources)
    assert {e.letta_id for e in memory.entries} == {p["id"] for p in fake.passages[agent]}


def test_hard_cap_stops_the_listing_and_says_so(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    add_node_entries(fake, agent, 7)
    memory = read_letta_memory(conn_for(fake.url), agent, page_size=2, max_rows=5)
    assert len(memory.entries) == 5 and memory.capped
    assert any("first 5 passages" in p.what for p in memory.problems)


def test_react_entries_and_bad_footers(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    add_node_entries(fake, agent, 1)
    react = {
        "collection": f"ari_react_{HASH}",
        "ari_checkpoint": HASH,
        "kind": "react_step",
        "node_id": "n1",
        "step": 4,
        "ari_metadata": {"node_id": "n1", "step": 4},
        "ts": 1_700_000_100.0,
    }
    fake.add_ari_passage(agent, "a react step", react)
    fake.add_passage(agent, "written by someone else")
    fake.add_passage(agent, "broken" + SEPARATOR + '{"kind": "node_scope", ')
    memory = read_letta_memory(conn_for(fake.url), agent)
    by_text = {e.text: e for e in memory.entries}
    assert [e.kind for e in memory.entries] == [
        "node_scope",
        "react_step",
        "react_step",
        "react_step",
    ]
    step = by_text["a react step"]
    assert (step.node_id, step.step, step.metadata["step"]) == ("n1", 4, 4)
    broken = by_text["broken" + SEPARATOR + '{"kind": "node_scope", ']
    assert broken.metadata == {} and broken.ari_checkpoint == "" and broken.node_id == ""
    assert by_text["written by someone else"].metadata == {}
    assert len(memory.problems) == 2
    assert all(p.file == f"letta:{fake.url}" and "passage-" in p.where for p in memory.problems)


def test_non_ascii_and_control_characters_survive(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    text = "結果 \x00\x07\x1b[31mred\x1b[0m \u2028 [bold]not markup[/bold] α/β"
    meta = {"note": "日本語\ttab", "nested": {"k": ["\x1b]0;title\x07"]}}
    fake.add_ari_passage(agent, text, node_footer(HASH, "n1", meta, 1.5))
    (entry,) = read_letta_memory(conn_for(fake.url), agent).entries
    assert entry.text == text and entry.metadata == meta


def test_core_blocks_decoded_missing_and_broken(fake: FakeLetta) -> None:
    context = {"experiment_goal": "速く", "primary_metric": "GFlops_per_s"}
    agent = fake.add_agent(
        "ari_agent_" + HASH,
        blocks={"persona": "p", "human": "", "ari_context": json.dumps(context)},
    )
    memory = read_letta_memory(conn_for(fake.url), agent)
    assert memory.core.ari_context == context and memory.core.persona == "p"
    assert memory.core.source == "letta" and memory.core.seeded
    # 404 block: ARI reads a missing block as empty
    del fake.blocks[agent]["ari_context"]
    memory = read_letta_memory(conn_for(fake.url), agent)
    assert memory.core.ari_context == {} and not memory.core.seeded
    assert any(p.where == "block ari_context" for p in memory.problems)
    fake.set_block(agent, "ari_context", "{not json")
    memory = read_letta_memory(conn_for(fake.url), agent)
    assert memory.core.ari_context == {}
    assert any("not JSON" in p.why for p in memory.problems)


# ---- opening a run against an "original" server ------------------------------------------


@pytest.fixture
def original(fake: FakeLetta, small_ckpt: Path) -> tuple[FakeLetta, str]:
    return fake, as_original_server(fake, small_ckpt)


def test_open_replaces_memory_and_keeps_the_files(original, small_ckpt: Path) -> None:
    fake, _agent = original
    files = load_checkpoint(small_ckpt)
    ckpt = load_checkpoint(small_ckpt)
    calls: list[tuple[int, int]] = []  # the TUI hands its status-bar callback
    progress = lambda done, total: calls.append((done, total))
    run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt), progress=progress)
    assert run.checkpoint is ckpt
    assert calls[-1] == (len(ckpt.entries), len(ckpt.entries)) and len(calls) > 1
    assert run.source_label == f"letta: {fake.url} agent ari_agent_{checkpoint_hash(small_ckpt)}"
    assert all(e.source == "letta" for e in ckpt.entries)
    # the same entries (same content ids), now from the server, with the server's ids
    assert sorted(e.id for e in ckpt.entries) == sorted(e.id for e in files.entries)
    assert ckpt.core.source == "letta" and ckpt.core.ari_context == files.core.ari_context
    assert ckpt.nodes.keys() == files.nodes.keys()
    assert len(ckpt.access_events) == len(files.access_events)
    assert ckpt.checkpoint_hash == checkpoint_hash(small_ckpt)
    writes = [e for e in ckpt.access_events if e.op == "write" and e.entry_id]
    assert writes and all(ckpt.entries_by_id[e.joined_entry].letta_id == e.entry_id for e in writes)


def test_a_restored_server_keeps_the_joins_the_files_gave(fake: FakeLetta, small_ckpt) -> None:
    """A restored agent's passages have new ids, listed in another order: each write event
    the file loader joined to an entry by content stays joined to the same entry (content id)."""
    files = load_checkpoint(small_ckpt)
    ckpt_hash = checkpoint_hash(small_ckpt)
    agent = fake.add_agent(agent_name(ckpt_hash))
    for entry in reversed(list(files.entries)):
        if entry.kind == "node_scope":
            footer = node_footer(ckpt_hash, entry.node_id, entry.metadata, entry.ts)
        else:
            footer = react_footer(ckpt_hash, entry.metadata, entry.ts)
        fake.add_ari_passage(agent, entry.text, footer)  # (a new passage id)
    ckpt = load_checkpoint(small_ckpt)
    before = [event.joined_entry for event in ckpt.access_events]
    open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
    assert sum(joined is not None for joined in before) > 100
    assert [event.joined_entry for event in ckpt.access_events] == before
    for event in ckpt.access_events:
        if event.joined_entry is not None:
            entry = ckpt.entries_by_id[event.joined_entry]
            assert entry.letta_id != event.entry_id and entry.source == "letta"
            assert entry.text.startswith(event.text_preview or "")
    # the recorded hits' passage ids still name the server's entries, through their content
    assert any("logged passage ids" in p.what for p in ckpt.problems)
    assert ckpt.entries_by_letta_id[
        next(e.entry_id for e in files.access_events if e.op == "write")
    ]


def test_recorded_hits_resolve_on_the_original_server(original, small_ckpt: Path) -> None:
    fake, _ = original
    ckpt = load_checkpoint(small_ckpt)
    run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
    recorded = [
        replay(ckpt, nid, run.ranker, with_tiers=False).recorded
        for nid, node in ckpt.nodes.items()
        if node.ancestor_ids
    ]
    hits = [h for r in recorded if r is not None for h in r.hits]
    assert hits, "the demo records start-up searches"
    assert all(h.text for h in hits)  # every recorded passage id joined to a server entry


def raw_window(fake: FakeLetta, agent: str, query: str, top_k: int) -> list[dict]:
    """The server's answer, decoded here independently of the code under test."""
    _, status, body = fake.route(
        "GET",
        f"/v1/agents/{agent}/archival-memory/search",
        {"query": [query], "top_k": [str(top_k)]},
        None,
    )
    assert status == 200
    rows = []
    for row in body["results"]:
        text, _, footer = row["content"].rpartition(SEPARATOR)
        rows.append({"id": row["id"], "text": text, **json.loads(footer)})
    return rows


def test_node_search_is_ari_post_filter_over_the_server_window(original, small_ckpt: Path) -> None:
    fake, agent = original
    ckpt = load_checkpoint(small_ckpt)
    run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
    assert isinstance(run.ranker, LettaRanker) and run.ranker.name == f"letta:{fake.url}"
    checked = 0
    for nid, node in ckpt.nodes.items():
        if not node.ancestor_ids:
            continue
        result = replay(ckpt, nid, run.ranker, limit=5, with_tiers=False, as_of=False)  # today
        search = [q for m, p, q in fake.requests if p.endswith("/archival-memory/search")][-1]
        assert search["top_k"] == ["200"] and "end_datetime" not in search
        window = raw_window(fake, agent, result.query, 200)
        expected = [
            (pos, row["id"])
            for pos, row in enumerate(window)
            if row["node_id"] in node.ancestor_ids and row["kind"] == "node_scope"
        ][:5]
        got = [(h.global_rank, ckpt.entries_by_id[h.entry_id].letta_id) for h in result.hits]
        assert got == expected
        assert [h.score for h in result.hits] == pytest.approx(
            [max(0.0, 1 - 0.01 * h.global_rank) for h in result.hits]
        )
        assert result.embedder == f"letta:{fake.url}"
        checked += 1
    assert checked >= 5


def test_as_of_replay_passes_end_datetime(original, small_ckpt: Path) -> None:
    fake, _ = original
    ckpt = load_checkpoint(small_ckpt)
    run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
    nid = next(n for n, node in ckpt.nodes.items() if len(node.ancestor_ids) >= 2)
    result = replay(ckpt, nid, run.ranker, with_tiers=False)  # as of its start: the default
    assert result.as_of is not None
    search = [q for m, p, q in fake.requests if p.endswith("/archival-memory/search")][-1]
    from datetime import datetime

    assert datetime.fromisoformat(search["end_datetime"][0]).timestamp() == pytest.approx(
        result.as_of
    )
    assert all(ckpt.entries_by_id[h.entry_id].ts < result.as_of for h in result.hits)


def test_global_rank_beyond_the_window_is_unknown(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    add_node_entries(fake, agent, 6)
    ckpt = load_checkpoint(Path("/nonexistent-ari-mem-tui-test"))
    ckpt.entries = read_letta_memory(conn_for(fake.url), agent).entries
    ckpt.reindex()
    ranking = LettaRanker(conn_for(fake.url), agent, ckpt).rank("entry 4", top_k=3)
    assert ranking.window[0].text == "entry 4" and len(ranking.window) == 3
    assert ranking.pool_size == 6
    as_of = LettaRanker(conn_for(fake.url), agent, ckpt).rank("entry 4", 3, 1_700_000_003.0)
    assert as_of.pool_size == 3  # entries 0, 1, 2 were written before
    outside = [e for e in ckpt.entries if e not in ranking.window]
    assert all(ranking.global_rank(e.id) is None for e in outside)
    assert [ranking.global_rank(e.id) for e in ranking.window] == [0, 1, 2]


def test_pool_size_as_of_counts_entries_of_no_time() -> None:
    stamps = [5.0, None, 1.0, 9.0, None]
    records = [
        MemoryEntry(id=f"e{i}", kind="node_scope", node_id="n", text=f"t{i}", ts=ts, source="x")
        for i, ts in enumerate(stamps)
    ]
    entries = entries_of(records, StringTable())
    for before in (None, 0.0, 1.0, 5.0, 9.5):
        kept = [ts for ts in stamps if before is None or ts is None or ts < before]
        assert pool_size_before(entries, before) == len(kept)


def test_checkpoint_hash_override_for_a_copied_checkpoint(fake: FakeLetta, small_ckpt) -> None:
    as_original_server(fake, small_ckpt, ckpt_hash="aaaaaaaaaaaa")
    with pytest.raises(LettaUnavailable) as exc:
        open_letta_run(load_checkpoint(small_ckpt), letta_args(fake.url, small_ckpt))
    assert "ari_agent_aaaaaaaaaaaa" in str(exc.value)  # the agents that do exist are listed
    assert "\n" not in str(exc.value)
    for options in ({"checkpoint_hash": "aaaaaaaaaaaa"}, {"letta_agent": "ari_agent_aaaaaaaaaaaa"}):
        ckpt = load_checkpoint(small_ckpt)
        run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt, **options))
        assert ckpt.checkpoint_hash == "aaaaaaaaaaaa"
        nid = next(n for n, node in ckpt.nodes.items() if len(node.ancestor_ids) >= 2)
        assert replay(ckpt, nid, run.ranker, with_tiers=False).hits


def test_a_hash_no_footer_carries_is_reported(fake: FakeLetta, small_ckpt) -> None:
    agent = as_original_server(fake, small_ckpt, ckpt_hash="bbbbbbbbbbbb")
    ckpt = load_checkpoint(small_ckpt)
    options = {"letta_agent": agent, "checkpoint_hash": "cccccccccccc"}  # agent by id
    open_letta_run(ckpt, letta_args(fake.url, small_ckpt, **options))
    assert any("--checkpoint-hash bbbbbbbbbbbb" in p.why for p in ckpt.problems)


def test_bad_checkpoint_hash_option_is_refused(fake: FakeLetta, small_ckpt) -> None:
    with pytest.raises(LettaUnavailable, match="12 hex"):
        open_letta_run(
            load_checkpoint(small_ckpt), letta_args(fake.url, small_ckpt, checkpoint_hash="xyz")
        )


# ---- error paths: each one line, one exception type ---------------------------------------


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message and message
    return message


def test_agent_not_found_by_id_lists_ari_agents(fake: FakeLetta) -> None:
    fake.add_agent("ari_agent_" + HASH)
    fake.add_agent("someone_else")
    with pytest.raises(LettaUnavailable) as exc:
        conn_for(fake.url).find_agent("agent-00000000-0000-4000-8000-000000000000")
    message = one_line(exc)
    assert f"ARI agents there: ari_agent_{HASH}" in message and "someone_else" not in message


def test_422_becomes_a_one_line_message(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    fake.fail["passages.list"] = (422, fixture("error_422_bad_id")["body"])
    with pytest.raises(LettaUnavailable) as exc:
        read_letta_memory(conn_for(fake.url), agent)
    assert "HTTP 422" in one_line(exc) and "string_pattern_mismatch" in str(exc.value)


def test_500_on_search_names_the_embedding_endpoint(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    fake.fail["passages.search"] = (500, {"detail": "embedding request failed"})
    with pytest.raises(LettaUnavailable) as exc:
        conn_for(fake.url).search(agent, "q", 200)
    assert "HTTP 500" in one_line(exc) and "embedding endpoint" in str(exc.value)


def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(LettaUnavailable) as exc:
        conn_for(url).health()
    assert one_line(exc).startswith(f"cannot reach a Letta server at {url}")
    assert "connection refused" in str(exc.value)


def test_slow_server_times_out(fake: FakeLetta) -> None:
    agent = fake.add_agent("ari_agent_" + HASH)
    fake.delay = 1.0
    with pytest.raises(LettaUnavailable) as exc:
        conn_for(fake.url, timeout=0.2).health()
    assert "did not answer within 0.2 s" in one_line(exc)
    with pytest.raises(LettaUnavailable) as exc:  # a slow search: its embedding endpoint?
        conn_for(fake.url, timeout=0.2).search(agent, "q", 200)
    assert "did not answer" in one_line(exc) and "embedding endpoint" in str(exc.value)


@pytest.mark.parametrize("status", [200, 404])
def test_a_server_that_is_not_letta(status: int) -> None:
    with HtmlServer(status) as web, pytest.raises(LettaUnavailable) as exc:
        conn_for(web.url).health()
    message = one_line(exc)
    assert web.url in message and "Letta server" in message and "--letta-url" in message


def test_a_server_answering_broken_json() -> None:
    with (
        HtmlServer(200, b"{not json", "application/json") as web,
        pytest.raises(LettaUnavailable) as exc,
    ):
        conn_for(web.url).health()
    assert "invalid JSON" in one_line(exc) and web.url in str(exc.value)


def test_api_key_refused_and_never_shown() -> None:
    with FakeLetta(api_key="right-key") as fake:
        with pytest.raises(LettaUnavailable) as exc:
            conn_for(fake.url, api_key="wrong-key-123").health()
        assert "refused the API key (HTTP 401" in one_line(exc)
        assert "wrong-key-123" not in str(exc.value)
        assert conn_for(fake.url, api_key="right-key").health() == "0.16.7"


def test_a_server_going_away_raises_the_typed_error(original, small_ckpt: Path) -> None:
    fake, _ = original
    ckpt = load_checkpoint(small_ckpt)
    run = open_letta_run(ckpt, letta_args(fake.url, small_ckpt))
    count = len(ckpt.entries)
    fake.stop()
    nid = next(n for n, node in ckpt.nodes.items() if node.ancestor_ids)
    with pytest.raises(LettaUnavailable):
        replay(ckpt, nid, run.ranker, with_tiers=False)
    assert len(ckpt.entries) == count  # what was read stays usable


def test_cli_prints_one_line_and_exits_2(small_ckpt: Path, capsys) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code = main(["saw", str(small_ckpt), "root", "--json", "--letta-url", url])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "cannot reach a Letta server" in err


def test_cli_search_failure_after_open_is_one_line(original, small_ckpt: Path, capsys) -> None:
    fake, _ = original
    fake.fail["passages.search"] = (500, {"detail": "embedding down"})
    ckpt = load_checkpoint(small_ckpt)
    nid = next(n for n, node in ckpt.nodes.items() if node.ancestor_ids)
    code = main(["saw", str(small_ckpt), nid, "--json", "--letta-url", fake.url])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "embedding endpoint" in err


@pytest.mark.parametrize("command", ["audit", "summary"])
def test_audit_and_summary_read_the_server_or_say_in_one_line_why_not(
    command: str, original, small_ckpt: Path, capsys
) -> None:
    """`--letta-url` is never ignored: the memory counted or audited is the server's."""
    fake, agent_id = original
    extra = "a passage only the server holds"
    fake.add_ari_passage(agent_id, extra, node_footer(checkpoint_hash(small_ckpt), "root", {}, 1.0))
    files = load_checkpoint(small_ckpt)
    code = main([command, str(small_ckpt), "--json", "--letta-url", fake.url])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    assert data["memory_source"].startswith(f"letta: {fake.url} agent ari_agent_")
    if command == "summary":
        assert data["counts"]["entries"] == len(files.entries) + 1  # the server's pool
    code = main([command, str(small_ckpt), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["memory_source"] == f"files: {small_ckpt}"
    if command == "summary":
        assert data["counts"]["entries"] == len(files.entries)
    url = f"http://127.0.0.1:{free_port()}"
    code = main([command, str(small_ckpt), "--letta-url", url])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach a Letta server" in err
