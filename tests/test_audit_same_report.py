"""The audit of a loaded run is the audit of its whole CoW log and every parsed trace call.

A load defers both (`Checkpoint.writes`, `Checkpoint.trace_calls`). The reference here builds
them first (what the audit read before it learned to leave them unbuilt), then audits; the run
opened again, fresh and twice from the run index, must give the same report, dumped field by
field. Runs: demo runs of several seeds and sizes, the hand-made fixture checkpoints of the
checkpoint tests, copies of the small demo damaged as the hostile tests damage it, and one run
built for the CoW log's ordering rules and the trace lines a quick scan could miss.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from checkpoint_helpers import (
    COW,
    T0,
    call,
    chain_tree,
    full_checkpoint,
    read_event,
    result,
    scope,
    write_access,
    write_backup,
    write_cow_case,
    write_event,
    write_tree,
)
from tui_helpers import write_tiny_checkpoint

from ari_mem_tui.audit import BULK_TOOLS, INHERIT_TOOLS, SEARCH_TOOLS, audit
from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.attribution import READ_TOOLS
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.demo import write_demo

NOT_SET = "ARI_CURRENT_NODE_ID not set"


def _auto(tool: str, error: str) -> str:
    """The entry a node writes about its own refused call (`Tool <name>: <result>`)."""
    return f"Tool {tool}: " + json.dumps({"result": json.dumps({"ok": False, "error": error})})


def write_orderings(path: Path) -> Path:
    """The CoW log's order rules met at once: rejections timed by auto entries, a tie between
    two nodes listed in another order than their memory's, untimed rejections (one between two
    timed ones of its node, one in a node whose latest accepted write is an access-log write
    without a backup entry), a node known only from its memory; and reads of every audited
    tool, one call spelled with JSON escapes that a byte scan for tool names would miss."""
    nodes = chain_tree()  # root → a → b, and c under root: a's trace comes before c's
    nodes[1]["trace_log"] = [
        call("add_memory", {"node_id": "root", "text": "into root"}),
        result({"ok": False, "error": COW}),
        call("add_memory", {"node_id": "c", "text": "into c, no auto entry"}),
        result({"ok": False, "error": COW}),
        call("search_memory", {"query": "q", "ancestor_ids": ["root", "c"]}),
        result({"results": [{"entry_id": "pc", "node_id": "c", "text": "c's"}]}),
        call("get_node_memory", {"node_id": "c"}),
        result({"entries": [{"text": "c's"}]}),
        call("bulk_get_node_memory", {"node_ids": ["root", "b"]}),
        result({"by_node": {"b": [{"entry_id": "pb", "text": "b's"}]}}),
        "→ search_memory({not json",
        call("run_code", {"code": "print(1)"}),
        "  ← {'result': '1'}",
    ]
    nodes[2]["trace_log"] = [
        call("add_memory", {"node_id": "a", "text": "into a"}),
        result({"ok": False, "error": NOT_SET}),
        call("clear_node_memory", {"node_id": "root"}),
        "  ← " + str({"result": json.dumps({"removed": 0, "error": COW})}),
        call("add_memory", {"node_id": "b", "text": "into b"}),
        result({"ok": False, "error": NOT_SET}),
    ]
    # b's only call, with its tool name written as JSON escapes (valid JSON, same string)
    nodes[3]["trace_log"] = [call("search_memory", {"query": "mine", "ancestor_ids": ["c"]})]
    write_tree(path, nodes)
    tree = path / "tree.json"
    tree.write_text(tree.read_text().replace("→ search_memory", "→ \\u0073earch_memory"))
    add = {"tool": "add_memory"}
    write_backup(
        path,
        [  # c's memory first: c's rows come before a's in the whole log
            scope("c", _auto("add_memory", NOT_SET), T0 + 300, add),
            scope("c", _auto("add_memory", NOT_SET), T0 + 350, add),
            scope("c", "c's", T0 + 200),
            scope("a", _auto("add_memory", COW), T0 + 350, {"step": 2, **add}),
            scope("b", "b's", T0 + 100),
            scope("ghost", _auto("add_memory", COW), T0 + 50, add),
            scope("ghost", _auto("add_memory", COW), T0 + 600, add),
            scope("ghost", "a lost node's note", T0 + 40),
        ],
    )
    write_access(
        path,
        [
            write_event(T0 + 100.1, "b", "pb", "b's"),
            write_event(T0 + 200.1, "c", "pc", "c's"),
            write_event(T0 + 900, "a", "pa", "a's, not in the backup"),
            read_event(T0 + 310, "a", "q", ["root", "c"], results=[{"entry_id": "pc"}]),
            read_event(T0 + 320, "a", "inherit:get_node_memory", ["c"]),
        ],
    )
    return path


def _damaged(small: Path, out: Path, how: str) -> Path:
    """A copy of the small demo, damaged as tests/test_hostile_*.py damage it."""
    shutil.copytree(small, out)
    tree = out / "tree.json"
    if how == "half-tree":
        text = tree.read_text()
        sixth = json.dumps({"id": json.loads(text)["nodes"][5]["id"]})[1:-1]
        tree.write_text(text[: text.index(sixth) + len(sixth)])
        (out / "nodes_tree.json").unlink()
    elif how == "bom":
        tree.write_bytes(b"\xef\xbb\xbf" + tree.read_bytes())
    elif how == "long-int-line":
        with (out / "memory_access.jsonl").open("a") as log:
            log.write('{"ts": 1.0, "node_id": "x", "op": "read", "n": ' + "9" * 5000 + "}\n")
    return out


def _reference(path: Path) -> tuple[dict, list]:
    """The report and rejected rows as they were made from the whole log and every call."""
    ckpt = load_checkpoint(path)
    ckpt.writes, ckpt.trace_calls  # noqa: B018 - built before the audit, as it used to
    return audit(ckpt).as_data(), [w for w in ckpt.writes if not w.accepted]


def assert_same_audit(path: Path, index_root: Path) -> None:
    report, rejected = _reference(path)
    opened = [load_checkpoint(path)]
    for _ in range(3):  # the first writes the index, the others reopen from it
        opened.append(load_checkpoint(path, use_index=True))
    assert index.load(path) is not None  # (the later two were reopened from it)
    for ckpt in opened:
        assert audit(ckpt).as_data() == report
        assert "_pending_writes" in ckpt.__dict__  # the audit built no accepted row
        assert "_pending_trace_calls" in ckpt.__dict__  # and parsed only the read calls
        assert ckpt.rejected_writes() == rejected  # the same rows, fields and order


@pytest.fixture
def index_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "index-root"
    monkeypatch.setenv(index.INDEX_ENV, str(root))
    return root


@pytest.mark.parametrize(
    ("nodes", "seed", "entries"), [(8, 1, None), (40, 7, None), (120, 3, None), (60, 11, 3000)]
)
def test_same_audit_on_demo_runs(tmp_path, index_root, nodes, seed, entries) -> None:
    path = write_demo(tmp_path / "demo", nodes=nodes, seed=seed, entries=entries)
    report, rejected = _reference(path)
    assert report["leaks"] and rejected  # the demo plants both
    assert_same_audit(path, index_root)


FIXTURES: dict[str, Callable[[Path], Path]] = {
    "orderings": write_orderings,
    "cow-case": write_cow_case,
    "full": full_checkpoint,
    "tiny": write_tiny_checkpoint,
}


@pytest.mark.parametrize("name", list(FIXTURES))
def test_same_audit_on_fixture_runs(tmp_path, index_root, name) -> None:
    assert_same_audit(FIXTURES[name](tmp_path / name), index_root)


@pytest.mark.parametrize("how", ["half-tree", "bom", "long-int-line"])
def test_same_audit_on_damaged_runs(tmp_path, index_root, small_ckpt, how) -> None:
    assert_same_audit(_damaged(small_ckpt, tmp_path / how, how), index_root)


def test_the_orderings_run_has_what_it_is_built_for(tmp_path, index_root) -> None:
    report, rejected = _reference(write_orderings(tmp_path / "run"))
    rows = [(w.current_node, w.target_node, w.ts) for w in rejected]
    assert rows == [
        ("ghost", "", T0 + 50),
        ("c", "a", T0 + 300),
        ("c", "b", T0 + 350),  # a tie: c's memory comes first
        ("c", "root", None),  # after c's latest row, not after the row before it in the trace
        ("a", "root", T0 + 350),
        ("ghost", "", T0 + 600),
        ("a", "c", None),  # after a's latest write, the access log's at T0 + 900
    ]
    leaks = {(f["node_id"], f["tool"], tuple(f["targets"])) for f in report["leaks"]}
    assert {("a", "get_node_memory", ("c",)), ("a", "bulk_get_node_memory", ("b",))} <= leaks
    violations = {(f["node_id"], tuple(f["targets"])) for f in report["scope_violations"]}
    assert violations == {("a", ("c",)), ("b", ("c",))}  # b's escaped call is read too


def test_every_tool_the_audit_judges_is_one_the_loader_parses_ahead() -> None:
    """The audit reads `Checkpoint.read_tool_calls()`: the loader's READ_TOOLS calls while the
    whole parse waits. A call of any other tool gives no finding (`_audit_call`)."""
    assert {*SEARCH_TOOLS, *INHERIT_TOOLS, *BULK_TOOLS} <= READ_TOOLS
