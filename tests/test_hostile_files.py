"""Damaged or strange files in a checkpoint: what can be read is read, the rest is named.

The cases are built at test time from the small demo run: a tree.json cut mid-write, one with
a byte-order mark, a FIFO / a directory / a /dev/zero link in a file's place, a run_id that
climbs out of the workspace, a symlink loop as the checkpoint path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ari_mem_tui.checkpoint.load import load_checkpoint


@pytest.fixture
def run_copy(small_ckpt: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "ckpt"
    shutil.copytree(small_ckpt, dest)
    return dest


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _problems(ckpt) -> str:
    return "\n".join(p.line() for p in ckpt.problems)


def test_a_half_written_tree_keeps_its_first_nodes(run_copy: Path) -> None:
    tree = run_copy / "tree.json"
    whole = json.loads(tree.read_text())
    total = len(whole["nodes"])
    text = tree.read_text()
    sixth = json.dumps({"id": whole["nodes"][5]["id"]})[1:-1]  # '"id": "node_…"'
    cut = text.index(sixth) + len(sixth)  # inside the 6th node's own record
    tree.write_text(text[:cut])
    (run_copy / "nodes_tree.json").unlink()
    ckpt = load_checkpoint(run_copy)
    assert len(ckpt.nodes) == 5 < total
    assert "salvaged the first 5 nodes" in _problems(ckpt)
    assert ckpt.entries  # the backup is still read
    proc = cli("summary", str(run_copy))
    assert proc.returncode == 0 and "salvaged the first 5 nodes" in proc.stdout
    assert "no tree.json" not in proc.stdout


def test_a_byte_order_mark_is_accepted(run_copy: Path) -> None:
    tree = run_copy / "tree.json"
    tree.write_bytes(b"\xef\xbb\xbf" + tree.read_bytes())
    (run_copy / "nodes_tree.json").unlink()
    ckpt = load_checkpoint(run_copy)
    assert ckpt.tree_source == "tree.json" and len(ckpt.nodes) == 8


@pytest.mark.parametrize("kind", ["fifo", "directory", "dev-zero"])
def test_no_regular_file_in_its_place_is_named_and_never_opened(run_copy: Path, kind: str) -> None:
    log = run_copy / "memory_access.jsonl"
    log.unlink()
    if kind == "fifo":
        os.mkfifo(log)
    elif kind == "directory":
        log.mkdir()
    else:
        log.symlink_to("/dev/zero")
    proc = cli("summary", str(run_copy))  # a FIFO opened for reading would hang: timeout
    assert proc.returncode == 0, proc.stderr
    assert "memory_access.jsonl" in proc.stdout and "skipped it, unread" in proc.stdout


def test_a_run_id_that_climbs_out_is_not_followed(run_copy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "traces"
    outside.mkdir(parents=True)
    (outside / "memory_access.jsonl").write_text(
        '{"ts": 1.0, "node_id": "intruder", "op": "read", "query": "x"}\n'
    )
    tree = run_copy / "tree.json"
    doc = json.loads(tree.read_text())
    doc["run_id"] = "../../elsewhere"
    tree.write_text(json.dumps(doc))
    ckpt = load_checkpoint(run_copy)
    assert all(e.node_id != "intruder" for e in ckpt.access_events)
    assert "is not a plain folder name" in _problems(ckpt)


def test_a_symlink_loop_as_the_checkpoint_is_one_line(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    proc = cli("summary", str(loop))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_node_ids_as_people_type_them(small_ckpt: Path) -> None:
    from ari_mem_tui.model import NodeRefError

    ckpt = load_checkpoint(small_ckpt)
    child = next(nid for nid in ckpt.nodes if nid not in ckpt.roots)
    short = child[-8:]
    assert ckpt.resolve_node(short) == child  # suffix (the short id the tree shows)
    assert ckpt.resolve_node(short[:6].upper()) == child  # substring, any case
    root = ckpt.roots[0]
    assert ckpt.resolve_node(root[:12]) == root  # prefix
    typo = short[:3] + ("0" if short[3] != "0" else "1") + short[4:]
    with pytest.raises(NodeRefError, match=f"did you mean {child}"):
        ckpt.resolve_node(typo)
    with pytest.raises(NodeRefError, match="matches .* nodes: .*give more of the id"):
        ckpt.resolve_node("node_")


def test_a_mistyped_command_names_the_command(small_ckpt: Path) -> None:
    proc = cli("summry", str(small_ckpt))
    assert proc.returncode == 2
    assert "unknown command 'summry': did you mean 'summary'?" in proc.stderr
