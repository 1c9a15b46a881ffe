"""The run index is a file of ours, but anything can end up in its place: a FIFO, a symlink to
/dev/zero, a sparse 2 GiB file, a flipped bit, another run's body under this run's header, a file
someone else could write. Each is a miss: the run is read from its files, the same answer as a
fresh load, the index written again, and the user is told once (the next open, from the
rebuilt index, says nothing). Nothing is ever written into the checkpoint. Every input is built
here, from the small demo run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from checkpoint_helpers import dir_fingerprint

from ari_mem_tui.checkpoint import cachefile, index
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.render.summary import summary_json


@pytest.fixture
def run(tmp_path: Path, small_ckpt: Path) -> Path:
    return Path(shutil.copytree(small_ckpt, tmp_path / "run"))


@pytest.fixture
def index_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "index-root"
    monkeypatch.setenv(index.INDEX_ENV, str(root))
    return root


def _stored(run: Path) -> Path:
    load_checkpoint(run, use_index=True)  # writes it
    folder = index.index_dir(run)
    assert folder is not None and (folder / index.INDEX_FILE).is_file()
    assert index.load(run) is not None
    return folder / index.INDEX_FILE


def _notes() -> list[str]:
    return [note for note in cachefile.take_notes() if note.startswith("run index")]


def assert_miss_rebuilt_said_once(run: Path, why: str) -> None:
    """The next open reads the files (the same run as a fresh load) and says why once; the one
    after comes from the rebuilt index and says nothing."""
    fresh = load_checkpoint(run)
    before = dir_fingerprint(run)
    cachefile.take_notes()
    damaged = load_checkpoint(run, use_index=True)
    [note] = _notes()
    assert why in note and note.endswith(": rebuilt"), note
    assert summary_json(damaged) == summary_json(fresh)
    assert damaged.entries == fresh.entries and damaged.access_events == fresh.access_events
    assert index.load(run) is not None  # rebuilt
    again = load_checkpoint(run, use_index=True)
    assert _notes() == []
    assert summary_json(again) == summary_json(fresh)
    assert dir_fingerprint(run) == before  # the checkpoint is never written


def _section(stored: Path, name: str) -> tuple[int, int]:
    """(offset in the file, size) of the section `name`."""
    fd = os.open(stored, os.O_RDONLY)
    try:
        header, start = index._read_header(fd)
    finally:
        os.close(fd)
    [(offset, size)] = [(o, n) for s, o, n, _ in header.sections if s == name]
    return start + offset, size


@pytest.mark.parametrize("name", ["e.text", "e.ts", "v.how", "v.joined", "r.entry_id", "body"])
def test_a_flipped_bit_in_any_section_is_a_miss(run, index_root, name) -> None:
    stored = _stored(run)
    offset, size = _section(stored, name)
    data = bytearray(stored.read_bytes())
    data[offset + size // 2] ^= 0x10
    stored.write_bytes(bytes(data))
    assert_miss_rebuilt_said_once(run, "does not match its checksum")


def _header_place(stored: Path) -> tuple[int, int]:
    fd = os.open(stored, os.O_RDONLY)
    try:
        return index.header_place(fd)
    finally:
        os.close(fd)


def test_a_flipped_bit_in_the_header_is_a_miss(run, index_root) -> None:
    stored = _stored(run)
    at, size = _header_place(stored)
    data = bytearray(stored.read_bytes())
    data[at + size // 2] ^= 0x01  # inside the header (before its size, CRC and magic)
    stored.write_bytes(bytes(data))
    assert_miss_rebuilt_said_once(run, "header")


def test_another_runs_body_under_this_runs_header_is_a_miss(tmp_path, run, index_root) -> None:
    """The other run is this one with one event's time changed (same sizes, so the same
    layout): its index body under this run's header would give its times here."""
    other = Path(shutil.copytree(run, tmp_path / "other"))
    log = other / "memory_access.jsonl"
    first, rest = log.read_text(encoding="utf-8").split("\n", 1)
    ts = json.loads(first)["ts"]
    later = f"{ts + 0.25:.6f}"
    assert len(later) == len(f"{ts:.6f}") and f"{ts:.6f}" in first
    log.write_text(first.replace(f"{ts:.6f}", later, 1) + "\n" + rest, encoding="utf-8")
    mine, theirs = _stored(run), _stored(other)
    at, _ = _header_place(mine)
    data = theirs.read_bytes()
    assert len(data) == mine.stat().st_size and _header_place(theirs)[0] == at  # same layout
    mine.write_bytes(data[:at] + mine.read_bytes()[at:])
    assert_miss_rebuilt_said_once(run, "does not match its checksum")


def test_a_cut_short_index_is_a_miss(run, index_root) -> None:
    stored = _stored(run)
    stored.write_bytes(stored.read_bytes()[: stored.stat().st_size // 2])
    assert_miss_rebuilt_said_once(run, "cut short")


def test_a_sparse_index_past_the_limit_is_not_read(run, index_root, monkeypatch) -> None:
    stored = _stored(run)
    at, _ = _header_place(stored)
    data = stored.read_bytes()
    with stored.open("r+b") as handle:  # 2 GiB, sparse: its header is still the run's, and sound
        handle.truncate(at)
        handle.seek(2 << 30)
        handle.write(data[at:])
    read: list[int] = []
    real_preadv = os.preadv
    monkeypatch.setattr(
        os, "preadv", lambda fd, bufs, at: read.append(real_preadv(fd, bufs, at)) or read[-1]
    )
    assert_miss_rebuilt_said_once(run, "over ")
    # none of its 2 GiB read: refused by its size alone (only the rebuilt index is read back)
    assert sum(read) < 3 * stored.stat().st_size < 64 << 20


def test_an_index_others_could_write_is_a_miss(run, index_root) -> None:
    stored = _stored(run)
    stored.chmod(0o666)
    assert_miss_rebuilt_said_once(run, "not written by this user alone")
    assert stored.stat().st_mode & 0o077 == 0


def _summary_cli(run: Path, env: dict[str, str]) -> tuple[int, dict, str]:
    """`summary --json` in a child: a hang (a FIFO read) ends the test, not the suite."""
    proc = subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "summary", str(run), "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("what", ["fifo", "symlink-to-fifo", "symlink-to-dev-zero", "directory"])
def test_no_regular_file_in_its_place_is_a_miss_that_never_blocks(
    tmp_path, run, index_root, what
) -> None:
    stored = _stored(run)
    stored.unlink()
    if what == "fifo":
        os.mkfifo(stored)
    elif what == "symlink-to-fifo":
        os.mkfifo(tmp_path / "fifo")
        stored.symlink_to(tmp_path / "fifo")
    elif what == "symlink-to-dev-zero":
        stored.symlink_to("/dev/zero")
    else:
        stored.mkdir()
    code, data, err = _summary_cli(run, {index.INDEX_ENV: str(index_root)})
    assert code == 0
    notes = [line for line in err.splitlines() if "run index" in line]
    assert len(notes) == 1 and notes[0].endswith(": rebuilt"), err
    code, data, err = _summary_cli(run, {index.INDEX_ENV: str(index_root)})
    assert code == 0 and "run index" not in err  # from the rebuilt index, without a word
    fresh = summary_json(load_checkpoint(run))
    assert data["counts"]["entries"] == fresh["counts"]["entries"] > 0
    assert data["counts"]["events"] == fresh["counts"]["events"]


def test_an_index_dir_inside_the_checkpoint_is_never_written(run, monkeypatch) -> None:
    monkeypatch.setenv(index.INDEX_ENV, str(run / "cache" / "index"))
    before = dir_fingerprint(run)
    cachefile.take_notes()
    load_checkpoint(run, use_index=True)
    assert dir_fingerprint(run) == before and not (run / "cache").exists()
    assert index.load(run) is None and _notes() == []


def test_a_stale_index_is_rebuilt_without_a_word(run, index_root) -> None:
    """A changed file is the index's normal end, not damage: nothing to say."""
    _stored(run)
    with (run / "memory_access.jsonl").open("a", encoding="utf-8") as log:
        log.write("\n")
    cachefile.take_notes()
    assert index.load(run) is None
    load_checkpoint(run, use_index=True)
    assert _notes() == [] and index.load(run) is not None


# ---- issue 31, item 4: values msgpack has no word for ----

BIG = 2**70  # past both int64 and uint64: msgpack holds neither


def _tree_edit(run: Path, edit) -> None:
    for name in ("tree.json", "nodes_tree.json"):
        document = json.loads((run / name).read_text(encoding="utf-8"))
        edit(document["nodes"])
        (run / name).write_text(json.dumps(document), encoding="utf-8")


def test_integers_past_64_bits_and_surrogate_keys_are_indexed(run, index_root) -> None:
    """A metric of 2**70, a `limit` of 2**70 and a metric named by a lone surrogate once left
    the run unindexed without a word (msgpack refused the body): every open a full parse."""

    def plant(nodes: list[dict]) -> None:
        nodes[1]["metrics"] = {"cycles": BIG, "bad \udc00 name": 1}
        nodes[2]["retry_count"] = BIG

    _tree_edit(run, plant)
    log = run / "memory_access.jsonl"
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    read = next(event for event in events if event["op"] == "read")
    read["limit"] = -BIG
    log.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    fresh = load_checkpoint(run)
    load_checkpoint(run, use_index=True)
    again = index.load(run)
    assert again is not None  # indexed
    node = list(again.nodes.values())[1]
    assert node.metrics == {"cycles": BIG, "bad \udc00 name": 1}
    assert list(again.nodes.values())[2].retry_count == BIG
    assert [e.limit for e in again.access_events if e.limit == -BIG] == [-BIG]
    assert summary_json(again) == summary_json(fresh)
    for node_id, fresh_node in fresh.nodes.items():
        assert again.nodes[node_id].as_data() == fresh_node.as_data()


def test_lone_surrogate_texts_are_indexed(small_ckpt, tmp_path, index_root) -> None:
    """Issue 31 item 4: a lone surrogate in a memory text, a trace_log line and a node id
    (msgpack's strings are UTF-8) once left the run unindexed without a word."""
    from test_hostile_strings import TEXT_TAIL, TRACE, with_surrogates

    run, node_id = with_surrogates(small_ckpt, tmp_path / "surrogates")
    fresh = load_checkpoint(run)
    load_checkpoint(run, use_index=True)
    again = index.load(run)
    assert again is not None  # indexed
    assert node_id in again.nodes
    assert any(TRACE in node.trace_log for node in again.nodes.values())
    tails = [e.text for e in fresh.entries if e.text.endswith(TEXT_TAIL)]
    assert tails and [e.text for e in again.entries if e.text.endswith(TEXT_TAIL)] == tails


# ---- issue 31, item 9: the key covers every byte of the files read whole ----


def test_an_edit_in_the_middle_of_a_big_tree_with_its_mtime_put_back_is_a_new_key(
    run, index_root
) -> None:
    """The key once hashed 64 KiB at each end of a file: an edit of the same size in between,
    with the mtime put back, gave the old eval_summary from the index."""
    pad = "p" * (100 << 10)

    def padded(nodes: list[dict]) -> None:
        nodes[0]["error_log"], nodes[-1]["error_log"] = pad, pad  # the edit: > 64 KiB from each end
        nodes[3]["eval_summary"] = "speedup 1.42x on the big matrix"

    _tree_edit(run, padded)
    tree = run / "tree.json"
    data = tree.read_bytes()
    at = data.index(b"speedup 1.42x")
    assert 64 << 10 < at < len(data) - (64 << 10)
    load_checkpoint(run, use_index=True)
    assert index.load(run) is not None
    before = tree.stat()
    tree.write_bytes(data.replace(b"speedup 1.42x", b"speedup 9.42x"))
    os.utime(tree, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert tree.stat().st_size == before.st_size and tree.stat().st_mtime_ns == before.st_mtime_ns
    assert index.load(run) is None  # another key
    again = load_checkpoint(run, use_index=True)
    node = list(again.nodes.values())[3]
    assert node.eval_summary == "speedup 9.42x on the big matrix"
    assert index.load(run) is not None  # and indexed again, with the new bytes


def test_an_edit_that_keeps_the_hash_is_a_new_key_by_its_ctime(run, index_root, monkeypatch):
    """XXH3 is not a cryptographic hash: a same-size edit crafted to keep it (stood in for by
    a hash that never changes) is still another key, as the edit moved the file's ctime."""
    monkeypatch.setattr(index, "_whole_hash", lambda _handle, _info: "all:kept")
    index._hashed.clear()
    load_checkpoint(run, use_index=True)
    assert index.load(run) is not None
    tree = run / "tree.json"
    data, before = tree.read_bytes(), tree.stat()
    tree.write_bytes(data.replace(b'"', b'"', 1))  # the same bytes, written again
    os.utime(tree, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert tree.stat().st_ctime_ns != before.st_ctime_ns
    assert index.load(run) is None


# ---- issue 31, item 8: a writer killed half-way leaves its temporary file ----

DIES_HALF_WAY = """
import os, signal, sys
from pathlib import Path
from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.load import load_checkpoint
real = index._write
def dies(folder, key, run_id, sections):
    def cut():
        for number, section in enumerate(sections):
            if number == 6:  # after six sections are on disk: kill -9
                os.kill(os.getpid(), signal.SIGKILL)
            yield section
    real(folder, key, run_id, cut())
index._write = dies
load_checkpoint(Path(sys.argv[1]), use_index=True)
"""


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(index.TEMP_PREFIX))


def test_a_writer_killed_half_way_leaves_a_file_the_next_open_removes(
    tmp_path, run, index_root
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DIES_HALF_WAY, str(run)],
        check=False,
        env={**os.environ, index.INDEX_ENV: str(index_root)},
        timeout=120,
    )
    assert proc.returncode == -9
    folder = index.index_dir(run)
    assert folder is not None and not (folder / index.INDEX_FILE).exists()
    [left] = _leftovers(folder)
    assert (folder / left).stat().st_size > 0
    # not ours: another name, and a link (to a file that must stay) under one of our names
    (folder / "notes.txt").write_text("keep")
    (tmp_path / "target").write_text("keep")
    (folder / (index.TEMP_PREFIX + "link")).symlink_to(tmp_path / "target")
    again = load_checkpoint(run, use_index=True)
    assert _leftovers(folder) == [index.TEMP_PREFIX + "link"]
    assert (tmp_path / "target").read_text() == "keep" == (folder / "notes.txt").read_text()
    assert index.load(run) is not None  # and the index written whole
    assert summary_json(again) == summary_json(load_checkpoint(run))


def _locked_with_a_temporary_file(run: Path, name: str) -> tuple[Path, int]:
    """The run indexed, a writer's temporary file `name` in its folder, and the folder's lock
    held (as a writer at work holds it): the temporary file and the lock's descriptor."""
    import fcntl

    load_checkpoint(run, use_index=True)
    folder = index.index_dir(run)
    assert folder is not None
    temporary = folder / (index.TEMP_PREFIX + name)
    temporary.write_bytes(b"being written")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return temporary, fd


def test_a_live_writers_temporary_file_is_left_alone(run, index_root) -> None:
    """Only a dead writer's file is stale: while the lock is held, nothing goes."""
    live, fd = _locked_with_a_temporary_file(run, "live")  # a writer at work
    try:
        assert index.sweep(run, patience=0.05) == 0
        assert index.load(run) is not None and live.exists()
    finally:
        os.close(fd)
    assert index.sweep(run) == 1 and not live.exists()


def test_an_open_waits_for_a_writer_at_work_then_sweeps_what_it_left(run, index_root) -> None:
    """A writer at work (a command's detached writer) is waited for, not raced: its index is
    read rather than the files again."""
    import threading

    left, fd = _locked_with_a_temporary_file(run, "dies")
    done: list[str] = []

    def writer_ends() -> None:
        time.sleep(0.3)
        done.append("released")
        os.close(fd)  # (the lock goes with its last descriptor)

    thread = threading.Thread(target=writer_ends)
    thread.start()
    try:
        assert index.sweep(run) == 1  # waited, then the writer's leftover was stale
        assert done == ["released"] and not left.exists()
    finally:
        thread.join()


def test_no_file_inside_a_checkpoint_is_ever_swept(run, monkeypatch) -> None:
    inside = run / "cache" / "index"
    monkeypatch.setenv(index.INDEX_ENV, str(inside))
    import hashlib

    folder = inside / hashlib.sha1(os.path.realpath(run).encode()).hexdigest()
    folder.mkdir(parents=True)
    planted = folder / (index.TEMP_PREFIX + "abc")
    planted.write_bytes(b"the checkpoint's own")
    load_checkpoint(run, use_index=True)
    assert index.sweep(run) == 0 and planted.read_bytes() == b"the checkpoint's own"


def _cannot_store(_ckpt):
    raise OverflowError("int too big")
    yield  # (a generator, as _sections is)


@pytest.mark.parametrize(
    ("part", "stand_in", "why"),
    [
        ("_sections", _cannot_store, "a value it cannot store: OverflowError"),
        ("size_limit", lambda _key: (4096, "a limit"), "it would be over its size limit (a limit)"),
    ],
)  # fmt: skip
def test_an_index_not_written_is_said_once_with_its_cost(run, index_root, monkeypatch, part,
                                                         stand_in, why):  # fmt: skip
    """A value the index cannot store (a bug of ours, or a type no one foresaw) or an index
    over its size limit was a silent full parse on every open; each is said like a cache that
    cannot be written, with what the open cost."""
    from ari_mem_tui.checkpoint.cachefile import take_notes

    monkeypatch.setattr(index, part, stand_in)
    take_notes()
    ckpt = load_checkpoint(run, use_index=True)
    folder = index.index_dir(run)
    (note,) = [n for n in take_notes() if n.startswith("run index")]
    assert note.startswith(
        f"run index cannot be cached in {folder} ({why}): every open of the run reads its files ("
    ), note
    assert note.endswith(" s this time)") and ckpt.nodes
    assert index.load(run) is None and not (folder / index.INDEX_FILE).exists()
    assert not list(folder.glob(".index-*"))


def test_the_size_limit_counts_every_readable_file_of_the_key(run, index_root) -> None:
    """The index's size limit is what its run can need: every readable file of the key (the
    backup as it may decompress) twice, and 64 MiB. When the key's shape grew (its ctime), it
    counted no file at all: a 10k-node run's index was over 64 MiB and never written."""
    from ari_mem_tui.checkpoint.limits import current

    files = index.watched(run, None)
    total = sum(
        current().gzip_allowed(p.stat().st_size) if p.name.endswith(".gz") else p.stat().st_size
        for p in files
    )
    assert total > 0 and any(p.name.endswith(".gz") for p in files)
    assert index.size_limit(index.run_key(run, None)) == (
        2 * total + 64 * 2**20,
        "what its run can need",
    )
