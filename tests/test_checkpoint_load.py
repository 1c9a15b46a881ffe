"""The loader as a whole: read-only, the demo loads cleanly, and the `summary` command."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from checkpoint_helpers import (
    COW,
    T0,
    chain_tree,
    dir_fingerprint,
    full_checkpoint,
    node,
    scope,
    write_backup,
    write_tree,
)

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main


def test_loading_writes_nothing(tmp_path):
    ckpt_dir = full_checkpoint(tmp_path / "ckpt")
    before = dir_fingerprint(tmp_path)
    ckpt = load_checkpoint(ckpt_dir)
    assert len(ckpt.nodes) == 4 and ckpt.entries  # it did read the files
    assert dir_fingerprint(tmp_path) == before


def test_demo_loads_without_problems_and_writes_nothing(demo_ckpt):
    before = dir_fingerprint(demo_ckpt)
    ckpt = load_checkpoint(demo_ckpt)
    assert dir_fingerprint(demo_ckpt) == before
    assert [p.line() for p in ckpt.problems] == []
    assert len(ckpt.nodes) == 40 and len(ckpt.roots) == 1
    assert ckpt.core.seeded and not ckpt.core.approximate
    writes = [e for e in ckpt.access_events if e.op == "write"]
    assert writes and all(e.joined_entry in ckpt.entries_by_id for e in writes)
    assert not any(e.partial for e in ckpt.entries)  # every logged write has its backup record
    reads = [e for e in ckpt.access_events if e.op == "read"]
    assert {"startup-search", "inherit-burst"} <= {e.reader_how for e in reads}
    assert any(not w.accepted for w in ckpt.writes)
    starters = {e.reader for e in reads if e.reader_how == "startup-search"}
    assert starters <= set(ckpt.nodes)


def test_demo_startup_searches_match_their_readers(demo_ckpt):
    ckpt = load_checkpoint(demo_ckpt)
    for event in ckpt.access_events:
        if event.reader_how == "startup-search":
            assert event.ancestor_ids == ckpt.nodes[event.reader].ancestor_ids


def test_summary_prints_counts_and_escapes_markup(tmp_path, capsys):
    write_tree(tmp_path, chain_tree() + [node("[red]evil\x1b[2J", "ghost")])
    assert main(["summary", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "nodes" in out and "5 (2 roots)" in out
    assert "[red]evil" in out  # shown literally, not eaten as markup
    assert "\x1b[2J" not in out


def test_summary_json(tmp_path, capsys):
    full_checkpoint(tmp_path)
    assert main(["summary", "--json", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tree_source"] == "tree.json"
    assert data["counts"]["nodes"] == 4 and data["counts"]["write_events"] == 1
    assert data["counts"]["entries"] == 1 and data["counts"]["reads"] == 2
    assert len(data["checkpoint_hash"]) == 12
    assert isinstance(data["problems"], list)


def test_summary_exit_2_when_unreadable(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "missing")]) == 2
    assert "loaded nothing (no such folder)" in capsys.readouterr().out
    assert main(["summary", "--json", str(tmp_path)]) == 2  # exists, but no tree
    data = json.loads(capsys.readouterr().out)
    assert data["tree_source"] is None and data["counts"]["nodes"] == 0


def test_backup_without_tree_still_loads_memory(tmp_path):
    write_backup(tmp_path, [scope("a", "x", T0)])
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.tree_source is None and len(ckpt.entries) == 1


def test_gzip_bomb_like_backup_is_streamed(tmp_path):
    # 20 MB of one unterminated line: decompressed in bounded steps, reported as bad JSON
    write_tree(tmp_path, chain_tree())
    raw = gzip.compress(b"{" + b" " * 20_000_000)
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(raw)
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.entries == []
    assert any(p.file == "memory_backup.jsonl.gz" for p in ckpt.problems)


def test_a_50_mb_trace_log_string_loads(tmp_path):
    nodes = chain_tree()
    nodes[1]["trace_log"] = [
        '→ read_file({"path": "big.log"})',
        "  ← {'result': '" + "Z" * 50_000_000 + "'}",
        '→ add_memory({"node_id": "root", "text": "t"})',
        '  ← {\'result\': \'{"ok": false, "error": "' + COW + "\"}'}",
    ]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    big, add = ckpt.trace_calls["a"]
    assert big.result is None and len(big.result_raw) > 50_000_000
    assert add.ok is False
    assert [(w.current_node, w.target_node, w.accepted) for w in ckpt.writes] == [
        ("a", "root", False)
    ]


@pytest.mark.parametrize(
    "line",
    [
        b'{"ts": 1.5, "a": [1, {"b": null}]}',
        b'{"a": 1, "a": 2}',
        b'{"x": NaN, "y": -Infinity}',  # json reads these, msgspec does not
        b"[" + b"9" * 40 + b"]",
        b'["\\ud800 lone surrogate"]',
        b'  {"padded": true}  \n',
    ],
)
def test_json_lines_records_decode_as_json_does(line):
    from ari_mem_tui.checkpoint.jsonlines import loads_record

    got, want = loads_record(line), json.loads(line)
    assert repr(got) == repr(want)  # repr: NaN != NaN


@pytest.mark.parametrize(
    "line, why",
    [
        (b'{"a": 1} trailing', "Extra data"),
        (b"[" + b"9" * 5000 + b"]", "a number too long"),
        (b"[" * 150 + b"]" * 150, "nested too deeply"),
    ],
)
def test_json_lines_bad_records_name_json_reason(line, why):
    from ari_mem_tui.checkpoint.jsonfile import json_error
    from ari_mem_tui.checkpoint.jsonlines import loads_record

    with pytest.raises((ValueError, RecursionError)) as caught:
        loads_record(line)
    assert why in json_error(caught.value)


def test_trace_calls_are_parsed_when_first_read_and_equal_an_eager_parse(tmp_path):
    from ari_mem_tui.checkpoint.trace_log import parse_trace_log

    nodes = chain_tree()
    nodes[1]["trace_log"] = [
        '→ run_code({"code": "print(1)"})',
        "  ← {'result': '1'}",
        '→ add_memory({"node_id": "root", "text": "t"})',
        '  ← {\'result\': \'{"ok": false, "error": "' + COW + "\"}'}",
        "a free-form line",
        '→ search_memory({"query": "q", "ancestor_ids": ["root"]})',
    ]
    write_tree(tmp_path, nodes)
    ckpt = load_checkpoint(tmp_path)
    # the CoW log already has the refused write, and the count is known, before any parse
    assert [(w.current_node, w.target_node, w.accepted) for w in ckpt.writes] == [
        ("a", "root", False)
    ]
    assert ckpt.trace_call_count() == 3
    calls = ckpt.trace_calls["a"]
    assert calls == parse_trace_log("a", nodes[1]["trace_log"])
    assert [c.tool for c in calls] == ["run_code", "add_memory", "search_memory"]
    assert ckpt.trace_call_count() == 3
    ckpt.trace_calls = {}  # a plain attribute once set
    assert ckpt.trace_calls == {} and ckpt.trace_call_count() == 0


def test_the_cow_log_is_built_when_first_read_and_counted_before(tmp_path):
    nodes = chain_tree()
    nodes[1]["trace_log"] = [
        '→ add_memory({"node_id": "root", "text": "t"})',
        '  ← {\'result\': \'{"ok": false, "error": "' + COW + "\"}'}",
    ]
    write_tree(tmp_path, nodes)
    write_backup(tmp_path, [scope("a", "alpha", T0 + 10), scope("root", "r", T0 + 1)])
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.write_counts() == (2, 1)
    assert [w.current_node for w in ckpt.writes_by_node["a"]] == ["a", "a"]
    assert [(w.target_node, w.accepted) for w in ckpt.writes] == [
        ("root", True),
        ("a", True),
        ("root", False),
    ]
    assert ckpt.write_counts() == (2, 1)
    ckpt.writes = []
    ckpt.reindex()
    assert ckpt.writes_by_node == {} and ckpt.write_counts() == (0, 0)


@pytest.mark.parametrize(
    ("content", "expected", "problem"),
    [
        (
            '{\n  "letta_embedding_config": "openai/text-embedding-3-small"\n}',
            "openai/text-embedding-3-small",
            False,
        ),
        (
            '{"letta_embedding_config": "  ollama/all-minilm  ", "llm_model": "x"}',
            "ollama/all-minilm",
            False,
        ),
        ('{"llm_model": "gpt"}', None, False),
        ('{"letta_embedding_config": ["not", "a", "string"]}', None, True),  # named
        ('["a", "list"]', None, False),
        ('{"letta_embedding_config": "' + "x" * 5000 + '"}', "x" * 199 + "…", False),
        ('{"letta_embedding_config": "[red]h[/x]"', None, True),  # cut short: not JSON
    ],
)
def test_settings_json_names_the_letta_embedding_handle(
    tmp_path: Path, content: str, expected: str | None, problem: bool
) -> None:
    from ari_mem_tui.checkpoint.settings import letta_embedding_config

    (tmp_path / "settings.json").write_text(content, encoding="utf-8")
    problems: list = []
    assert letta_embedding_config(tmp_path, problems) == expected
    assert bool(problems) is problem
    assert all(p.file == "settings.json" for p in problems)


def test_settings_json_is_read_at_load_and_kept_by_the_index(tmp_path: Path, monkeypatch) -> None:
    from ari_mem_tui.checkpoint import index
    from tests.tui_helpers import write_tiny_checkpoint

    monkeypatch.setenv("ARI_MEM_TUI_INDEX", str(tmp_path / "index"))
    path = write_tiny_checkpoint(tmp_path / "tiny")
    assert load_checkpoint(path).letta_embedding_config is None
    (path / "settings.json").write_text('{"letta_embedding_config": "openai/x"}')
    fresh = load_checkpoint(path, use_index=True)  # writes the index
    reopened = index.load(path)
    assert reopened is not None
    assert fresh.letta_embedding_config == reopened.letta_embedding_config == "openai/x"
    (path / "settings.json").unlink()
    (path / "settings.json").mkdir()  # not a file: a named problem, never opened
    odd = load_checkpoint(path)
    assert odd.letta_embedding_config is None
    assert any(p.file == "settings.json" for p in odd.problems)
