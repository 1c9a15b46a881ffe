"""The demo generator writes ARI's exact formats, deterministically, with the planted features."""

from __future__ import annotations

import ast
import gzip
import json
import re
import subprocess
import sys
from argparse import Namespace
from datetime import datetime
from pathlib import Path

import pytest

from ari_mem_tui import demo
from ari_mem_tui.demo import DemoTargetError, write_demo
from ari_mem_tui.demo.text import JAPANESE_NOTE

NODE_KEYS = [
    "id",
    "parent_id",
    "depth",
    "status",
    "retry_count",
    "children",
    "created_at",
    "completed_at",
    "artifacts",
    "metrics",
    "has_real_data",
    "eval_summary",
    "label",
    "raw_label",
    "name",
    "error_log",
    "ancestor_ids",
    "trace_log",
    "original_direction",
    "node_report_path",
]
TOP_KEYS = [
    "run_id",
    "experiment_file",
    "experiment_file_sha256",
    "experiment_file_len",
    "created_at",
    "nodes",
]
WRITE_KEYS = ["ts", "node_id", "op", "collection", "entry_id", "text_preview", "metadata"]
READ_KEYS = ["ts", "node_id", "op", "collection", "query", "ancestor_ids", "limit", "results"]
COW = "node_id does not match current node (CoW violation)"


# ---------------------------------------------------------------- raw readers (no loader)
def tree(path: Path) -> dict:
    return json.loads((path / "tree.json").read_text(encoding="utf-8"))


def backup(path: Path) -> list[dict]:
    with gzip.open(path / "memory_backup.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def events(path: Path) -> list[dict]:
    lines = (path / "memory_access.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def calls(node: dict) -> list[tuple[str, dict, object]]:
    """(tool, args, decoded result envelope) for each call line of a node's trace_log."""
    out = []
    trace = node["trace_log"]
    for i, line in enumerate(trace):
        if line.startswith("→ "):
            tool, _, rest = line[2:].partition("(")
            args = json.loads(rest[:-1])
            result = None
            if i + 1 < len(trace) and trace[i + 1].startswith("  ← "):
                result = ast.literal_eval(trace[i + 1][4:])
            out.append((tool, args, result))
    return out


def ts(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


# ---------------------------------------------------------------- determinism
def test_same_seed_gives_identical_bytes(tmp_path: Path, small_ckpt: Path) -> None:
    again = write_demo(tmp_path / "again", nodes=8, seed=1)
    first, second = files(small_ckpt), files(again)
    assert sorted(first) == sorted(set(demo.DEMO_FILES) - {"settings.json"})  # no recorder
    for name in first:
        assert first[name] == second[name], name


def test_default_demo_is_reproducible(tmp_path: Path, demo_ckpt: Path) -> None:
    assert files(write_demo(tmp_path / "d")) == files(demo_ckpt)


def test_different_seed_gives_different_run(tmp_path: Path, small_ckpt: Path) -> None:
    other = files(write_demo(tmp_path / "other", nodes=8, seed=2))
    mine = files(small_ckpt)
    for name in ("tree.json", "memory_backup.jsonl.gz", "memory_access.jsonl"):
        assert other[name] != mine[name], name


# ---------------------------------------------------------------- tree.json
def test_tree_json_layout(demo_ckpt: Path) -> None:
    text = (demo_ckpt / "tree.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "run_id": ')  # 2-space indent
    assert "ガ" in text or "の" in text  # ensure_ascii=False keeps Japanese as is
    data = json.loads(text)
    assert list(data) == TOP_KEYS
    exp = (demo_ckpt / "experiment.md").read_bytes()
    assert data["experiment_file_len"] == len(exp)
    assert len(data["experiment_file_sha256"]) == 16
    run_id = data["run_id"]
    stamp, _, slug = run_id.partition("_")
    assert len(stamp) == 14 and stamp.isdigit() and slug
    for node in data["nodes"]:
        assert list(node) == NODE_KEYS
    assert data["nodes"][0]["id"] == f"node_{run_id}_root"


def test_tree_shape_and_invariants(demo_ckpt: Path) -> None:
    nodes = tree(demo_ckpt)["nodes"]
    by_id = {n["id"]: n for n in nodes}
    root = nodes[0]
    assert root["parent_id"] is None and root["ancestor_ids"] == [] and root["depth"] == 0
    for node in nodes[1:]:
        assert node["id"].startswith("node_") and len(node["id"]) == 13
        int(node["id"][5:], 16)
        parent = by_id[node["parent_id"]]
        assert node["ancestor_ids"] == [*parent["ancestor_ids"], parent["id"]]
        assert len(node["ancestor_ids"]) == node["depth"]
        assert node["id"] in parent["children"]
        # children are expanded after their parent completed
        assert ts(node["created_at"]) > ts(parent["completed_at"])
    assert max(n["depth"] for n in nodes) >= 4
    assert {n["status"] for n in nodes} >= {"success", "failed", "running", "pending"}
    assert {n["label"] for n in nodes} >= {"draft", "improve", "debug", "ablation", "validation"}
    assert any(len(n["children"]) >= 2 for n in nodes[1:])  # parallel siblings
    failed = [n for n in nodes if n["status"] == "failed" and n["children"]]
    assert failed and all(any(by_id[c]["label"] == "debug" for c in n["children"]) for n in failed)
    for node in nodes:
        if node["status"] in ("success", "failed"):
            assert ts(node["completed_at"]) > ts(node["created_at"])
            assert node["node_report_path"].endswith(f"{node['id']}/node_report.json")
        else:
            assert node["completed_at"] == ""
        if node["status"] == "pending":
            assert node["trace_log"] == [] and node["eval_summary"] == node["original_direction"]


def test_results_and_nodes_tree_mirror_the_tree(demo_ckpt: Path) -> None:
    nodes = tree(demo_ckpt)["nodes"]
    nodes_tree = json.loads((demo_ckpt / "nodes_tree.json").read_text(encoding="utf-8"))
    assert nodes_tree["nodes"] == nodes
    assert nodes_tree["experiment_goal"] == (demo_ckpt / "experiment.md").read_text()[:3000]
    results = json.loads((demo_ckpt / "results.json").read_text(encoding="utf-8"))
    assert list(results["nodes"]) == [n["id"] for n in nodes]
    for node in nodes:
        row = results["nodes"][node["id"]]
        assert list(row) == [
            "artifacts",
            "metrics",
            "has_real_data",
            "eval_summary",
            "status",
            "error_log",
        ]
        assert row["status"] == node["status"]


# ---------------------------------------------------------------- backup
def test_backup_record_order_and_shapes(demo_ckpt: Path) -> None:
    records = backup(demo_ckpt)
    kinds = [r["kind"] for r in records]
    n_node = kinds.count("node_scope")
    n_react = kinds.count("react_step")
    assert kinds == ["node_scope"] * n_node + ["react_step"] * n_react + ["core_seed"]
    node_recs = records[:n_node]
    for r in node_recs:
        assert list(r) == ["kind", "node_id", "text", "metadata", "ts"]
    # groups contiguous, ordered by first ts, ts ascending inside
    seen: list[str] = []
    for r in node_recs:
        if not seen or seen[-1] != r["node_id"]:
            assert r["node_id"] not in seen
            seen.append(r["node_id"])
    firsts = [next(r["ts"] for r in node_recs if r["node_id"] == nid) for nid in seen]
    assert firsts == sorted(firsts)
    for nid in seen:
        group = [r["ts"] for r in node_recs if r["node_id"] == nid]
        assert group == sorted(group)
    react = records[n_node : n_node + n_react]
    assert [r["ts"] for r in react] == sorted(r["ts"] for r in react)
    assert all(list(r) == ["kind", "text", "metadata", "ts"] for r in react)
    assert react[0]["text"].startswith("EVALUATION_CRITERIA: primary_metric=")
    assert any("step" in r["metadata"] for r in react)  # a fallback copy of a tool result
    core = records[-1]
    assert list(core) == ["kind", "persona", "human", "context", "seeded_at"]
    assert core["persona"] == core["human"] == "" and core["seeded_at"] == 0.0
    assert "seeded_at" not in core["context"]
    assert core["context"]["primary_metric"] == "GFlops_per_s"


def test_backup_holds_every_entry_kind_ari_writes(demo_ckpt: Path) -> None:
    recs = [r for r in backup(demo_ckpt) if r["kind"] == "node_scope"]
    tool = [r for r in recs if r["text"].startswith("Tool ")]
    assert tool and all(set(r["metadata"]) == {"step", "tool"} for r in tool)
    summaries = [r for r in recs if r["metadata"].get("type") == "result_summary"]
    assert summaries
    for r in summaries:
        assert r["text"].startswith(f"RESULT SUMMARY node={r['node_id']} label=NodeLabel.")
        assert "metrics=[" in r["text"] and "GFlops_per_s" in r["metadata"]["metrics"]
    types_ = {r["metadata"].get("type") for r in recs}
    assert types_ >= {
        "survey_papers",
        "finding",
        "experiment_result",
        "failure_case",
        "reflection",
        "reproducibility_event",
    }
    for r in recs:
        meta = r["metadata"]
        if meta.get("type") == "survey_papers":
            assert r["text"].startswith("SURVEY RESULTS:\n- [")
        if meta.get("mem_kind"):
            assert meta["mem_kind"] == meta["type"]
            assert {"metric_ptr", "artifact_refs", "node_report_ref"} <= set(meta)
        if meta.get("type") == "reflection":
            assert meta["confidence"] == 0.4
        if meta.get("type") == "reproducibility_event":
            assert meta["repro_status"] in ("rerun_passed", "rerun_failed")
            assert (
                r["text"] == f"reproducibility: {meta['repro_target_id']} -> {meta['repro_status']}"
            )
    texts = " ".join(r["text"] for r in recs)
    for needle in ("[red]", "[/x]", "[bold]", "metrics=["):
        assert needle in texts
    assert any("\u3040" <= ch <= "\u30ff" for ch in texts)  # Japanese kana


# ---------------------------------------------------------------- access log
def test_access_event_shapes(demo_ckpt: Path) -> None:
    evs = events(demo_ckpt)
    assert [e["ts"] for e in evs] == sorted(e["ts"] for e in evs)
    for e in evs:
        assert list(e) == (WRITE_KEYS if e["op"] == "write" else READ_KEYS)
        if e["op"] == "write":
            assert e["entry_id"].startswith("passage-")
            assert len(e["text_preview"]) <= 200
            if e["collection"] == "react_step":
                assert e["node_id"] == ""
            continue
        if e["query"] == "inherit:get_node_memory":
            assert len(e["ancestor_ids"]) == 1 and e["limit"] == len(e["results"])
            assert all(list(r) == ["src_node_id", "entry_id", "type"] for r in e["results"])
            assert all(r["src_node_id"] == e["ancestor_ids"][0] for r in e["results"])
        elif e["collection"] == "react_step":
            assert e["ancestor_ids"] is None and e["node_id"] == ""
            assert all(r["src_node_id"] == "" for r in e["results"])
        else:
            assert all(list(r) == ["entry_id", "src_node_id", "score"] for r in e["results"])
            scores = [r["score"] for r in e["results"]]
            assert scores == sorted(scores, reverse=True)
            assert all(0.0 <= s <= 1.0 for s in scores)


def test_write_events_join_to_backup_entries(demo_ckpt: Path) -> None:
    by_node: dict[str, list[dict]] = {}
    for r in backup(demo_ckpt):
        if r["kind"] == "node_scope":
            by_node.setdefault(r["node_id"], []).append(r)
    writes = [e for e in events(demo_ckpt) if e["op"] == "write"]
    assert len({e["entry_id"] for e in writes}) == len(writes)
    for e in writes:
        if e["collection"] != "node_scope":
            continue
        match = [
            r
            for r in by_node[e["node_id"]]
            if r["text"].startswith(e["text_preview"])
            and r["metadata"] == e["metadata"]
            and 0 < e["ts"] - r["ts"] < 1.0
        ]
        assert match, e


def test_every_started_node_has_its_startup_reads(demo_ckpt: Path) -> None:
    nodes = tree(demo_ckpt)["nodes"]
    evs = events(demo_ckpt)
    reads = [e for e in evs if e["op"] == "read"]
    stale = 0
    for node in nodes[1:]:
        if node["status"] == "pending":
            continue
        query = node["original_direction"][:200]
        hits = [
            i
            for i, e in enumerate(reads)
            if e["query"] == query and e["ancestor_ids"] == node["ancestor_ids"] and e["limit"] == 5
        ]
        assert len(hits) == 1, node["id"]
        i = hits[0]
        burst = reads[i - node["depth"] : i]
        assert [e["query"] for e in burst] == ["inherit:get_node_memory"] * node["depth"]
        assert [e["ancestor_ids"][0] for e in burst] == node["ancestor_ids"]
        assert ts(node["created_at"]) < burst[0]["ts"]
        stale += reads[i]["node_id"] != node["id"]
        # the recorded window only holds ancestors' entries
        assert all(r["src_node_id"] in node["ancestor_ids"] for r in reads[i]["results"])
    assert stale > 0  # the logged "current node" is the last writer, not the reader
    pipeline = [e for e in reads if e["node_id"] == "" and e["query"].startswith("inherit:")]
    assert [e["ancestor_ids"][0] for e in pipeline[-len(nodes) :]] == [n["id"] for n in nodes]
    assert sum(e["collection"] == "react_step" for e in reads) >= 3


# ---------------------------------------------------------------- planted features
def planted(path: Path) -> dict[str, list]:
    nodes = tree(path)["nodes"]
    by_id = {n["id"]: n for n in nodes}
    found: dict[str, list] = {"leak": [], "offread": [], "reject": []}
    for node in nodes:
        for tool, args, result in calls(node):
            if tool == "search_memory" and not set(args["ancestor_ids"]) <= set(
                node["ancestor_ids"]
            ):
                hits = json.loads(result["result"])["results"]
                outside = [h for h in hits if h["node_id"] not in node["ancestor_ids"]]
                found["leak"].append((node, args, outside))
            if tool == "get_node_memory" and args["node_id"] not in node["ancestor_ids"]:
                found["offread"].append((node, by_id[args["node_id"]], result))
            if tool == "add_memory" and args["node_id"] != node["id"]:
                found["reject"].append((node, args, result))
    return found


@pytest.mark.parametrize("fixture", ["demo_ckpt", "small_ckpt"])
def test_planted_leak_and_rejected_write(fixture: str, request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(fixture)
    found = planted(path)
    assert found["leak"] and found["offread"] and found["reject"]
    node, args, outside = found["leak"][0]
    assert outside, "the leaking search returned the sibling branch's entries"
    leaked = [
        e
        for e in events(path)
        if e["op"] == "read"
        and e["query"] == args["query"]
        and e["ancestor_ids"] == args["ancestor_ids"]
    ]
    assert leaked and any(
        r["src_node_id"] not in node["ancestor_ids"] for r in leaked[0]["results"]
    )
    reader, target, result = found["offread"][0]
    assert target["id"] not in reader["ancestor_ids"] and reader["id"] not in target["ancestor_ids"]
    assert json.loads(result["result"])["entries"]
    assert any(
        e["op"] == "read"
        and e["ancestor_ids"] == [target["id"]]
        and e["node_id"] != ""
        and e["ts"] > ts(reader["created_at"])
        for e in events(path)
    )
    node, args, result = found["reject"][0]
    assert json.loads(result["result"]) == {"ok": False, "error": COW}
    auto = [
        r
        for r in backup(path)
        if r.get("node_id") == node["id"]
        and r["text"].startswith('Tool add_memory: {"result": "{\\"ok\\": false')
    ]
    assert auto and auto[0]["metadata"]["tool"] == "add_memory"
    assert "CoW violation" in auto[0]["text"]


def test_small_checkpoint_keeps_the_features(small_ckpt: Path) -> None:
    nodes = tree(small_ckpt)["nodes"]
    assert len(nodes) == 8 and max(n["depth"] for n in nodes) >= 3
    text = (small_ckpt / "tree.json").read_text(encoding="utf-8")
    assert "[red]" in text and "[bold]" in text and "[/x]" in text
    kana = "\u3040-\u30ff"
    assert re.search(f"[{kana}]", text)  # the planted Japanese note, in a trace_log
    # the story is told in English: no direction (the start-up query) is Japanese
    assert not any(re.search(f"[{kana}]", n["original_direction"] or "") for n in nodes)
    notes = [r for r in backup(small_ckpt) if r.get("text") == JAPANESE_NOTE]
    assert len(notes) == 1 and notes[0]["kind"] == "node_scope"


def test_every_tool_call_has_a_result_line_and_auto_entry(small_ckpt: Path) -> None:
    recs = [r for r in backup(small_ckpt) if r["kind"] != "core_seed"]
    for node in tree(small_ckpt)["nodes"]:
        for tool, args, result in calls(node):
            assert result is not None
            mine = [
                r
                for r in recs
                if r["text"].startswith(f"Tool {tool}: ")
                and (r.get("node_id") == node["id"] or r["metadata"].get("node_id") == node["id"])
            ]
            expected = f"Tool {tool}: {json.dumps(result)[:1000]}"
            assert any(r["text"] == expected for r in mine), (node["id"], tool)


# ---------------------------------------------------------------- CLI and cache
def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "demo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_writes_and_exits(tmp_path: Path) -> None:
    """A small demo's start-up searches are recorded with MiniLM (and settings.json says so);
    `--recordings keywords` keeps the generator's stand-in and writes no settings.json."""
    out = tmp_path / "ckpt"
    proc = run_cli("--out", str(out), "--nodes", "6", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert "6 nodes" in proc.stdout and str(out) in proc.stdout
    assert "recorded with ari-mem-tui/all-MiniLM-L6-v2-int8" in proc.stdout
    assert "recording the demo's start-up searches with MiniLM" in proc.stderr
    assert (out / "tree.json").is_file() and (out / "memory_backup.jsonl.gz").is_file()
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    assert settings["letta_embedding_config"] == "ari-mem-tui/all-MiniLM-L6-v2-int8"
    again = run_cli("--out", str(out), "--nodes", "6", "--seed", "4", "--recordings", "keywords")
    assert again.returncode == 0, again.stderr  # a previous demo: ok
    assert "keyword stand-in" in again.stdout and "MiniLM" not in again.stderr
    assert not (out / "settings.json").exists()
    marker = json.loads((out / ".ari_mem_tui_demo.json").read_text(encoding="utf-8"))
    assert (marker["seed"], marker["recorded_with"]) == (4, "keywords")


def test_cli_refuses_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    proc = run_cli("--out", str(tmp_path))
    assert proc.returncode == 2
    assert "not empty" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(DemoTargetError):
        write_demo(tmp_path, nodes=4)


def test_demo_checkpoint_is_cached_under_xdg_cache_home(_isolated_cache: Path) -> None:
    first = demo.demo_checkpoint(nodes=5, seed=2)
    assert first.is_relative_to(_isolated_cache)
    assert first.name == "demo-n5-s2"
    stamp = (first / "tree.json").stat().st_mtime_ns
    assert demo.demo_checkpoint(nodes=5, seed=2) == first
    assert (first / "tree.json").stat().st_mtime_ns == stamp  # reused, not rewritten


def test_the_demo_cache_follows_ari_mem_tui_cache_as_every_cache_does(
    _isolated_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN $ARI_MEM_TUI_CACHE WHEN the demo is cached THEN it is written there, where the
    vectors and the run index go too; without it, in the user's cache dir as before."""
    from ari_mem_tui.checkpoint.index import index_root
    from ari_mem_tui.search.vector_cache import cache_root as vectors_root

    chosen = tmp_path / "chosen"
    monkeypatch.setenv("ARI_MEM_TUI_CACHE", str(chosen))
    assert demo.cache_root() == vectors_root() == chosen and index_root() == chosen / "index"
    path = demo.demo_checkpoint(nodes=4, seed=3)
    assert path == chosen / "demo-n4-s3" and (path / "tree.json").is_file()
    assert not (_isolated_cache / "ari-mem-tui" / "demo-n4-s3").exists()
    monkeypatch.delenv("ARI_MEM_TUI_CACHE")
    assert demo.cache_root() == vectors_root() == _isolated_cache / "ari-mem-tui"


def test_demo_without_out_opens_the_cached_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from ari_mem_tui.cli import commands

    seen: list[Namespace] = []
    monkeypatch.setattr(commands, "cmd_open", lambda args: seen.append(args) or 0)
    monkeypatch.setattr(commands, "no_terminal", lambda: False)  # pytest's stdout is no tty
    args = Namespace(
        out=None, nodes=5, seed=2, entries=None, embedder="bm25", recordings="keywords"
    )
    assert commands.cmd_demo(args) == 0
    assert seen and seen[0].checkpoint == demo.demo_checkpoint(nodes=5, seed=2)


# ---------------------------------------------------------------- round trip through the loader
def test_default_demo_loads_without_problems(demo_ckpt: Path) -> None:
    from ari_mem_tui.checkpoint.load import load_checkpoint

    ckpt = load_checkpoint(demo_ckpt)
    assert ckpt.problems == []
    raw = tree(demo_ckpt)["nodes"]
    assert list(ckpt.nodes) == [n["id"] for n in raw]
    assert len(ckpt.entries) == sum(r["kind"] != "core_seed" for r in backup(demo_ckpt))
    writes = [e for e in ckpt.access_events if e.op == "write"]
    assert writes and all(e.joined_entry in ckpt.entries_by_id for e in writes)
    for event in writes:
        entry = ckpt.entries_by_id[event.joined_entry]
        assert entry.letta_id == event.entry_id
        assert entry.text.startswith(event.text_preview or "")
    # each start-up read is given to the node that made it, whatever node_id the log says
    reads = [e for e in ckpt.access_events if e.op == "read"]
    for node in raw[1:]:
        if node["status"] == "pending":
            continue
        query = node["original_direction"][:200]
        search = [e for e in reads if e.query == query and e.ancestor_ids == node["ancestor_ids"]]
        assert len(search) == 1 and search[0].reader == node["id"], node["id"]
        at = reads.index(search[0])
        burst = reads[at - node["depth"] : at]
        assert all(e.reader == node["id"] for e in burst), node["id"]
    assert {e.reader for e in reads if e.node_id == "" and e.collection == "react_step"} == {
        "bfts-select"
    }
    pipeline = [e for e in reads if e.reader == "pipeline"]
    assert len(pipeline) == len(raw)
    rejected = [w for w in ckpt.writes if not w.accepted]
    assert rejected and all("CoW violation" in (w.reason or "") for w in rejected)
    node, args, _ = planted(demo_ckpt)["leak"][0]
    leak = [e for e in reads if e.query == args["query"] and e.ancestor_ids == args["ancestor_ids"]]
    assert [e.reader for e in leak] == [node["id"]]


def test_json_files_are_exactly_what_json_dumps_writes(small_ckpt: Path) -> None:
    """The fast indented writer must match json.dumps(indent=2, ensure_ascii=False) byte for byte."""
    for name in ("tree.json", "nodes_tree.json", "results.json", "idea.json"):
        text = (small_ckpt / name).read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n", name


def test_big_runs_sample_startup_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ari_mem_tui.demo import run as demo_run

    monkeypatch.setattr(demo_run, "STARTUP_READ_NODES", 6)
    path = write_demo(tmp_path / "sampled", nodes=30, seed=3, entries=300)
    nodes = tree(path)["nodes"]
    started = [n for n in nodes[1:] if n["status"] != "pending"]
    directions = {n["original_direction"][:200] for n in started}
    searched = {
        e["query"]
        for e in events(path)
        if e["op"] == "read" and e["limit"] == 5 and e["query"] in directions
    }
    assert 6 <= len(searched) < len(started)
    assert planted(path)["leak"]  # planted readers keep their reads


@pytest.mark.parametrize("seed", [2, 3, 4, 5, 6])
def test_small_runs_keep_planted_features_for_any_seed(tmp_path: Path, seed: int) -> None:
    path = write_demo(tmp_path / "s", nodes=8, seed=seed)
    found = planted(path)
    assert found["leak"] and found["leak"][0][2] and found["offread"] and found["reject"]
    nodes = tree(path)["nodes"]
    assert max(n["depth"] for n in nodes) >= 3
    assert {n["status"] for n in nodes} >= {"success", "failed", "running", "pending"}


def test_entries_fall_inside_their_node_run(demo_ckpt: Path) -> None:
    """Entries come after the node was created; only consolidation follows its completion."""
    nodes = {n["id"]: n for n in tree(demo_ckpt)["nodes"]}
    for r in backup(demo_ckpt):
        if r["kind"] != "node_scope":
            continue
        node = nodes[r["node_id"]]
        assert r["ts"] > ts(node["created_at"])
        if node["completed_at"] and not r["metadata"].get("mem_kind"):
            assert r["ts"] < ts(node["completed_at"]), r["text"][:80]
