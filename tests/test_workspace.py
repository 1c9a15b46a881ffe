"""A whole workspace: runs found under it (or its checkpoints/ folder), listed newest first."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from checkpoint_helpers import T0, dir_fingerprint, scope, write_backup
from workspace_helpers import RUNS, make_workspace

from ari_mem_tui import workspace
from ari_mem_tui.cli import main


@pytest.fixture(autouse=True)
def _own_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(workspace.CONFIG_ENV, str(tmp_path / "config"))


def test_a_workspace_lists_its_runs_newest_first_with_their_numbers(tmp_path):
    ws = workspace.scan(make_workspace(tmp_path / "ws"))
    assert ws.kind == "workspace"
    assert [r.run_id for r in ws.runs] == list(reversed(RUNS))
    third, second, first = ws.runs
    assert (first.nodes, first.completed, first.failed, first.running, first.entries) == (
        5,
        3,
        1,
        1,
        2,
    )
    assert (second.nodes, second.entries) == (1, None)
    assert (third.nodes, third.entries) == (4, 7)
    assert first.created_source == "run_id"
    assert first.size == sum(
        p.stat().st_size for p in (tmp_path / "ws/checkpoints" / RUNS[0]).iterdir()
    )
    assert first.last_change is not None and ws.where == [str(tmp_path / "ws/checkpoints")]


def test_the_checkpoints_folder_itself_lists_the_same_runs(tmp_path):
    make_workspace(tmp_path / "ws")
    ws = workspace.scan(tmp_path / "ws" / "checkpoints")
    assert [r.run_id for r in ws.runs] == list(reversed(RUNS))


def test_one_run_is_a_run_and_a_plain_folder_is_neither(tmp_path):
    make_workspace(tmp_path / "ws")
    one = workspace.scan(tmp_path / "ws" / "checkpoints" / RUNS[1])
    assert one.kind == "run" and one.runs[0].nodes == 1
    (tmp_path / "empty").mkdir()
    none = workspace.scan(tmp_path / "empty")
    assert none.kind == "none" and "neither an ARI run" in none.message
    assert "\n" not in none.message


def test_listing_is_read_only_and_counts_are_cached_until_a_file_changes(tmp_path):
    root = make_workspace(tmp_path / "ws")
    before = dir_fingerprint(root)
    workspace.scan(root)
    assert dir_fingerprint(root) == before
    cache = workspace.CountCache.load()
    path = root / "checkpoints" / RUNS[2]
    assert cache.get(path).entries == 7
    write_backup(path, [scope("root", "only", T0)])
    os.utime(path / "memory_backup.jsonl.gz", ns=(1, 1))  # a new mtime, whatever the clock
    assert workspace.CountCache.load().get(path) is None
    assert workspace.scan(root).runs[0].entries == 1


def test_recent_runs_are_remembered_in_the_config_dir(tmp_path):
    root = make_workspace(tmp_path / "ws")
    older, newer = (root / "checkpoints" / name for name in RUNS[:2])
    assert workspace.remember_run(older, when=100.0)
    assert workspace.remember_run(newer, when=200.0)
    assert workspace.remember_run(older, when=300.0)  # opened again: first, once
    assert [r["path"] for r in workspace.recent_runs()] == [str(older), str(newer)]
    stored = json.loads((tmp_path / "config" / "recent.json").read_text())
    assert len(stored["runs"]) == 2
    ws = workspace.scan(root)
    assert {r.run_id: r.recent for r in ws.runs}[RUNS[0]] == 300.0
    assert {r.run_id: r.recent for r in ws.runs}[RUNS[2]] is None


def test_a_broken_recent_file_is_no_recent_runs(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "recent.json").write_text("{not json")
    assert workspace.recent_runs() == []


def test_cli_runs_json_and_text(capsys, tmp_path):
    root = make_workspace(tmp_path / "ws")
    assert main(["runs", str(root), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in data["runs"]] == list(reversed(RUNS))
    assert data["runs"][2]["failed"] == 1
    assert main(["runs", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.index(RUNS[2]) < out.index(RUNS[1]) < out.index(RUNS[0])


def test_cli_runs_in_a_narrow_terminal_says_which_columns_it_left_out(
    capsys, tmp_path, monkeypatch
):
    root = make_workspace(tmp_path / "ws")
    left_out = {
        80: "created, done, failed, entries, size, last change: in a wider terminal",
        120: "created, size, last change: in a wider terminal",
        170: None,
    }
    for columns, words in left_out.items():
        monkeypatch.setenv("COLUMNS", str(columns))
        assert main(["runs", str(root)]) == 0
        out = capsys.readouterr().out
        lines = out.splitlines()
        header = next(line for line in lines if line.split()[:1] == ["run"])
        assert ("last change" in header) is (words is None)
        assert ("entries" in header) is (columns > 110)
        assert all(
            c in header for c in ("nodes", "leaks", "scope", "rejected", "starved", "replay")
        )
        assert words is None or words in " ".join(out.split())
        rows = [line for line in lines if any(run[:14] in line for run in RUNS)]
        assert len(rows) == len(RUNS)
        for row in rows:  # times whole with their zone where shown; no count or time cut
            times = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", row)
            assert len(times) == (2 if words is None else 0), row
            assert "…" not in row[row.index("  ") :], row  # (only the run's name is cut)
        if columns > 80:  # (at 80 columns a long path wraps, at a space)
            assert lines[0].endswith("newest first")  # not padded to the table's width


def test_cli_runs_of_a_folder_without_runs_is_one_line_and_exit_2(capsys, tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "readme.txt").write_text("hi")
    assert main(["runs", str(tmp_path / "plain")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither an ARI run" in err


def test_cli_runs_without_a_folder_lists_the_recent_runs(capsys, tmp_path):
    root = make_workspace(tmp_path / "ws")
    workspace.remember_run(root / "checkpoints" / RUNS[1], when=5.0)
    assert main(["runs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in data["runs"]] == [RUNS[1]]
