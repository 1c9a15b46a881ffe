"""trace_log parsing (§2.7) and the CoW write log (§4.6)."""

from __future__ import annotations

import json
import warnings

from checkpoint_helpers import (
    COW,
    T0,
    call,
    chain_tree,
    node,
    result,
    scope,
    write_backup,
    write_cow_case,
    write_tree,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.trace_log import (
    MAX_LITERAL_CHARS,
    _envelope_text,
    decode_result,
    parse_trace_line,
    parse_trace_log,
    rejection_reason,
)


def test_calls_and_results_are_paired_and_decoded():
    lines = [
        call("search_memory", {"query": "q", "ancestor_ids": ["r"], "limit": 5}),
        result({"results": [{"entry_id": "p1", "score": 0.99}]}),
        "some other line",
        call("run_code", {"code": "print('→ not a call')"}),
        '→ add_memory({"node_id": "x", "text": "cut off',  # truncated args
        "  ← {'error': \"Tool 'add_memory' failed after 3 attempts\"}",
    ]
    calls = parse_trace_log("n", lines)
    assert [(c.tool, c.index) for c in calls] == [
        ("search_memory", 0),
        ("run_code", 3),
        ("add_memory", 4),
    ]
    assert calls[0].args["ancestor_ids"] == ["r"]
    assert calls[0].result == {"results": [{"entry_id": "p1", "score": 0.99}]}
    assert calls[1].result_raw is None and calls[1].args == {"code": "print('→ not a call')"}
    assert calls[2].args is None and calls[2].args_raw.startswith('{"node_id"')
    assert calls[2].result == {"error": "Tool 'add_memory' failed after 3 attempts"}
    assert calls[2].ok is False and rejection_reason(calls[2]) is None  # failed, not refused


def test_cow_rejections_are_found_with_reason():
    lines = [
        call("add_memory", {"node_id": "parent", "text": "sneaky"}),
        result({"ok": False, "error": COW}),
        call("clear_node_memory", {"node_id": "parent"}),
        "  ← " + str({"result": json.dumps({"removed": 0, "error": COW})}),
        call("add_memory", {"node_id": "me", "text": "fine"}),
        result({"ok": True, "id": "p7"}),
        call("add_reflection", {"node_id": "me"}),  # a typed writer is guarded too
        result({"ok": False, "error": "ARI_CURRENT_NODE_ID not set"}),
        call("add_finding_memory", {"node_id": "me"}),  # no such ARI tool: nothing guards it
        result({"ok": False, "error": "ARI_CURRENT_NODE_ID not set"}),
    ]
    calls = parse_trace_log("me", lines)
    assert [c.ok for c in calls] == [False, False, True, False, None]
    assert [rejection_reason(c) for c in calls] == [
        COW,
        COW,
        None,
        "ARI_CURRENT_NODE_ID not set",
        None,
    ]


def test_a_read_quoting_a_rejection_is_not_itself_rejected():
    # get_node_memory returns another node's memory, which may hold the auto entry of that
    # node's refused write; the read itself was never CoW-checked
    quoted = "Tool add_memory: " + json.dumps({"result": json.dumps({"ok": False, "error": COW})})
    lines = [
        call("get_node_memory", {"node_id": "parent"}),
        result({"entries": [{"text": quoted, "metadata": {"step": 3, "tool": "add_memory"}}]}),
    ]
    [read] = parse_trace_log("me", lines)
    assert read.ok is None and rejection_reason(read) is None


def test_non_literal_results_stay_raw():
    assert decode_result("<object at 0x7f>") is None
    assert decode_result("{'result': 'plain text'}") == "plain text"
    assert decode_result("[1, 2]") == [1, 2]


def test_a_50_mb_result_is_not_evaluated():
    huge = "  ← {'result': '" + "A" * 50_000_000 + "'}"
    calls = parse_trace_log("n", [call("get_node_memory", {"node_id": "r"}), huge])
    assert len(calls[0].result_raw) > MAX_LITERAL_CHARS
    assert calls[0].result is None and calls[0].ok is None


def test_long_results_of_non_memory_tools_are_decoded_on_demand():
    payload = {"stdout": "x" * 10_000}
    calls = parse_trace_log(
        "n", [call("run_code", {}), result(payload), call("search_memory", {}), result(payload)]
    )
    assert calls[0].result is None and decode_result(calls[0].result_raw) == payload
    assert calls[1].result == payload


def test_50_mb_rejection_is_still_recognised():
    huge = (
        '  ← {\'result\': \'{"ok": false, "error": "'
        + COW
        + '", "pad": "'
        + "B" * (50_000_000)
        + "\"}'}"
    )
    [found] = parse_trace_log("n", [call("add_memory", {"node_id": "p"}), huge])
    assert found.ok is False and rejection_reason(found) == COW


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_envelope_fast_path_agrees_with_literal_eval(text):
    import ast

    line = str({"result": text})
    assert _envelope_text(line) == text == ast.literal_eval(line)["result"]


def test_envelope_fast_path_refuses_what_repr_never_writes():
    assert _envelope_text("{'result': 'a' + 'b'}") is None
    with warnings.catch_warnings():  # the codec warns about the invalid escape it refuses
        warnings.simplefilter("ignore")
        assert _envelope_text("{'result': '\\q'}") is None
    assert decode_result("{'result': 'a\\x41\\u00e9'}") == "aAé"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_trace_line_parser_never_raises(text):
    for line in (text, "→ " + text, "  ← " + text, "→ add_memory(" + text):
        parsed = parse_trace_line(line)
        assert parsed.kind in ("call", "result", "other")
        decode_result(parsed.text)
    parse_trace_log("n", [text, "  ← " + text])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", " ", "\t", "\u3000", "\x1c"]),
            st.sampled_from(["→", "←", "->", ""]),
            st.sampled_from(["", " ", "  "]),
            st.text(alphabet="ab_.:-9 ()\n\t", max_size=8),
        ).map("".join)
        | st.text(max_size=12),
        max_size=6,
    )
)
def test_the_call_counting_regex_agrees_with_the_line_parser(lines):
    from ari_mem_tui.checkpoint.trace_log import _CALL_LINE

    calls = [parse_trace_line(line).kind == "call" for line in lines]
    assert [bool(_CALL_LINE.match(line)) for line in lines] == calls


def test_nodes_without_read_calls_are_counted_not_parsed(tmp_path):
    from ari_mem_tui.checkpoint.trace_log import some_trace_calls

    write_tree(
        tmp_path,
        [
            node("a", trace_log=[call("run_code", {"x": 1}), "  ← {'result': 'ok'}", "→ nop"]),
            node("b", trace_log=[call("search_memory", {"query": "q"}), "  ← {'result': '[]'}"]),
            node("c", trace_log=["plain text"]),
        ],
    )
    ckpt = load_checkpoint(tmp_path)
    needed, count = some_trace_calls(ckpt.nodes, {"search_memory"})
    assert count == 3 == ckpt.trace_call_count()
    assert needed["a"] == [] and [c.tool for c in needed["b"]] == ["search_memory"]
    assert "c" not in needed
    assert [c.tool for c in ckpt.trace_calls["a"]] == ["run_code", "nop"]


def test_a_tool_name_spelled_with_json_escapes_is_parsed_too(tmp_path):
    from ari_mem_tui.checkpoint.trace_log import some_trace_calls

    write_tree(tmp_path, [node("a", trace_log=[call("search_memory", {"query": "q"})])])
    tree = tmp_path / "tree.json"
    tree.write_text(tree.read_text().replace("→ search_memory", "→ \\u0073earch_memory"))
    ckpt = load_checkpoint(tmp_path)
    needed, count = some_trace_calls(ckpt.nodes, {"search_memory"})
    assert count == 1 and [c.tool for c in needed["a"]] == ["search_memory"]


def test_the_tree_readers_scan_gives_the_calls_a_second_decode_gives(tmp_path):
    """The calls the tree reader took while it checked the lines are those some_trace_calls
    finds decoding them again; taken once (then decoded), and not for other tools."""
    from ari_mem_tui.checkpoint import tree
    from ari_mem_tui.checkpoint.attribution import READ_TOOLS
    from ari_mem_tui.checkpoint.trace_log import scanner, some_trace_calls

    write_tree(
        tmp_path,
        [
            node("a", trace_log=[call("run_code", {"x": 1}), "  ← {'result': 'ok'}", "→ nop"]),
            node("b", trace_log=[call("search_memory", {"query": "q"}), "  ← {'result': '[]'}"]),
            node("c", trace_log=["plain text"]),
            node("d", trace_log=[call("add_memory", {"text": "t"}), f"  ← {COW}"]),
        ],
    )

    def calls(scan, tools=READ_TOOLS):
        nodes = tree.load_tree(tmp_path, [], scan).nodes
        assert all((n._trace.scanned is not None) == bool(scan) for n in nodes.values())
        found, count = some_trace_calls(nodes, tools)
        return {k: [c.as_data() for c in v] for k, v in found.items()}, count, nodes

    plain, count, _ = calls(None)
    scanned, scanned_count, nodes = calls(scanner(READ_TOOLS))
    assert (scanned, scanned_count) == (plain, count) and plain["b"] and plain["d"]
    assert all(node.take_trace_scan() is None for node in nodes.values())  # (taken)
    again, again_count = some_trace_calls(nodes, READ_TOOLS)
    assert ({k: [c.as_data() for c in v] for k, v in again.items()}, again_count) == (
        plain,
        count,
    )
    other = calls(scanner({"run_code"}), READ_TOOLS)
    assert other[:2] == (plain, count)


# ---- the CoW log ----


def _cow_case(tmp_path):
    return load_checkpoint(write_cow_case(tmp_path))


def test_cow_log_rows(tmp_path):
    ckpt = _cow_case(tmp_path)
    rows = [
        (w.current_node, w.target_node, w.tool, w.accepted, w.source, w.ts, w.step)
        for w in ckpt.writes
    ]
    assert rows == [
        ("a", "a", "add_memory", True, "access_log+backup", T0 + 150.2, None),
        ("b", "b", "add_memory", True, "access_log+backup", T0 + 210.1, 3),
        ("b", "a", "add_memory", False, "trace_log", T0 + 210.1, 3),
        ("b", "b", "add_memory", True, "access_log+backup", T0 + 220.1, None),
        ("b", "b", "add_memory", True, "backup", T0 + 225, 5),
        ("b", "b", "add_memory", True, "access_log", T0 + 400, None),
        ("b", "root", "clear_node_memory", False, "trace_log", None, None),  # after b's rows
    ]
    rejected = ckpt.writes[2]
    assert rejected.reason == COW and rejected.text == "overwrite parent"
    assert rejected.metadata == {"k": 1}
    assert ckpt.writes[3].letta_id == "p2"
    assert ckpt.writes[3].entry_id == ckpt.entries_by_letta_id["p2"].id
    assert [w.target_node for w in ckpt.writes_by_node["b"]] == ["b", "a", "b", "b", "b", "root"]
    assert [w.target_node for w in ckpt.writes_by_node["a"]] == ["a"]


def test_auto_entry_without_trace_line_is_a_rejected_row(tmp_path):
    write_tree(tmp_path, chain_tree())
    auto_text = "Tool add_memory: " + json.dumps(
        {"result": json.dumps({"ok": False, "error": COW})}
    )
    write_backup(tmp_path, [scope("b", auto_text, T0 + 5, {"step": 2, "tool": "add_memory"})])
    ckpt = load_checkpoint(tmp_path)
    rejected = [w for w in ckpt.writes if not w.accepted]
    assert [(w.source, w.current_node, w.target_node, w.ts, w.step) for w in rejected] == [
        ("auto_entry", "b", "", T0 + 5, 2)
    ]


def _scan_by_parse(node_id, lines):
    """The scan as parse_trace_line reads each line (what trace_log._scan inlines)."""
    found, current = [], None
    for index, line in enumerate(lines):
        parsed = parse_trace_line(line)
        if parsed.kind == "call":
            current = {"node_id": node_id, "index": index, "tool": parsed.tool}
            current["args_raw"] = parsed.text
            found.append(current)
        elif parsed.kind == "result" and current is not None and "result_raw" not in current:
            current["result_raw"] = parsed.text
    return found


_PIECES = st.sampled_from(["→", "←", " ", "\u3000", "\t", "(", ")", "x", "é", "a_b", "1", "'"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=8).map("".join), max_size=8))
def test_the_scan_pairs_calls_and_results_as_parse_trace_line_reads_them(lines):
    from ari_mem_tui.checkpoint.trace_log import _scan

    assert _scan("n", lines) == _scan_by_parse("n", lines)
