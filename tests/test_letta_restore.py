"""`ari-mem-tui letta-restore` against the fake Letta server (tests/fake_letta.py)."""

from __future__ import annotations

import argparse
import io
import json
from datetime import datetime
from pathlib import Path

import pytest
from checkpoint_helpers import T0, chain_tree, core_seed, react, scope, write_backup, write_tree
from fake_letta import FakeLetta, free_port
from letta_helpers import letta_args

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.cli import build_parser
from ari_mem_tui.cli.commands import cmd_letta_restore
from ari_mem_tui.letta.footer import SEPARATOR
from ari_mem_tui.letta.source import open_letta_run

CONTEXT = {"experiment_goal": "SpMV を速く", "primary_metric": "GFlops_per_s"}


@pytest.fixture
def fake() -> FakeLetta:
    with FakeLetta() as server:
        yield server


@pytest.fixture
def ckpt(tmp_path: Path) -> Path:
    path = tmp_path / "ckpt"
    write_tree(path, chain_tree())
    write_backup(
        path,
        [
            scope("root", "root finding: 結果 \x1b[31m", T0 + 10, {"mem_kind": "note", "z": 1}),
            scope("a", "a measured 17.1 GFlops", T0 + 110, {"b": [1, 2]}),
            scope("c", "c: sibling text", T0 + 120),
            react("EVALUATION_CRITERIA: primary_metric=GFlops_per_s", T0 + 5, {"node_id": "root"}),
            "{broken line",
            core_seed(CONTEXT),
        ],
    )
    return path


def restore_args(ckpt: Path, url: str, *extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["letta-restore", str(ckpt), "--letta-url", url, *extra])


def run_restore(args: argparse.Namespace) -> tuple[int, str]:
    err = io.StringIO()
    return cmd_letta_restore(args, err=err), err.getvalue()


def test_restore_writes_aris_exact_format(fake: FakeLetta, ckpt: Path) -> None:
    before = {p: p.read_bytes() for p in ckpt.rglob("*") if p.is_file()}
    code, err = run_restore(restore_args(ckpt, fake.url))
    assert code == 0, err
    lines = err.splitlines()
    assert lines[1].startswith(f"letta-restore WRITES to the Letta server at {fake.url}")
    assert "3 node-scope + 1 react passages and the core blocks" in lines[1]
    assert "warning: memory_backup.jsonl.gz line 5" in lines[0]  # the bad line, reported
    assert lines[-1].startswith("restored 4 passages into ari_agent_")
    ckpt_hash = checkpoint_hash(ckpt)
    (agent_id,) = fake.agents
    assert fake.agents[agent_id]["name"] == f"ari_agent_{ckpt_hash}"
    create = next(b for m, p, b in fake.bodies if m == "POST" and p == "/v1/agents/")
    assert create["model"] == "letta/letta-free" and create["include_base_tools"] is False
    assert create["embedding"] == "openai/text-embedding-3-small"
    assert [b["label"] for b in create["memory_blocks"]] == ["persona", "human", "ari_context"]
    rows = fake.passages[agent_id]
    first = rows[0]["text"]
    expected_footer = (
        f'{{"ari_checkpoint": "{ckpt_hash}", "ari_metadata": {{"mem_kind": "note", "z": 1}}, '
        f'"collection": "ari_node_{ckpt_hash}", "kind": "node_scope", "node_id": "root", '
        f'"ts": {T0 + 10!r}}}'
    )
    assert first == "root finding: 結果 \x1b[31m" + SEPARATOR + expected_footer
    react_row = next(r for r in rows if "EVALUATION_CRITERIA" in r["text"])
    footer = json.loads(react_row["text"].rpartition(SEPARATOR)[2])
    assert footer["collection"] == f"ari_react_{ckpt_hash}" and footer["node_id"] == "root"
    assert footer["kind"] == "react_step" and footer["step"] is None
    # created_at is the record's ts, so as-of searches see ARI's timeline
    assert datetime.fromisoformat(rows[0]["created_at"]).timestamp() == pytest.approx(T0 + 10)
    blocks = {k: b["value"] for k, b in fake.blocks[agent_id].items()}
    assert json.loads(blocks["ari_context"]) == CONTEXT and blocks["persona"] == ""
    after = {p: p.read_bytes() for p in ckpt.rglob("*") if p.is_file()}
    assert after == before  # never writes into the checkpoint


def test_restored_agent_reads_back_as_the_backup(fake: FakeLetta, ckpt: Path) -> None:
    assert run_restore(restore_args(ckpt, fake.url))[0] == 0
    files = load_checkpoint(ckpt)
    served = load_checkpoint(ckpt)
    open_letta_run(served, letta_args(fake.url, ckpt))
    key = lambda e: (e.kind, e.node_id, e.text, e.metadata, e.ts)
    assert sorted(map(key, served.entries), key=repr) == sorted(map(key, files.entries), key=repr)
    assert sorted(e.id for e in served.entries) == sorted(e.id for e in files.entries)
    assert served.core.ari_context == CONTEXT


def test_refuses_a_non_empty_agent_unless_merge(fake: FakeLetta, ckpt: Path) -> None:
    assert run_restore(restore_args(ckpt, fake.url))[0] == 0
    (agent_id,) = fake.agents
    code, err = run_restore(restore_args(ckpt, fake.url))
    assert code == 1 and "already holds passages" in err and "--merge" in err
    assert len(fake.passages[agent_id]) == 4
    code, err = run_restore(restore_args(ckpt, fake.url, "--merge"))
    assert code == 0 and len(fake.passages[agent_id]) == 8  # ARI's merge: duplicates
    assert len(fake.agents) == 1


def test_agent_name_and_hash_options(fake: FakeLetta, ckpt: Path) -> None:
    args = restore_args(ckpt, fake.url, "--agent", "my_copy", "--checkpoint-hash", "abcdefabcdef")
    assert run_restore(args)[0] == 0
    (agent,) = fake.agents.values()
    assert agent["name"] == "my_copy"
    texts = [p["text"] for p in fake.passages[agent["id"]]]
    assert all('"ari_checkpoint": "abcdefabcdef"' in t for t in texts)


def test_unreachable_server_and_missing_backup(ckpt: Path, tmp_path: Path) -> None:
    code, err = run_restore(restore_args(ckpt, f"http://127.0.0.1:{free_port()}"))
    assert code == 2 and err.splitlines()[-1].count("cannot reach a Letta server") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    code, err = run_restore(restore_args(empty, "http://127.0.0.1:1"))
    assert code == 2 and "no memory_backup.jsonl.gz" in err
