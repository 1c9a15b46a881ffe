"""memory_backup.jsonl.gz and the fallback memory sources (§3, §11.2)."""

from __future__ import annotations

import gzip
import json

import msgspec
from checkpoint_helpers import (
    T0,
    backup_bytes,
    chain_tree,
    core_seed,
    iso,
    node,
    react,
    scope,
    write_backup,
    write_tree,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ari_mem_tui.checkpoint.backup import parse_backup_line
from ari_mem_tui.checkpoint.entry_ids import content_id
from ari_mem_tui.checkpoint.load import load_checkpoint

RECORDS = [
    scope("root", "RESULT SUMMARY node=root", T0 + 10, {"type": "result_summary"}),
    scope("a", "Tool run_code: {}", T0 + 120, {"step": 1, "tool": "run_code"}),
    scope("a", "日本語のテキスト", T0 + 130),
    react("EVALUATION_CRITERIA: primary_metric=x", T0 + 5, {"node_id": "root", "step": 3}),
    core_seed({"primary_metric": "GFlops", "higher_is_better": True}),
]


def loaded(tmp_path, lines=RECORDS, raw=None):
    write_tree(tmp_path, chain_tree())
    write_backup(tmp_path, lines, raw)
    return load_checkpoint(tmp_path)


def test_records_become_entries_and_core(tmp_path):
    ckpt = loaded(tmp_path)
    assert [e.kind for e in ckpt.entries] == ["node_scope"] * 3 + ["react_step"]
    first = ckpt.entries[0]
    assert (first.node_id, first.ts, first.source, first.source_line) == (
        "root",
        T0 + 10,
        "memory_backup.jsonl.gz",
        1,
    )
    assert ckpt.entries[2].text == "日本語のテキスト"
    react_entry = ckpt.entries[3]
    assert (react_entry.node_id, react_entry.step) == ("root", 3)
    assert ckpt.core.ari_context["primary_metric"] == "GFlops"
    assert ckpt.core.source == "memory_backup.jsonl.gz" and not ckpt.core.approximate
    assert [e.id for e in ckpt.entries_by_node["a"]] == [ckpt.entries[1].id, ckpt.entries[2].id]
    assert ckpt.problems == []


def test_entry_ids_are_stable_and_position_independent(tmp_path):
    one = loaded(tmp_path / "one")
    two = loaded(tmp_path / "two", list(reversed(RECORDS)))
    assert {e.id for e in one.entries} == {e.id for e in two.entries}
    assert one.entries[0].id == content_id("node_scope", "root", T0 + 10, RECORDS[0]["text"])
    assert [e.id for e in load_checkpoint(tmp_path / "one").entries] == [e.id for e in one.entries]


def test_exact_duplicates_get_suffixes_in_file_order(tmp_path):
    dup = scope("a", "same", T0)
    ckpt = loaded(tmp_path, [dup, dup, dup])
    base = content_id("node_scope", "a", T0, "same")
    assert [e.id for e in ckpt.entries] == [base, base + "-2", base + "-3"]
    assert [e.source_line for e in ckpt.entries] == [1, 2, 3]


def test_truncated_gzip_keeps_what_decoded(tmp_path):
    many = [scope("a", f"entry {i} " + "x" * 200, T0 + i) for i in range(2000)]
    data = gzip.compress(backup_bytes(many))
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(data[: len(data) // 2])
    ckpt = load_checkpoint(tmp_path)
    assert 100 < len(ckpt.entries) < 2000
    assert [e.text.split()[1] for e in ckpt.entries] == [str(i) for i in range(len(ckpt.entries))]
    [stop] = [p for p in ckpt.problems if "truncated gzip" in p.why]
    assert stop.file == "memory_backup.jsonl.gz" and stop.severity == "error"
    assert stop.where.startswith(f"line {len(ckpt.entries) + 1}")
    assert "byte" in stop.where


def test_corrupt_gzip_crc_is_reported(tmp_path):
    data = bytearray(gzip.compress(backup_bytes(RECORDS[:3])))
    data[-8] ^= 0xFF  # break the CRC32 in the trailer
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(bytes(data))
    ckpt = load_checkpoint(tmp_path)
    assert len(ckpt.entries) == 3  # all data decoded before the trailer check
    assert any("corrupt gzip" in p.why for p in ckpt.problems)


def test_corrupt_deflate_data_is_reported(tmp_path):
    many = [scope("a", f"entry {i} " + str(i * 7919) * 30, T0 + i) for i in range(3000)]
    data = bytearray(gzip.compress(backup_bytes(many)))
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(bytes(data))
    ckpt = load_checkpoint(tmp_path)
    assert 0 < len(ckpt.entries) < 3000
    assert any(p.severity == "error" and p.file == "memory_backup.jsonl.gz" for p in ckpt.problems)


def test_multi_member_gzip_is_read_whole(tmp_path):
    raw = gzip.compress(backup_bytes(RECORDS[:2])) + gzip.compress(backup_bytes(RECORDS[2:3]))
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(raw)
    ckpt = load_checkpoint(tmp_path)
    assert len(ckpt.entries) == 3 and ckpt.problems == []


def test_plain_jsonl_named_gz_is_read_with_a_problem(tmp_path):
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_backup.jsonl.gz").write_bytes(backup_bytes(RECORDS[:2]))
    ckpt = load_checkpoint(tmp_path)
    assert len(ckpt.entries) == 2
    assert any("not a gzip file" in p.why for p in ckpt.problems)


def test_bad_lines_are_skipped_and_reported(tmp_path):
    raw = (
        b"\n".join(
            [
                json.dumps(RECORDS[0]).encode(),
                b"{not json",
                b"[1, 2]",
                b'{"kind": "mystery", "text": "?"}',
                b'{"kind": "node_scope", "node_id": "a", "text": "caf\xff"}',
                b"",
                json.dumps(scope("a", "ts is odd", 0) | {"ts": "abc", "metadata": [1]}).encode(),
                json.dumps({"kind": "node_scope", "text": "no owner"}).encode(),
                json.dumps(RECORDS[1]).encode(),
            ]
        )
        + b"\n"
    )
    ckpt = loaded(tmp_path, raw=raw)
    assert [e.text for e in ckpt.entries] == [RECORDS[0]["text"], "ts is odd", RECORDS[1]["text"]]
    odd = ckpt.entries[1]
    assert odd.ts is None and odd.metadata == {}
    wheres = {p.where: p.why for p in ckpt.problems}
    assert "not JSON" in wheres["line 2"]
    assert "not an object" in wheres["line 3"]
    assert "unknown record kind 'mystery'" in wheres["line 4"]
    assert "invalid UTF-8" in wheres["line 5"]
    assert "not a number" in wheres["line 7"]
    assert "without a string node_id" in wheres["line 8"]


def test_many_bad_lines_are_capped(tmp_path):
    raw = b"\n".join([b"garbage"] * 500 + [json.dumps(RECORDS[0]).encode()])
    ckpt = loaded(tmp_path, raw=raw)
    assert len(ckpt.entries) == 1
    assert len(ckpt.problems) == 51
    assert "450 more problems" in ckpt.problems[-1].what


def test_stale_backup_warns(tmp_path):
    nodes = chain_tree()
    nodes[3]["completed_at"] = iso(T0 + 50_000)
    write_tree(tmp_path, nodes)
    write_backup(tmp_path, RECORDS[:3])
    ckpt = load_checkpoint(tmp_path)
    [warning] = [p for p in ckpt.problems if "predate" in p.what]
    assert warning.severity == "info" and "1 completed nodes" in warning.what


def test_nodes_tree_memory_fallback_is_partial(tmp_path):
    nodes = chain_tree()
    nodes[1]["memory"] = [{"text": "t1…[truncated]", "metadata": {"type": "finding"}, "ts": T0}]
    nodes[2]["memory"] = "bad"
    write_tree(tmp_path, nodes, name="nodes_tree.json", experiment_goal="g")
    ckpt = load_checkpoint(tmp_path)
    [entry] = ckpt.entries
    assert (entry.node_id, entry.partial, entry.source) == ("a", True, "nodes_tree.json")
    assert "memory" not in (ckpt.nodes["a"].extra_fields or {})
    assert any("not a list" in p.why for p in ckpt.problems)


def test_nodes_tree_memory_used_when_tree_json_is_the_tree(tmp_path):
    write_tree(tmp_path, chain_tree())
    nodes = chain_tree()
    nodes[0]["memory"] = [{"text": "from pipeline", "metadata": {}, "ts": T0}]
    write_tree(tmp_path, nodes, name="nodes_tree.json")
    ckpt = load_checkpoint(tmp_path)
    assert [e.text for e in ckpt.entries] == ["from pipeline"]


def test_backup_wins_over_fallbacks(tmp_path):
    nodes = chain_tree()
    nodes[0]["memory"] = [{"text": "from pipeline", "metadata": {}, "ts": T0}]
    write_tree(tmp_path, nodes, name="nodes_tree.json")
    write_backup(tmp_path, RECORDS[:1])
    assert [e.text for e in load_checkpoint(tmp_path).entries] == [RECORDS[0]["text"]]


def test_legacy_stores(tmp_path):
    write_tree(tmp_path, chain_tree())
    store = [{"node_id": "a", "text": "old note", "metadata": {}, "ts": T0}, "junk"]
    (tmp_path / "memory_store.jsonl.migrated-123").write_bytes(backup_bytes(store))
    (tmp_path / "memory_store.jsonl").write_bytes(backup_bytes(store[:1]))  # duplicate line
    react_items = [
        {
            "content": "react old",
            "metadata": {"node_id": "a", "step": 2},
            "ts": "2026-01-01T00:00:00+00:00",
        },
        7,
    ]
    (tmp_path / "memory.json").write_text(json.dumps(react_items))
    ckpt = load_checkpoint(tmp_path)
    texts = [(e.kind, e.text, e.source) for e in ckpt.entries]
    assert texts == [
        ("node_scope", "old note", "memory_store.jsonl.migrated-123"),
        ("react_step", "react old", "memory.json"),
    ]
    assert ckpt.entries[1].ts == 1767225600.0 and ckpt.entries[1].step == 2
    assert {p.file for p in ckpt.problems} == {"memory_store.jsonl.migrated-123", "memory.json"}


def test_core_is_approximated_without_a_seed(tmp_path):
    write_tree(tmp_path, [node("root")])
    (tmp_path / "experiment.md").write_text("Make SpMV fast")
    idea = {
        "ideas": [{"title": "CSR tiling", "description": "d" * 500}],
        "primary_metric": "GFlops",
        "metric_rationale": "throughput",
    }
    (tmp_path / "idea.json").write_text(json.dumps(idea))
    (tmp_path / "evaluation_criteria.json").write_text(
        json.dumps({"primary_metric": "other", "higher_is_better": False})
    )
    ckpt = load_checkpoint(tmp_path)
    core = ckpt.core
    assert core.approximate
    assert core.source == "idea.json + evaluation_criteria.json + experiment.md"
    assert core.ari_context == {
        "experiment_goal": "Make SpMV fast",
        "primary_metric": "GFlops",
        "higher_is_better": False,
        "metric_rationale": "throughput",
        "selected_idea": "CSR tiling: " + "d" * 400,
    }
    assert "hardware_spec" not in core.ari_context


def test_no_core_sources_means_empty_core(tmp_path):
    write_tree(tmp_path, [node("root")])
    ckpt = load_checkpoint(tmp_path)
    assert not ckpt.core.seeded and ckpt.core.source == ""


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_backup_line_parser_never_raises_on_text(text):
    parsed = parse_backup_line(text)
    assert parsed.record is None or parsed.error is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            ["kind", "node_id", "text", "metadata", "ts", "context", "persona", "content"]
        ),
        json_values,
    ),
    st.sampled_from(["node_scope", "react_step", "core_seed", None]),
)
def test_backup_line_parser_never_raises_on_json(obj, kind):
    if kind:
        obj["kind"] = kind
    parsed = parse_backup_line(json.dumps(obj))
    if parsed.record and parsed.record["kind"] != "core_seed":
        assert isinstance(parsed.record["text"], str)
        assert isinstance(parsed.record["metadata"], dict)
        assert parsed.record["ts"] is None or isinstance(parsed.record["ts"], float)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["node_id", "text", "metadata", "ts", "content", "other"]),
        json_values
        | st.dictionaries(st.sampled_from(["node_id", "step", "tool"]), json_values, max_size=3),
    ),
    st.sampled_from(["node_scope", "react_step", None]),
)
def test_the_fast_reader_gives_the_lenient_readers_record_or_leaves_the_line(obj, kind):
    from ari_mem_tui.checkpoint.backup import _typed_record

    if kind:
        obj["kind"] = kind
    line = json.dumps(obj)
    parsed = parse_backup_line(line)
    try:
        typed = _typed_record(line.encode())
    except msgspec.DecodeError:  # (ValidationError is one): the lenient reader's line
        return
    assert parsed.record is not None and not parsed.notes
    assert dict(typed) == parsed.record


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"kind": st.sampled_from(["node_scope", "react_step"]), "text": st.text(max_size=5)},
            optional={
                "node_id": st.sampled_from(["", "n1", "n2"]) | st.none(),
                "ts": st.floats() | st.integers(),
                "metadata": st.dictionaries(
                    st.sampled_from(["node_id", "step", "tool"]), json_values, max_size=3
                ),
            },
        ),
        min_size=1,
        max_size=6,
    )
)
def test_a_batch_of_records_gives_the_rows_line_by_line_or_is_left_to_it(objs):
    """The batch path takes a batch only when every line would take the per-line fast path,
    and then gives the same rows, numbered the same."""
    from ari_mem_tui.checkpoint.backup import _typed_record, _typed_records
    from ari_mem_tui.model import StringTable
    from ari_mem_tui.model.columns import EntryBuilder

    lines = [json.dumps(obj).encode() for obj in objs]
    one_by_one = EntryBuilder(StringTable())
    try:
        for number, line in enumerate(lines, start=3):
            kind, node_id, text, meta, ts, step = _typed_record(line)
            one_by_one.add(kind, node_id, text, meta, ts, "b", number, step)
    except msgspec.DecodeError:
        assert _typed_records(lines) is None
        return
    kinds, owners, texts, metas, stamps, steps = _typed_records(lines)
    batch = EntryBuilder(StringTable())
    batch.add_rows(kinds, owners, texts, metas, stamps, "b", 3, steps)
    assert batch.finish() == one_by_one.finish()


def test_a_well_formed_record_takes_the_fast_path():
    from ari_mem_tui.checkpoint.backup import _typed_record

    line = b'{"kind": "react_step", "text": "t", "ts": 1, "metadata": {"node_id": "n", "step": 2}}'
    assert (
        _typed_record(line).as_record()
        == parse_backup_line(line).record
        == {
            "kind": "react_step",
            "node_id": "n",
            "text": "t",
            "metadata": {"node_id": "n", "step": 2},
            "ts": 1.0,
            "step": 2,
        }
    )
