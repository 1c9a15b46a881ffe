"""Exporting a dossier (`e`): both halves or neither, and names that never collide."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_tui_units import sample_replay

from ari_mem_tui.model import Checkpoint, Node
from ari_mem_tui.render import dossier
from ari_mem_tui.render.dossier import NAME_CHARS, dossier_paths, export_dossier

IDS = ["a/b", "a b", "a_b", "A_b", "a\\b", "../a_b", "x" * 300 + "1", "x" * 300 + "2", "ノード"]


def _ckpt(tmp_path: Path) -> Checkpoint:
    ckpt = Checkpoint(path=tmp_path / "ckpt", run_id="run/1")
    ckpt.path.mkdir()
    for node_id in IDS:
        ckpt.nodes[node_id] = Node(id=node_id, status="success")
    return ckpt


def _replay(node_id: str):
    return sample_replay().replaced(node_id=node_id)


def test_every_id_gets_its_own_two_files(tmp_path: Path) -> None:
    ckpt, out = _ckpt(tmp_path), tmp_path / "out"
    written = [export_dossier(ckpt, _replay(node_id), out) for node_id in IDS]
    names = [path.name for pair in written for path in pair]
    assert len(set(names)) == len(names) == 2 * len(IDS)
    assert len({name.lower() for name in names}) == len(names)  # case-insensitive disks too
    assert sorted(p.name for p in out.iterdir()) == sorted(names)  # nothing else, all in out/
    for node_id, (md_path, json_path) in zip(IDS, written, strict=True):
        assert json.loads(json_path.read_text())["replay"]["node_id"] == node_id
        assert md_path.stem == json_path.stem and len(md_path.name) < 200
        assert "/" not in md_path.name and md_path.parent == out.resolve()
    assert "a_b-" in written[2][0].name  # the readable part stays
    assert len(written[6][0].name) < 2 * NAME_CHARS + 50  # a long id is cut, kept unique


def test_a_second_export_replaces_only_its_own_files(tmp_path: Path) -> None:
    ckpt, out = _ckpt(tmp_path), tmp_path / "out"
    first = export_dossier(ckpt, _replay("a/b"), out)
    other = export_dossier(ckpt, _replay("a_b"), out)
    before = {p: p.read_bytes() for p in other}
    first[0].write_text("stale")
    again = export_dossier(ckpt, _replay("a/b"), out)
    assert again == first and first[0].read_text() != "stale"
    assert {p: p.read_bytes() for p in other} == before
    assert len(list(out.iterdir())) == 4


@pytest.mark.parametrize("failing", [1, 2])
def test_a_failed_export_leaves_neither_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    ckpt, out = _ckpt(tmp_path), tmp_path / "out"
    out.mkdir()
    calls = {"n": 0}
    real_replace = os.replace

    def flaky(src, dst):
        calls["n"] += 1
        if calls["n"] == failing:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(dossier.os, "replace", flaky)
    with pytest.raises(OSError):
        export_dossier(ckpt, _replay("a b"), out)
    assert list(out.iterdir()) == []  # no half, no temporary file


def test_a_failed_write_leaves_neither_half(tmp_path: Path, monkeypatch) -> None:
    ckpt, out = _ckpt(tmp_path), tmp_path / "out"

    def broken(*_args, **_kwargs):
        raise RuntimeError("the JSON half cannot be made")

    monkeypatch.setattr(dossier, "json_text", broken)
    with pytest.raises(RuntimeError):
        export_dossier(ckpt, _replay("a b"), out)
    assert not out.exists() or list(out.iterdir()) == []
    md_path, json_path = dossier_paths(ckpt, "a b", out)
    assert not md_path.exists() and not json_path.exists()
