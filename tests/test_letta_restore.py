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
    writes = next(i for i, line in enumerate(lines) if line.startswith("letta-restore WRITES"))
    assert lines[writes].startswith(f"letta-restore WRITES to the Letta server at {fake.url}")
    assert "3 node-scope + 1 react passages and the core blocks" in lines[writes]
    assert "warning: memory_backup.jsonl.gz line 5" in lines[0]  # the bad line, reported
    hint = next(line for line in lines if "does not record the hash" in line)
    assert hint.startswith("warning: ") and "--checkpoint-hash" in hint
    assert lines[-2].startswith("restored 4 passages into ari_agent_")
    assert "(this path's)" in lines[-2]
    assert lines[-1] == "read back: all 4 passages byte for byte as written, footers included"
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


def test_a_copied_checkpoint_keeps_the_runs_footers_byte_for_byte(
    fake: FakeLetta, ckpt: Path, tmp_path: Path
) -> None:
    """The run's hash given: every footer keeps it (Letta embeds the footer too); re-encoding
    with the copy's hash is an explicit option, and it warns."""
    import shutil

    original = checkpoint_hash(ckpt)
    copy = tmp_path / "elsewhere" / "ckpt"
    shutil.copytree(ckpt, copy)
    assert checkpoint_hash(copy) != original
    code, err = run_restore(restore_args(copy, fake.url, "--checkpoint-hash", original))
    assert code == 0 and "warning: the backup does not record" not in err
    assert f"checkpoint hash {original} (the run's, given)" in err
    (agent,) = fake.agents.values()
    assert agent["name"] == f"ari_agent_{original}"
    kept = sorted(p["text"] for p in fake.passages[agent["id"]])
    # byte for byte what the restore of the checkpoint where it ran writes
    with FakeLetta() as at_home:
        assert run_restore(restore_args(ckpt, at_home.url))[0] == 0
        (home,) = at_home.agents.values()
        assert sorted(p["text"] for p in at_home.passages[home["id"]]) == kept
    code, err = run_restore(
        restore_args(copy, fake.url, "--checkpoint-hash", original, "--reencode-footers")
    )
    assert code == 0 and "warning: re-encoding every footer with this path's hash" in err
    assert "rankings can differ" in err
    again = next(
        a for a in fake.agents.values() if a["name"] == f"ari_agent_{checkpoint_hash(copy)}"
    )
    texts = [p["text"] for p in fake.passages[again["id"]]]
    assert texts and all(f'"ari_checkpoint": "{checkpoint_hash(copy)}"' in t for t in texts)


def test_read_back_names_a_passage_the_server_does_not_hold_as_written(
    fake: FakeLetta, ckpt: Path
) -> None:
    from ari_mem_tui.letta.api import LettaConnection
    from ari_mem_tui.letta.restore import plan_restore, verify_restore

    assert run_restore(restore_args(ckpt, fake.url))[0] == 0
    (agent_id,) = fake.agents
    plan = plan_restore(ckpt, fake.url)
    conn = LettaConnection(fake.url)
    assert verify_restore(plan, conn, agent_id) == []
    fake.passages[agent_id][1]["text"] += " "  # one byte more than was written
    missing = verify_restore(plan, conn, agent_id)
    assert len(missing) == 1 and "a measured 17.1 GFlops" in missing[0]


def test_a_directory_that_is_not_checkpoints_run_id_is_named_as_probably_copied(
    tmp_path: Path,
) -> None:
    import shutil

    from ari_mem_tui.demo import write_demo
    from ari_mem_tui.letta.restore import looks_moved, plan_restore

    demo = tmp_path / "ws" / "checkpoints"
    demo.mkdir(parents=True)
    home = write_demo(tmp_path / "made", nodes=4, seed=2)
    run_id = load_checkpoint(home).run_id
    at_home = demo / run_id
    shutil.copytree(home, at_home)
    assert looks_moved(at_home) == ""
    assert "looks copied or moved" in looks_moved(home)
    plan = plan_restore(home, "http://127.0.0.1:1")
    assert any("looks copied or moved" in w for w in plan.warnings)
    home_plan = plan_restore(at_home, "http://127.0.0.1:1")
    assert not any("looks copied" in w for w in home_plan.warnings)
    assert any("does not record the hash" in w for w in home_plan.warnings)
