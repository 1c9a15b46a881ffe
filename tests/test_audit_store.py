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
    real = workers.audit
    monkeypatch.setattr(workers, "audit", lambda c: audited.append(c) or real(c))

    app = make_app(tiny, open_useful=True)  # the first open: audits, keeps it after the hits
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == expected.node_id
        first_rows = list(app.audit_pane.audit_rows)
        first_marks = dict(app.tree_widget.findings)
    assert len(audited) == 1
    assert _kept(tiny).is_file()

    app = make_app(tiny, open_useful=True)  # the reopen: the kept audit, no audit at all
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert len(audited) == 1
        assert app.current_id == expected.node_id
        assert app.tree_pane.opening_reason == expected.reason
        assert app.query_one("#hits-pane").replay.node_id == expected.node_id
        assert app.audit_pane.audit_rows == first_rows
        assert app.tree_widget.findings == first_marks and first_marks
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
    real = workers.audit
    monkeypatch.setattr(workers, "audit", lambda c: audited.append(c) or real(c))
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
    real = workers.audit
    monkeypatch.setattr(
        workers, "audit", lambda c: shown_when_audited.append(app.run_data is not None) or real(c)
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
        assert app.tree_widget.findings  # its marks came with it
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
