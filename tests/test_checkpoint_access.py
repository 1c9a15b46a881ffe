"""Access log (§4): files, sorting, summary, the write join (§4.6) and reader attribution (§4.5)."""

from __future__ import annotations

import json

import msgspec
from checkpoint_helpers import (
    T0,
    chain_tree,
    iso,
    node,
    read_event,
    scope,
    write_access,
    write_backup,
    write_event,
    write_tree,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ari_mem_tui.checkpoint.access_log import parse_access_line
from ari_mem_tui.checkpoint.load import load_checkpoint


def test_files_are_merged_and_sorted_by_ts(tmp_path):
    write_tree(tmp_path, chain_tree())
    write_access(
        tmp_path, [read_event(T0 + 30, "", "q3", ["root"]), read_event(T0 + 10, "", "q1", ["root"])]
    )
    write_access(
        tmp_path,
        [read_event(T0 + 20, "", "q2", ["root"]), read_event(T0 + 10, "", "q0", ["root"])],
        name="memory_access.1780000000.jsonl",
    )
    ckpt = load_checkpoint(tmp_path)
    assert [e.query for e in ckpt.access_events] == ["q0", "q1", "q2", "q3"]  # stable on ties
    assert ckpt.access_events[0].source == "memory_access.1780000000.jsonl"
    assert ckpt.access_events[1].source_line == 2


def test_bucketed_traces_dir_is_read(tmp_path):
    ckpt_dir = tmp_path / "ws" / "checkpoints" / "20260101000000_run"
    write_tree(ckpt_dir, chain_tree(), run_id="20260101000000_run")
    traces = tmp_path / "ws" / "runs" / "20260101000000_run" / "traces"
    write_access(traces, [read_event(T0, "", "from traces", ["root"])])
    (traces / "memory_access.summary.json").write_text(json.dumps({"a": {"writes": 2, "reads": 3}}))
    ckpt = load_checkpoint(ckpt_dir)
    assert [e.query for e in ckpt.access_events] == ["from traces"]
    assert ckpt.access_events[0].source.endswith("traces/memory_access.jsonl")
    assert ckpt.access_summary == {"a": {"writes": 2, "reads": 3}}


def test_summary_counts_and_bad_values(tmp_path):
    write_tree(tmp_path, chain_tree())
    (tmp_path / "memory_access.summary.json").write_text(
        json.dumps({"a": {"writes": 1, "reads": 4}, "b": {"writes": "x"}, "c": 5})
    )
    ckpt = load_checkpoint(tmp_path)
    assert ckpt.access_summary["a"] == {"writes": 1, "reads": 4}
    assert ckpt.access_summary["b"] == {"writes": 0, "reads": 0}
    assert len([p for p in ckpt.problems if p.file == "memory_access.summary.json"]) == 2


def test_bad_lines_are_problems(tmp_path):
    write_tree(tmp_path, chain_tree())
    lines = [
        read_event(T0, "", "ok", ["root"]),
        "nope",
        "[]",
        {"ts": "abc", "op": "read"},
        {"ts": T0, "op": "delete"},
        read_event(T0, "", "odd", "root") | {"results": [1, {}]},
    ]
    path = write_access(tmp_path, lines)
    path.write_bytes(path.read_bytes() + b'{"ts": 1, "op": "read", "query": "\xff"}\n')
    ckpt = load_checkpoint(tmp_path)
    assert [e.query for e in ckpt.access_events] == ["ok", "odd"]
    assert ckpt.access_events[1].ancestor_ids is None and ckpt.access_events[1].results == [{}]
    whys = {p.where: p.why for p in ckpt.problems}
    assert "not JSON" in whys["line 2"] and "not an object" in whys["line 3"]
    assert "not a number" in whys["line 4"] and "unknown op" in whys["line 5"]
    assert "ancestor_ids is a str" in whys["line 6"] and "invalid UTF-8" in whys["line 7"]


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_access_line_parser_never_raises_on_text(text):
    parsed = parse_access_line(text)
    assert parsed.fields is None or parsed.error is None


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "ts",
                "op",
                "node_id",
                "collection",
                "entry_id",
                "text_preview",
                "metadata",
                "query",
                "ancestor_ids",
                "limit",
                "results",
                "reader",
                "extra",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=5)
        | st.lists(st.none() | st.text(max_size=3) | st.integers(), max_size=3)
        | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
)
def test_access_line_parser_output_builds_events(obj):
    from ari_mem_tui.checkpoint.access_log import _add_fields, _add_line, _typed_line
    from ari_mem_tui.model import AccessEvent, StringTable
    from ari_mem_tui.model.columns import EventBuilder

    obj.setdefault("op", "read")
    obj.setdefault("ts", 1.0)
    line = json.dumps(obj)
    parsed = parse_access_line(line)
    lenient = EventBuilder(StringTable())
    if parsed.fields is not None:
        _add_fields(lenient, parsed, "f", 1)
        # the fields really are valid: msgspec re-checks every one against the type
        event = lenient.finish()[0].as_record()
        msgspec.convert(msgspec.to_builtins(event), AccessEvent)
    try:
        typed = _typed_line(line.encode())
    except msgspec.DecodeError:  # (ValidationError is one)
        return  # the lenient reader's line
    # the C fast path gives exactly the event the lenient reader gives, or leaves the line to it
    assert parsed.fields is not None and not parsed.notes and not parsed.extra
    fast = EventBuilder(StringTable())
    _add_line(fast, typed, "f", 1)
    assert fast.finish()[0].as_record() == lenient.finish()[0].as_record()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["ts", "op", "node_id", "entry_id", "metadata", "results", "limit"]),
            st.none()
            | st.integers()
            | st.floats()
            | st.text(max_size=4)
            | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
            | st.lists(st.dictionaries(st.sampled_from(["entry_id", "score"]), st.none()
                                       | st.floats() | st.text(max_size=3)), max_size=2),
        ),
        min_size=1,
        max_size=6,
    )
)  # fmt: skip
def test_a_batch_of_lines_gives_the_events_line_by_line_or_is_left_to_it(objs):
    """The batch path takes a batch only when every line would take the per-line fast path,
    and then gives the same events, numbered the same."""
    from ari_mem_tui.checkpoint.access_log import _add_line, _typed_line, _typed_lines
    from ari_mem_tui.model import StringTable
    from ari_mem_tui.model.columns import EventBuilder

    for obj in objs:
        obj.setdefault("op", "write")
        obj.setdefault("ts", 2.5)
    lines = [json.dumps(obj).encode() for obj in objs]
    one_by_one = EventBuilder(StringTable())
    try:
        for number, line in enumerate(lines, start=7):
            _add_line(one_by_one, _typed_line(line), "f", number)
    except msgspec.DecodeError:
        assert _typed_lines(lines, {}) is None
        return
    batch = EventBuilder(StringTable())
    batch.add_lines(*_typed_lines(lines, batch.result_ranges), "f", 7)
    assert batch.finish(sort=False) == one_by_one.finish(sort=False)


def test_repeated_results_share_their_rows_and_a_bad_array_is_read_line_by_line(
    tmp_path, monkeypatch
):
    """A results array met again (in a later batch too) points at the rows it was given the
    first time; a batch with an array the typed reader refuses goes line by line, naming it;
    either way the events are those the per-line reader gives."""
    from ari_mem_tui.checkpoint import access_log
    from ari_mem_tui.checkpoint.jsonlines import BATCH
    from ari_mem_tui.model import StringTable

    rows = [{"entry_id": "p1", "src_node_id": "root", "score": 0.5}, {"entry_id": "p2"}]
    lines = [
        read_event(T0 + i, "", f"q{i % 3}", ["root"], results=rows[: 1 + i % 2])
        for i in range(2 * BATCH + 5)
    ]
    lines[BATCH + 3]["results"] = [{"entry_id": "p1", "odd": 1}]  # (a key ARI does not write)
    lines[BATCH + 4]["results"] = None
    lines[BATCH + 6]["results"] = [1, rows[0]]
    path = write_access(tmp_path, lines)

    def read(patch):
        problems = []
        with monkeypatch.context() as context:
            if patch:
                context.setattr(access_log, "_typed_lines", lambda _batch, _known: None)
            events = access_log.read_access_log(tmp_path, None, problems, StringTable())
        return events, problems

    batched, problems = read(False)
    by_line, line_problems = read(True)
    assert [e.as_record() for e in batched] == [e.as_record() for e in by_line]
    assert problems == line_problems
    assert [(p.where, p.why) for p in problems] == [
        (f"line {BATCH + 7}", "dropped 1 results that are not objects")
    ]
    assert batched[BATCH + 3].results == [{"entry_id": "p1", "odd": 1}]
    assert batched[BATCH + 4].results == [] and batched[5].results == rows
    assert len(batched.rows) < len(by_line.rows)  # (the arrays met again share rows)
    assert path.read_bytes().count(b"\n") == len(batched)


# ---- the write join ----


def _join_case(tmp_path, backup, events):
    write_tree(tmp_path, chain_tree())
    write_backup(tmp_path, backup)
    write_access(tmp_path, events)
    return load_checkpoint(tmp_path)


def test_write_events_join_entries_and_resolve_ids(tmp_path):
    long_text = "RESULT SUMMARY " + "x" * 500
    ckpt = _join_case(
        tmp_path,
        [scope("a", long_text, T0 + 1, {"type": "result_summary"}), scope("a", "short", T0 + 2)],
        [
            write_event(T0 + 1.3, "a", "passage-1", long_text, {"type": "result_summary"}),
            write_event(T0 + 2.1, "a", "passage-2", "short"),
        ],
    )
    first, second = ckpt.entries
    assert (first.letta_id, second.letta_id) == ("passage-1", "passage-2")
    assert ckpt.entries_by_letta_id["passage-1"].row == first.row
    assert [e.joined_entry for e in ckpt.access_events] == [first.id, second.id]
    assert ckpt.problems == []


def test_join_requires_metadata_and_time_window(tmp_path):
    ckpt = _join_case(
        tmp_path,
        [scope("a", "same text", T0, {"type": "finding"})],
        [
            write_event(T0 + 0.5, "a", "p-meta", "same text", {"type": "other"}),
            write_event(T0 + 10, "a", "p-late", "same text", {"type": "finding"}),
            write_event(T0 - 1, "a", "p-early", "same text", {"type": "finding"}),
        ],
    )
    backup_entry = ckpt.entries[0]
    assert backup_entry.letta_id is None
    orphans = [e for e in ckpt.entries if e.partial]
    assert {e.letta_id for e in orphans} == {"p-meta", "p-late", "p-early"}
    assert all(e.source == "memory_access.jsonl" for e in orphans)
    [info] = [p for p in ckpt.problems if "no memory record" in p.what]
    assert info.severity == "info" and "3 write events" in info.what


def test_duplicates_are_assigned_one_to_one_in_time_order(tmp_path):
    ckpt = _join_case(
        tmp_path,
        [scope("a", "dup", T0), scope("a", "dup", T0 + 1)],
        [write_event(T0 + 0.2, "a", "p1", "dup"), write_event(T0 + 1.2, "a", "p2", "dup")],
    )
    assert [e.letta_id for e in ckpt.entries] == ["p1", "p2"]
    assert ckpt.entries[0].id != ckpt.entries[1].id


def test_nearest_entry_wins(tmp_path):
    ckpt = _join_case(
        tmp_path,
        [scope("a", "dup", T0), scope("a", "dup", T0 + 1.5)],
        [write_event(T0 + 1.6, "a", "p-near", "dup")],
    )
    assert [e.letta_id for e in ckpt.entries] == [None, "p-near"]


def test_react_writes_join_by_metadata_owner(tmp_path):
    from checkpoint_helpers import react

    meta = {"type": "evaluation_criteria", "node_id": "root"}
    ckpt = _join_case(
        tmp_path,
        [react("EVAL", T0, meta)],
        [write_event(T0 + 0.1, "", "r1", "EVAL", meta, collection="react_step")],
    )
    assert ckpt.entries[0].letta_id == "r1" and ckpt.entries[0].node_id == "root"


def test_events_without_backup_become_partial_entries(tmp_path):
    write_tree(tmp_path, chain_tree())
    write_access(tmp_path, [write_event(T0, "b", "p9", "y" * 300, {"step": 4, "tool": "x"})])
    ckpt = load_checkpoint(tmp_path)
    [entry] = ckpt.entries
    assert entry.partial and entry.text == "y" * 200 and entry.step == 4
    assert entry.node_id == "b" and entry.letta_id == "p9"
    assert ckpt.entries_by_node["b"] == [entry]


# ---- reader attribution ----


def _tree_with_siblings():
    return [
        node("root", created=T0),
        node("a", "root", ["root"], created=T0 + 100),
        node("s1", "a", ["root", "a"], created=T0 + 200, original_direction="try tiling"),
        node("s2", "a", ["root", "a"], created=T0 + 201, original_direction="try blocking"),
    ]


def _hows(ckpt):
    return [(e.query, e.reader, e.reader_how, e.node_id) for e in ckpt.access_events]


def test_startup_search_and_inherit_burst_are_attributed(tmp_path):
    write_tree(tmp_path, _tree_with_siblings())
    write_access(
        tmp_path,
        [
            read_event(T0 + 300, "a", "inherit:get_node_memory", ["root"], limit=3),
            read_event(T0 + 300.1, "a", "inherit:get_node_memory", ["a"], limit=2),
            read_event(T0 + 300.2, "a", "try blocking", ["root", "a"]),
            read_event(T0 + 301, "a", "inherit:get_node_memory", ["root"], limit=3),
            read_event(T0 + 301.1, "a", "inherit:get_node_memory", ["a"], limit=2),
            read_event(T0 + 301.2, "a", "try tiling", ["root", "a"]),
            read_event(T0 + 302, "a", "try tiling", ["root", "a"], limit=10),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    assert _hows(ckpt) == [
        ("inherit:get_node_memory", "s2", "inherit-burst", "a"),
        ("inherit:get_node_memory", "s2", "inherit-burst", "a"),
        ("try blocking", "s2", "startup-search", "a"),
        ("inherit:get_node_memory", "s1", "inherit-burst", "a"),
        ("inherit:get_node_memory", "s1", "inherit-burst", "a"),
        ("try tiling", "s1", "startup-search", "a"),
        ("try tiling", None, "unattributed", "a"),  # limit 10: not a start-up search
    ]


def test_same_query_siblings_are_split_by_creation_time(tmp_path):
    nodes = _tree_with_siblings()
    nodes[3]["original_direction"] = "try tiling"
    nodes[3]["created_at"] = iso(T0 + 400)
    write_tree(tmp_path, nodes)
    write_access(
        tmp_path,
        [
            read_event(T0 + 250, "", "try tiling", ["root", "a"]),
            read_event(T0 + 450, "", "try tiling", ["root", "a"]),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    assert [e.reader for e in ckpt.access_events] == ["s1", "s2"]


def test_query_falls_back_to_eval_summary_and_goal(tmp_path):
    nodes = _tree_with_siblings()
    nodes[2]["original_direction"] = None
    nodes[2]["eval_summary"] = "E" * 300
    nodes[3]["original_direction"] = ""
    nodes[3]["eval_summary"] = None
    write_tree(tmp_path, nodes)
    (tmp_path / "experiment.md").write_text("G" * 2000)
    write_access(
        tmp_path,
        [
            read_event(T0 + 300, "", "E" * 200, ["root", "a"]),
            read_event(T0 + 301, "", "G" * 200, ["root", "a"]),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    assert [e.reader for e in ckpt.access_events] == ["s1", "s2"]


def test_trace_log_pipeline_bfts_and_logged_reads(tmp_path):
    nodes = _tree_with_siblings()
    nodes[2]["trace_log"] = [
        '→ search_memory({"query": "tile size", "ancestor_ids": ["root", "a"], "limit": 3})',
        "  ← {'result': '{\"results\": []}'}",
        '→ get_node_memory({"node_id": "root"})',
        "  ← {'result': '{\"entries\": []}'}",
    ]
    write_tree(tmp_path, nodes)
    end = T0 + 261  # s2 completes at created + 60
    write_access(
        tmp_path,
        [
            read_event(T0 + 220, "a", "tile size", ["root", "a"], limit=3),
            read_event(T0 + 230, "a", "inherit:get_node_memory", ["root"], limit=1),
            read_event(T0 + 231, "a", "inherit:get_node_memory", ["root"], limit=1),
            read_event(end + 100, "", "inherit:get_node_memory", ["s1"], limit=4),
            read_event(T0 + 240, "", "goal", None, collection="react_step"),
            read_event(T0 + 250, "", "inherit:get_node_memory", ["a"], limit=1),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    assert [(e.reader, e.reader_how) for e in ckpt.access_events] == [
        ("s1", "trace_log"),
        ("s1", "trace_log"),
        (None, "unattributed"),  # the one trace call was taken; "a" only wrote last
        ("bfts-select", "bfts-select"),
        (None, "unattributed"),  # node_id "" before BFTS ended
        ("pipeline", "pipeline"),
    ]
    assert ckpt.trace_calls["s1"][0].args == {
        "query": "tile size",
        "ancestor_ids": ["root", "a"],
        "limit": 3,
    }


def test_trace_calls_of_nodes_not_yet_created_are_not_used(tmp_path):
    nodes = _tree_with_siblings()
    nodes[3]["trace_log"] = ['→ get_node_memory({"node_id": "root"})', "  ← {'result': '{}'}"]
    write_tree(tmp_path, nodes)
    write_access(
        tmp_path,
        [
            read_event(T0 + 150, "a", "inherit:get_node_memory", ["root"], limit=1),  # before s2
            read_event(T0 + 210, "a", "inherit:get_node_memory", ["root"], limit=1),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    assert [(e.reader, e.reader_how) for e in ckpt.access_events] == [
        (None, "unattributed"),
        ("s2", "trace_log"),
    ]
