"""A run read into columns gives the same answers however it was read.

Four ways to open the same run, each through the real CLI (`summary`, `saw`, `audit`,
`health`, all `--json`):
- fresh: from its files, with no run index;
- first: from its files, writing the index;
- reopened: from the index, its columns mapped (twice: the second is the one a user meets);
- objects: every line through the lenient per-line readers (a dict per line, checked value by
  value, as the loader read every line before it decoded straight into columns) and the tree
  through the full JSON reader (no undecoded trace logs).
Runs: demo runs, the hand-made fixture runs of the checkpoint tests, and damaged copies of the
small demo (test_audit_same_report builds both).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from test_audit_same_report import FIXTURES, _damaged

from ari_mem_tui.checkpoint import access_log, backup, index, tree
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.cli import main
from ari_mem_tui.demo import write_demo

COMMANDS: list[list[str]] = [
    ["summary", "{run}", "--json"],
    ["audit", "{run}", "--json"],
    ["health", "{run}", "--json", "--embedder", "bm25"],
]


REFUSED: list[bytes] = []  # the lines the "objects" opening sent to the lenient readers


def _refuse(raw: bytes) -> None:
    REFUSED.append(raw)
    raise msgspec.ValidationError("the lenient reader, please")


def _outputs(
    run: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, how: str
) -> list[tuple[int, dict]]:
    """Every command's exit code and JSON, the run opened `how`."""
    with monkeypatch.context() as patch:
        if how in ("fresh", "objects"):
            patch.setenv(index.INDEX_ENV, "off")
        if how == "objects":
            patch.setattr(access_log, "_typed_line", _refuse)
            patch.setattr(backup, "_typed_record", _refuse)
            patch.setattr(access_log, "_typed_lines", lambda _batch, _known: None)  # (by line)
            patch.setattr(backup, "_typed_records", lambda _batch: None)
            patch.setattr(tree, "fast_tree_document", lambda _path, _scan=None: None)
        nodes = list(load_checkpoint(run).nodes)
        picked = [nodes[0], nodes[len(nodes) // 2], nodes[-1]] if nodes else []
        commands = COMMANDS + [
            ["saw", "{run}", node, "--json", "--embedder", "bm25"] for node in picked
        ]
        out = []
        for command in commands:
            code = main([arg.replace("{run}", str(run)) for arg in command])
            text = capsys.readouterr().out
            out.append((code, json.loads(text) if text.strip() else {}))
    return out


def assert_same_outputs(
    run: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = _outputs(run, capsys, monkeypatch, "fresh")
    assert fresh[0][0] == 0 and fresh[0][1]["counts"]["nodes"] > 0
    REFUSED.clear()
    assert _outputs(run, capsys, monkeypatch, "objects") == fresh
    assert REFUSED  # (it did read them the other way)
    assert not index.is_current(run)
    assert _outputs(run, capsys, monkeypatch, "first") == fresh  # (summary writes the index)
    assert index.is_current(run)
    assert _outputs(run, capsys, monkeypatch, "reopened") == fresh
    assert _outputs(run, capsys, monkeypatch, "reopened") == fresh


@pytest.fixture(autouse=True)
def _index_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "index-root"
    monkeypatch.setenv(index.INDEX_ENV, str(root))
    return root


@pytest.mark.parametrize(
    ("nodes", "seed", "entries"), [(8, 1, None), (40, 7, None), (60, 11, 3000)]
)
def test_same_outputs_on_demo_runs(tmp_path, capsys, monkeypatch, nodes, seed, entries) -> None:
    run = write_demo(tmp_path / "demo", nodes=nodes, seed=seed, entries=entries)
    assert_same_outputs(run, capsys, monkeypatch)


@pytest.mark.parametrize("name", list(FIXTURES))
def test_same_outputs_on_fixture_runs(tmp_path, capsys, monkeypatch, name) -> None:
    make: Callable[[Path], Path] = FIXTURES[name]
    assert_same_outputs(make(tmp_path / name), capsys, monkeypatch)


@pytest.mark.parametrize("how", ["half-tree", "bom", "long-int-line"])
def test_same_outputs_on_damaged_runs(tmp_path, capsys, monkeypatch, small_ckpt, how) -> None:
    assert_same_outputs(_damaged(small_ckpt, tmp_path / how, how), capsys, monkeypatch)
