"""A run at a glance (issue 33, item 3): the sealed summary kept beside a run's index, made on
its first open (the CLI once the answer is out) or by `runs --scan` for runs never opened, in
parallel; what `runs` and the picker show per run, checked against the commands that count the
same things (`audit --json`, `health --json`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hostile_helpers import run_cli
from workspace_helpers import copies_as_runs, rewrite_log, starve_one

from ari_mem_tui import run_summary
from ari_mem_tui.checkpoint import index


@pytest.fixture
def workspace(tmp_path: Path, small_ckpt: Path) -> Path:
    """Three copies of the small run as a workspace; the second with one starved node."""
    ckpts = tmp_path / "ws" / "checkpoints"
    copies_as_runs(small_ckpt, ckpts)
    rewrite_log(ckpts / "20260102000000_run1", starve_one)
    return tmp_path / "ws"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        index.INDEX_ENV: str(tmp_path / "index"),
        "ARI_MEM_TUI_CACHE": str(tmp_path / "cache"),
        "ARI_MEM_TUI_CONFIG_DIR": str(tmp_path / "config"),
    }


def _summaries(workspace: Path, env: dict[str, str], *extra: str) -> dict[str, dict | None]:
    proc = run_cli("runs", str(workspace), "--json", *extra, env=env)
    assert proc.returncode == 0, proc.stderr
    return {run["folder"]: run["summary"] for run in json.loads(proc.stdout)["runs"]}


def test_a_first_open_keeps_the_summary_the_commands_agree_with(workspace, env) -> None:
    run = workspace / "checkpoints" / "20260102000000_run1"
    assert set(_summaries(workspace, env).values()) == {None}  # none opened yet
    proc = run_cli("summary", str(run), "--json", env=env)  # a first open: made once it answered
    assert proc.returncode == 0, proc.stderr
    found = _summaries(workspace, env)
    summary = found.pop(run.name)
    assert set(found.values()) == {None}  # only the run opened
    audit = json.loads(run_cli("audit", str(run), "--json", env=env).stdout)
    health = json.loads(run_cli("health", str(run), "--json", "--embedder", "bm25", env=env).stdout)
    assert health["starved"] == 1 and health["replayed"] == 0  # every search recorded
    assert summary["starved"] == health["starved"]
    assert summary["judged"] == health["searched"] and summary["unjudged"] == 0
    for key in ("leaks", "scope_violations", "rejected_writes", "unattributed"):
        assert summary[key] == len(audit[key]), key
    assert summary["leaks"] > 0 and summary["rejected_writes"] > 0  # (the run's planted ones)
    counts = json.loads(proc.stdout)["counts"]
    assert (summary["nodes"], summary["entries"]) == (counts["nodes"], counts["entries"])
    assert summary["replay_checked"] is None  # unchecked: no replay check kept
    table = run_cli("runs", str(workspace), env={**env, "COLUMNS": "100"}).stdout
    row = next(line for line in table.splitlines() if run.name in line).split()
    assert row[1:] == ["8", "2", "1", "1", "1", "unchecked"]  # nodes, leaks … replay
    assert "2 runs not summarized yet (runs --scan)" in " ".join(table.split())


def test_runs_scan_makes_the_missing_summaries_in_parallel(workspace, env, monkeypatch) -> None:
    first = workspace / "checkpoints" / "20260101000000_run0"
    assert run_cli("audit", str(first), env=env).returncode == 1  # findings: it is summarized
    made_by_open = _summaries(workspace, env)[first.name]
    proc = run_cli("runs", str(workspace), "--scan", "--jobs", "2", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("run summaries: 0 of 2 runs")
    assert "run summaries: 2 of 2 runs (100%)" in lines[-2]
    assert lines[-1] == "ari-mem-tui: made the summaries of 2 runs"
    scanned = {run["folder"]: run["summary"] for run in json.loads(proc.stdout)["runs"]}
    assert _summaries(workspace, env) == scanned  # kept: the next listing reads them
    assert scanned["20260102000000_run1"]["starved"] == 1
    assert scanned["20260103000000_run2"]["starved"] == 0
    for summary in scanned.values():
        summary.pop("made")
    made_by_open.pop("made")
    assert scanned[first.name] == made_by_open  # the open's, untouched by the scan
    assert scanned["20260103000000_run2"] == made_by_open  # the same files, the same summary
    # no run index written by the scan (a thousand runs' would fill the cache)
    monkeypatch.setenv(index.INDEX_ENV, env[index.INDEX_ENV])
    indexed = [name for name in scanned if index.is_current(workspace / "checkpoints" / name)]
    assert indexed == [first.name]
    again = run_cli("runs", str(workspace), "--scan", env=env)
    assert "made the summaries" not in again.stderr  # nothing left to make


def test_a_changed_file_is_no_summary(workspace, env, monkeypatch) -> None:
    run = workspace / "checkpoints" / "20260103000000_run2"
    run_cli("summary", str(run), env=env)
    monkeypatch.setenv(index.INDEX_ENV, env[index.INDEX_ENV])
    assert run_summary.kept(run) is not None
    log = run / "memory_access.jsonl"
    data, before = log.read_bytes(), log.stat()
    log.write_bytes(data.replace(b'"op": "read"', b'"op": "READ"', 1))  # same size
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the mtime put back
    assert log.stat().st_size == before.st_size
    assert run_summary.kept(run) is None  # (its ctime moved: no one can set that back)


async def test_the_tui_keeps_the_summary_once_its_first_hits_are_shown(
    small_ckpt, tmp_path, index_root
) -> None:
    """The TUI's first open makes the summary after the first hits, with the audit it made
    (tui/main_screen.py's audit worker): the same counts the CLI's first open keeps."""
    from tests.tui_app_helpers import make_app, settle

    run = Path(shutil.copytree(small_ckpt, tmp_path / "run"))
    assert run_summary.kept(run) is None
    app = make_app(run)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(250):
            if run_summary.kept(run) is not None:
                break
            await pilot.pause(0.02)
    kept = run_summary.kept(run)
    assert kept is not None
    counts = (kept.nodes, kept.leaks, kept.scope_violations, kept.rejected_writes, kept.starved)
    assert counts == (8, 2, 1, 1, 0)
    assert kept.replay_checked is None  # (BM25 is a stand-in: its check compares nothing)


def test_a_check_made_by_other_replay_rules_reads_unchecked(workspace, env, monkeypatch) -> None:
    """GIVEN a kept summary holding a replay check WHEN the search code that made the check
    changed (an update of the replay's rules) THEN the counts stand and the check is None."""
    from types import SimpleNamespace

    from ari_mem_tui.search import check_store

    run = workspace / "checkpoints" / "20260103000000_run2"
    run_cli("summary", str(run), env=env)
    monkeypatch.setenv(index.INDEX_ENV, env[index.INDEX_ENV])
    check = SimpleNamespace(checked=7, reproduced=6, word="not reproduced", ranker="run:m")
    assert run_summary.note_check(run, check)
    kept = run_summary.kept(run)
    assert (kept.replay_checked, kept.replay_reproduced) == (7, 6)
    assert (kept.replay_word, kept.replay_ranker) == ("not reproduced", "run:m")
    table = " ".join(run_cli("runs", str(workspace), env={**env, "COLUMNS": "100"}).stdout.split())
    assert "6/7" in table.split()
    assert "replay: recorded searches reproduced / checked, replayed by run:m (1 run)" in table
    monkeypatch.setattr(check_store, "_source_key", "other replay rules")
    again = run_summary.kept(run)
    assert (again.replay_checked, again.replay_reproduced) == (None, None)
    assert (again.replay_word, again.replay_ranker) == ("", "")
    assert (again.nodes, again.leaks, again.starved) == (kept.nodes, kept.leaks, kept.starved)


async def test_the_picker_names_the_ranker_behind_its_replay_column(workspace, env, monkeypatch):
    """The picker shows `runs`' legend: a count of reproduced searches means nothing without
    what replayed them."""
    from types import SimpleNamespace

    from tests.test_tui_runs import workspace_app
    from tests.tui_app_helpers import idle

    run = workspace / "checkpoints" / "20260103000000_run2"
    run_cli("summary", str(run), env=env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    check = SimpleNamespace(checked=7, reproduced=6, word="not reproduced", ranker="run:m")
    assert run_summary.note_check(run, check)
    app = workspace_app(workspace)
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        legend = str(app.screen.query_one("#runs-legend").render())
    assert legend.splitlines() == [
        "· 2 runs not summarized yet (runs --scan)",
        "replay: recorded searches reproduced / checked, replayed by run:m (1 run)",
    ]
