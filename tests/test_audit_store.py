"""The audit kept beside the run index (audit.AuditStore): a reopen of unchanged files gets the
audit a fresh one gives, any change (a file, the code, the stored bytes) is a miss that audits
again, and the TUI opens a reopened run on its first finding without auditing first."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from tui_app_helpers import app_with, blocking_opener, make_app, press, settle, wait_for
from tui_helpers import IDS, append_node

from ari_mem_tui import audit as audit_module
from ari_mem_tui.audit import STORE_FILE, AuditStore, audit, findings_by_node
from ari_mem_tui.checkpoint import cachefile, index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.opening import opening_node
from ari_mem_tui.run import RunOptions, open_run
from ari_mem_tui.tui import workers


def _kept(path: Path) -> Path:
    folder = index.index_dir(path)
    assert folder is not None
    return folder / STORE_FILE


def _open(path: Path):
    return open_run(RunOptions(checkpoint=path, rank=False))


def test_a_kept_audit_is_the_audit_of_the_files(tiny: Path, index_root: Path) -> None:
    run = _open(tiny)
    fresh = audit(run.checkpoint)
    assert fresh.leaks or fresh.scope_violations or fresh.rejected_writes  # something to keep
    assert run.audit_store.load(run.checkpoint) is None  # nothing kept yet
    assert run.audit_store.save(run.checkpoint, fresh)
    again = _open(tiny)  # from the index now
    kept = again.audit_store.load(again.checkpoint)
    assert kept == fresh
    assert kept == audit(again.checkpoint)
    assert findings_by_node(kept) == findings_by_node(fresh)


def test_a_changed_file_or_rule_is_audited_again(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _open(tiny)
    assert run.audit_store.save(run.checkpoint, audit(run.checkpoint))
    monkeypatch.setattr(audit_module, "_source_key", lambda: "another audit rule")
    again = _open(tiny)
    assert again.audit_store.load(again.checkpoint) is None
    monkeypatch.undo()
    monkeypatch.setenv(index.INDEX_ENV, str(index_root))
    append_node(tiny, "node_c0000001")  # tree.json changes
    changed = _open(tiny)
    assert changed.audit_store.load(changed.checkpoint) is None
    assert "node_c0000001" in changed.checkpoint.nodes


def test_files_changed_during_the_load_keep_nothing(tiny: Path, index_root: Path) -> None:
    store = AuditStore.before_load(tiny)
    ckpt = load_checkpoint(tiny)
    append_node(tiny, "node_c0000002")  # after the load began: the audit is of older files
    assert not store.save(ckpt, audit(ckpt))
    assert not _kept(tiny).exists()


def test_a_run_loaded_before_its_files_changed_gets_no_newer_audit(
    tiny: Path, index_root: Path
) -> None:
    store = AuditStore.before_load(tiny)
    older = load_checkpoint(tiny)
    append_node(tiny, "node_c0000004")
    newer = _open(tiny)
    assert newer.audit_store.save(newer.checkpoint, audit(newer.checkpoint))
    assert store.load(older) is None  # the kept audit is of the newer files
    assert newer.audit_store.load(newer.checkpoint) is not None


@pytest.mark.parametrize("damage", ["flip", "cut", "foreign", "fifo"])
def test_a_damaged_kept_audit_is_a_miss_said_once(
    tiny: Path, index_root: Path, damage: str
) -> None:
    run = _open(tiny)
    assert run.audit_store.save(run.checkpoint, audit(run.checkpoint))
    kept = _kept(tiny)
    data = kept.read_bytes()
    if damage == "flip":
        kept.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif damage == "cut":
        kept.write_bytes(data[: len(data) // 2])
    elif damage == "foreign":  # sealed, but of another kind
        kept.write_bytes(cachefile.seal("bm25-manifest", data.partition(b"\n")[2]))
    else:
        kept.unlink()
        os.mkfifo(kept)
    cachefile.take_notes()
    again = _open(tiny)
    assert again.audit_store.load(again.checkpoint) is None
    notes = cachefile.take_notes()
    assert len(notes) == 1 and "kept audit" in notes[0] and str(kept) in notes[0]


def test_no_store_without_indexes(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(index.INDEX_ENV, "off")
    assert _open(tiny).audit_store is None
    assert open_run(RunOptions(checkpoint=tiny, rank=False, index=False)).audit_store is None


# ---- the TUI ----


async def test_a_reopen_opens_on_the_first_finding_without_auditing_first(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ckpt = load_checkpoint(tiny)
    expected = opening_node(ckpt, findings_by_node(audit(ckpt)))
    audited: list[object] = []
    real = audit_module.audit
    monkeypatch.setattr(audit_module, "audit", lambda c: audited.append(c) or real(c))

    app = make_app(tiny, open_useful=True)  # the first open: audits, keeps it after the hits
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == expected.node_id
        first_rows = list(app.main.audit_pane.audit_rows)
        first_marks = dict(app.main.tree_widget.findings)
    assert len(audited) == 1
    assert _kept(tiny).is_file()

    app = make_app(tiny, open_useful=True)  # the reopen: the kept audit, no audit at all
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert len(audited) == 1
        assert app.current_id == expected.node_id
        assert app.main.tree_pane.opening_reason == expected.reason
        assert app.query_one("#hits-pane").replay.node_id == expected.node_id
        assert app.main.audit_pane.audit_rows == first_rows
        assert app.main.tree_widget.findings == first_marks and first_marks
        await press(pilot, "j")  # keys work as ever
        assert app.current_id != expected.node_id
    assert len(audited) == 1


async def test_a_reopen_of_changed_files_audits_before_choosing(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(tiny, open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
    assert _kept(tiny).is_file()
    append_node(tiny, "node_c0000003", parent_key="A")
    audited: list[object] = []
    real = audit_module.audit
    monkeypatch.setattr(audit_module, "audit", lambda c: audited.append(c) or real(c))
    app = make_app(tiny, open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert len(audited) == 1  # the kept audit was of other files
        assert "node_c0000003" in app.ckpt.nodes
        fresh = load_checkpoint(tiny)
        assert app.current_id == opening_node(fresh, findings_by_node(audit(fresh))).node_id
        assert app.current_id != IDS["R"]


async def test_a_user_who_moves_while_it_loads_gets_hits_before_the_audit(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first open audits before showing the run only to open on the first finding: a user
    who has chosen a node in the tree meanwhile gets that node's hits first, the audit after."""
    release, blocked = threading.Event(), threading.Event()
    app = app_with(blocking_opener(tiny, release, blocked), open_useful=True)
    shown_when_audited: list[bool] = []
    real = audit_module.audit
    monkeypatch.setattr(
        audit_module,
        "audit",
        lambda c: shown_when_audited.append(app.run_data is not None) or real(c),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await wait_for(pilot, lambda: app.tree_ckpt is not None and blocked.is_set())
            for key in ("j", "j", "l", "l"):  # B, expand, B1: as a person, a key at a time
                await pilot.press(key)
                await pilot.pause()
            assert app.run_data is None and app.current_id == IDS["B1"]
        finally:
            release.set()
        await settle(pilot)
        assert app.current_id == IDS["B1"]  # not moved to the first finding
        assert app.query_one("#hits-pane").replay.node_id == IDS["B1"]
        assert shown_when_audited == [True]  # audited once, after the run was on screen
        assert app.main.tree_widget.findings  # its marks came with it
    assert _kept(tiny).is_file()  # and it is kept for the next open


async def test_a_user_who_went_back_to_the_root_still_opens_on_the_first_finding(
    tiny: Path, index_root: Path
) -> None:
    ckpt = load_checkpoint(tiny)
    expected = opening_node(ckpt, findings_by_node(audit(ckpt))).node_id
    release, blocked = threading.Event(), threading.Event()
    app = app_with(blocking_opener(tiny, release, blocked), open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await wait_for(pilot, lambda: app.tree_ckpt is not None and blocked.is_set())
            for key in ("j", "k"):  # down and back up to the root
                await pilot.press(key)
                await pilot.pause()
        finally:
            release.set()
        await settle(pilot)
        assert app.current_id == expected


async def test_the_audit_table_waits_for_the_first_hits_unless_shown(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's findings mark the tree and count in the status bar at once; the Audit tab's
    table is filled once the first hits are in, or when the tab is shown before them."""
    from textual.widgets import DataTable

    release = threading.Event()
    real = workers.replay_node

    def held(app, run, key) -> None:
        release.wait(10)
        real(app, run, key)

    monkeypatch.setattr(workers, "replay_node", held)
    for shown_first in (False, True):
        release.clear()
        app = make_app(tiny, open_useful=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.run_data is not None, "the run")  # noqa: B023
            hits, pane = app.query_one("#hits-pane"), app.main.audit_pane
            table = app.query_one("#audit-table", DataTable)
            await pilot.pause()
            assert pane.audit_rows and app.main.tree_widget.findings
            problems = app.main.status_bar.query_one("#status-problems")
            assert "finding" in str(problems.render())
            assert hits.replay is None and table.row_count == 0
            if shown_first:
                await pilot.press("6")
                await wait_for(pilot, lambda: table.row_count > 0, "the shown table")  # noqa: B023
                assert hits.replay is None
            release.set()
            await settle(pilot)
            if shown_first:
                await pilot.press("1")  # back to the Hits tab, drawn when shown
            await wait_for(pilot, lambda: hits.replay is not None, "the hits")  # noqa: B023
            assert table.row_count == len(pane.ui_problems + pane.audit_rows)


# ---- the CLI ----


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str]:
    from ari_mem_tui.cli import main

    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("form", [["--json"], []])
def test_the_cli_audit_keeps_its_audit_and_prints_the_same_from_it(
    tiny: Path, index_root: Path, monkeypatch: pytest.MonkeyPatch, capsys, form: list[str]
) -> None:
    audited: list[object] = []
    real = audit_module.audit
    monkeypatch.setattr(audit_module, "audit", lambda c: audited.append(c) or real(c))
    first = _cli(capsys, "audit", str(tiny), *form)  # audits, and keeps it
    assert len(audited) == 1 and _kept(tiny).is_file()
    assert first[0] == 1 and first[1]  # (tiny's findings: exit 1)
    again = _cli(capsys, "audit", str(tiny), *form)
    assert len(audited) == 1  # the kept audit, not another
    assert again == first  # byte for byte, and the same exit code
    append_node(tiny, "node_c0000005")  # a file changed: the kept audit is not of it
    changed = _cli(capsys, "audit", str(tiny), *form)
    assert len(audited) == 2
    monkeypatch.setenv(index.INDEX_ENV, "off")
    assert _cli(capsys, "audit", str(tiny), *form) == changed  # as a run with no index gives
    assert len(audited) == 3
