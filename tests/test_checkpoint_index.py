"""The persistent index: a reopen of unchanged files equals a fresh load, a changed file is read
again, and nothing is ever written into the checkpoint."""

from __future__ import annotations

import json

import pytest
from checkpoint_helpers import (
    T0,
    chain_tree,
    dir_fingerprint,
    read_event,
    scope,
    write_access,
    write_backup,
    write_event,
    write_tree,
)

from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint import cow, index, trace_log
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.model import Entries
from ari_mem_tui.model.columns import Groups, Texts

COW = "node_id does not match current node (CoW violation)"


@pytest.fixture
def index_root(tmp_path, monkeypatch):
    root = tmp_path / "index-root"
    monkeypatch.setenv(index.INDEX_ENV, str(root))
    return root


def _run(path):
    nodes = chain_tree()
    nodes[1]["trace_log"] = [
        '→ add_memory({"node_id": "root", "text": "t"})',
        '  ← {\'result\': \'{"ok": false, "error": "' + COW + "\"}'}",
    ]
    nodes[1]["surprise"] = {"kept": ["as", "extra"]}
    write_tree(path, nodes, run_id="20260101000000_x")
    write_backup(path, [scope("a", "alpha", T0 + 10, {"step": 1}), "not json"])
    write_access(
        path,
        [
            write_event(T0 + 10.5, "a", "p1", "alpha", {"step": 1}),
            {**read_event(T0 + 20, "a", "inherit:get_node_memory", ["root"]), "pid": 7},
        ],
    )
    return path


def _same(fresh, again):
    assert again.write_counts() == fresh.write_counts()  # before the CoW log is built
    assert again.rejected_writes() == fresh.rejected_writes()  # (stored: rows and order)
    assert dict(again.read_tool_calls()) == dict(fresh.read_tool_calls())
    for node_id in fresh.nodes:  # one node's rows, built alone, before the whole log
        assert again.node_writes(node_id) == fresh.writes_by_node.get(node_id, [])
    assert list(fresh.nodes) == list(again.nodes)
    for node_id, node in fresh.nodes.items():
        assert again.nodes[node_id].as_data() == node.as_data()
    assert again.entries == fresh.entries and again.access_events == fresh.access_events
    assert again.writes == fresh.writes and again.problems == fresh.problems
    assert again.core == fresh.core and again.roots == fresh.roots
    assert sorted(again.graph.edges) == sorted(fresh.graph.edges)
    assert (again.run_id, again.tree_source) == (fresh.run_id, fresh.tree_source)
    assert again.trace_call_count() == fresh.trace_call_count()
    assert again.trace_calls == fresh.trace_calls


def test_a_reopen_comes_from_the_index_and_equals_a_fresh_load(tmp_path, index_root):
    path = _run(tmp_path / "run")
    before = dir_fingerprint(path)
    fresh = load_checkpoint(path)
    first = load_checkpoint(path, use_index=True)
    [stored] = list(index_root.glob("*/index.bin"))
    assert index.load(path) is not None
    again = load_checkpoint(path, use_index=True)
    _same(fresh, first)
    _same(fresh, again)
    assert again.access_events[1].extra == {"pid": 7}
    assert any("not JSON" in p.why for p in again.problems)
    assert [w.accepted for w in again.writes] == [True, False]
    assert dir_fingerprint(path) == before  # the checkpoint is never written
    assert stored.stat().st_mode & 0o077 == 0


def test_ids_are_made_when_asked_for_and_kept_as_made(demo_ckpt, index_root, monkeypatch):
    """A first open makes no entry id it is not asked for (a SHA-1 per entry was a tenth of a
    10k load), and its index keeps those it was asked for; a reopen reads those, makes the
    others as a fresh load makes them, and looking many up makes them all once."""
    fresh = load_checkpoint(demo_ckpt)
    ids = fresh.entries.all_ids()
    first = load_checkpoint(demo_ckpt, use_index=True)
    known = first.entries.known_ids()
    # the load made only the ids it shows: a rejected write's log entry
    made = [row for row in range(len(ids)) if known is not None and known[row] is not None]
    assert len(made) <= len(first.rejected_writes()) < len(ids) // 10
    asked = [3, len(ids) // 2]
    assert [first.entries.id_at(row) for row in asked] == [ids[row] for row in asked]
    index.save(first, index.run_key(demo_ckpt, first.run_id))
    again = load_checkpoint(demo_ckpt, use_index=True)
    stored = again.entries.ids
    assert isinstance(stored, Texts)  # (from the index: those asked for, no other)
    assert [row for row in range(len(ids)) if stored[row] is not None] == sorted(made + asked)
    assert [again.entries.id_at(row) for row in (0, *asked, len(ids) - 1)] == [
        ids[0],
        *(ids[row] for row in asked),
        ids[-1],
    ]
    made = []
    all_ids = Entries.all_ids
    monkeypatch.setattr(Entries, "all_ids", lambda self: made.append(1) or all_ids(self))
    for row in range(0, len(ids), max(1, len(ids) // 300)):
        assert again.entries_by_id[ids[row]].row == row
    assert "no such id" not in again.entries_by_id
    assert len(made) == 1 and again.entries.all_ids() == ids


def test_a_reopen_reads_only_the_trace_logs_that_hold_what_the_audit_reads(
    demo_ckpt, index_root, monkeypatch
):
    """The index keeps which nodes' trace logs hold a call the loader reads (a read tool's, a
    refused write's) and the CoW log's rejected rows: an audit after a reopen reads those
    logs alone, and finds what the fresh load's audit finds."""
    fresh = load_checkpoint(demo_ckpt)
    expected = audit(fresh)
    load_checkpoint(demo_ckpt, use_index=True)
    read: list[str] = []
    scan = trace_log.some_trace_calls
    monkeypatch.setattr(
        trace_log, "some_trace_calls", lambda nodes, tools: read.extend(nodes) or scan(nodes, tools)
    )
    again = load_checkpoint(demo_ckpt, use_index=True)
    assert audit(again).as_data() == expected.as_data()
    calls = fresh.read_tool_calls()
    assert sorted(read) == sorted(node_id for node_id, kept in calls.items() if kept)
    assert 0 < len(read) < len(calls) and again.rejected_writes()


def test_a_changed_file_is_read_again(tmp_path, index_root):
    path = _run(tmp_path / "run")
    assert not index.is_current(path)
    trees: list = []
    load_checkpoint(path, use_index=True, on_tree=trees.append)
    assert index.is_current(path) and len(trees) == 1  # a fresh load shows its tree first
    load_checkpoint(path, use_index=True, on_tree=trees.append)
    assert len(trees) == 1  # the index gives the whole run at once: no tree alone
    with (path / "memory_access.jsonl").open("a") as out:
        out.write(json.dumps(read_event(T0 + 30, "b", "inherit:get_node_memory", ["a"])) + "\n")
    assert not index.is_current(path) and index.load(path) is None
    again = load_checkpoint(path, use_index=True)
    assert len(again.access_events) == 3
    assert len(load_checkpoint(path, use_index=True).access_events) == 3  # re-indexed
    (path / "idea.json").write_text("{}")  # a new file the loader may read
    assert index.load(path) is None


def test_same_size_rewrite_in_place_is_noticed(tmp_path, index_root):
    path = _run(tmp_path / "run")
    load_checkpoint(path, use_index=True)
    tree = path / "tree.json"
    data = tree.read_bytes()
    stat = tree.stat()
    tree.write_bytes(data.replace(b'"alpha', b'"omega') if b'"alpha' in data else data[::-1])
    import os

    os.utime(tree, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    assert index.load(path) is None


def test_index_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(index.INDEX_ENV, "off")
    monkeypatch.setenv(index.CACHE_ENV, str(tmp_path / "cache"))
    path = _run(tmp_path / "run")
    load_checkpoint(path, use_index=True)
    assert not (tmp_path / "cache").exists()


def test_a_damaged_index_is_ignored(tmp_path, index_root):
    path = _run(tmp_path / "run")
    load_checkpoint(path, use_index=True)
    [stored] = list(index_root.glob("*/index.bin"))
    stored.write_bytes(stored.read_bytes()[:100])
    assert index.load(path) is None
    assert len(load_checkpoint(path, use_index=True).entries) == 1


def test_one_nodes_cow_rows_built_alone_equal_the_whole_logs(demo_ckpt, index_root):
    fresh = load_checkpoint(demo_ckpt, use_index=True)  # writes the index
    alone = {node_id: fresh.node_writes(node_id) for node_id in fresh.nodes}
    reopened = load_checkpoint(demo_ckpt, use_index=True)
    assert index.load(demo_ckpt) is not None
    again = {node_id: reopened.node_writes(node_id) for node_id in reopened.nodes}
    assert "_pending_writes" in reopened.__dict__  # the whole log was never built
    whole = load_checkpoint(demo_ckpt).writes_by_node
    assert sum(map(len, alone.values())) == len(load_checkpoint(demo_ckpt).writes) > 0
    assert any(not row.accepted for rows in alone.values() for row in rows)
    for node_id in fresh.nodes:
        assert alone[node_id] == again[node_id] == whole.get(node_id, [])


def test_a_reopen_takes_the_entries_by_current_node_from_the_index(demo_ckpt, index_root):
    fresh = load_checkpoint(demo_ckpt, use_index=True)  # writes the index
    grouped = fresh.pending_writes().by_current_node
    reopened = load_checkpoint(demo_ckpt, use_index=True).pending_writes()
    assert reopened._current is not None  # stored: the first replay groups nothing
    assert list(reopened.by_current_node.items()) == list(grouped.items())
    assert sum(map(len, grouped.values())) > 0


def test_a_reopen_takes_the_entries_by_node_and_their_write_events_from_the_index(
    demo_ckpt, index_root, monkeypatch
):
    """What a reopened run's tree labels and first replay read (each node's entries, each
    entry's write event) comes off the index as the fresh load computed it, not again."""
    fresh = load_checkpoint(demo_ckpt, use_index=True)  # writes the index
    reopened = load_checkpoint(demo_ckpt, use_index=True)
    monkeypatch.setattr(cow, "joined_rows", lambda *_: pytest.fail("computed again"))
    assert isinstance(reopened.entries._by_node, Groups)
    for node_id in fresh.nodes:
        assert reopened.entries_by_node.rows(node_id) == fresh.entries_by_node.rows(node_id)
        assert reopened.entries.rows_of_node(reopened.strings.find(node_id)) == (
            fresh.entries.rows_of_node(fresh.strings.find(node_id))
        )
    assert sum(len(fresh.entries_by_node.rows(n)) for n in fresh.nodes) > 0
    joined, expected = reopened.pending_writes().joined, fresh.pending_writes().joined
    assert list(joined._rows) == list(expected._rows) and max(expected._rows) >= 0


def test_an_index_handed_over_is_written_only_when_run(tmp_path, index_root):
    path = _run(tmp_path / "run")
    jobs: list = []
    fresh = load_checkpoint(path, use_index=True, defer_index=jobs.append)
    assert len(jobs) == 1 and not index.is_current(path)
    assert jobs[0]() and index.is_current(path)
    _same(fresh, load_checkpoint(path, use_index=True))


def test_the_tui_writes_a_fresh_loads_index_when_it_chooses(tmp_path, index_root):
    from ari_mem_tui.run import RunOptions, open_run

    path = _run(tmp_path / "run")
    options = RunOptions(checkpoint=path, embedder="bm25", index_behind=True)
    run = open_run(options)
    assert run.save_index is not None and not index.is_current(path)  # not written yet
    assert run.save_index() and index.is_current(path)
    again = open_run(options)
    assert again.save_index is None  # read from the index: nothing to write
    assert [e.id for e in again.checkpoint.entries] == [e.id for e in run.checkpoint.entries]
    assert open_run(RunOptions(checkpoint=path, embedder="bm25")).save_index is None


def test_a_reopened_runs_trace_logs_outlive_a_rewritten_index(tmp_path, index_root):
    """Trace logs of a reopen are views into the mapped index, read when asked for: the index
    rewritten meanwhile (a follow reload) must not change what the open run shows."""
    path = _run(tmp_path / "run")
    fresh = load_checkpoint(path)
    load_checkpoint(path, use_index=True)
    shown = load_checkpoint(path, use_index=True)
    [stored] = list(index_root.glob("*/index.bin"))
    inode = stored.stat().st_ino
    assert index.save(fresh, index.run_key(path, None))  # a new file, renamed over the old
    assert stored.stat().st_ino != inode
    stored.unlink()
    for node_id, node in fresh.nodes.items():
        assert shown.nodes[node_id].trace_log == node.trace_log
    assert any(node.trace_log for node in shown.nodes.values())


def test_the_watched_files_are_every_top_file_each_node_tree_and_the_access_logs(tmp_path):
    """What a run's keys stat (index.watched): the top level's files (a dangling link too: its
    stat fails, and that is in the key), node_*/tree.json where one exists (through a linked
    folder too), the access logs; not the folders, nor files deeper down."""
    run = tmp_path / "run"
    (run / "node_a").mkdir(parents=True)
    (run / "node_a" / "tree.json").write_text("{}")
    (run / "node_b").mkdir()  # no tree.json in it
    (run / "node_b" / "other.json").write_text("{}")
    (run / "elsewhere").mkdir()
    (run / "elsewhere" / "tree.json").write_text("{}")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "tree.json").write_text("{}")
    (run / "node_c").symlink_to(tmp_path / "linked")
    (run / "node_file").write_text("a file named like a node folder")
    (run / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("tree.json", "memory_access.jsonl", "memory_access.1.jsonl"):
        (run / name).write_text("{}")
    got = [str(p.relative_to(run)) for p in index.watched(run, None)]
    assert got == [
        "dangling",
        "memory_access.1.jsonl",
        "memory_access.jsonl",
        "node_a/tree.json",
        "node_c/tree.json",
        "node_file",
        "tree.json",
    ]
