"""The tool's own caches and settings, damaged or replaced: a miss that is rebuilt, said once.

Issue 22 §1, and issue 30 §5's one format (checkpoint/cachefile.py: sealed msgpack). Each case
builds the damage in the test (a FIFO, a symlink to /dev/zero, a flipped byte, a foreign body
under a good checksum, nesting 100,000 deep, another user's file) in a cache dir of its own,
runs the real command in a child process (`HANG_S` is only there to turn a hang into a failure)
and checks the exit code, the one line that says what was rebuilt, that the answer is the same
as with a sound cache, that the next run is silent, and that nothing was written into the run.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import msgspec
import numpy as np
import pytest

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.search import bm25_cache, vector_cache
from ari_mem_tui.search.vector_cache import Segment, VectorCache
from ari_mem_tui.tui import config
from ari_mem_tui.workspace import COUNTS_FILE, COUNTS_KIND, recent_runs
from tests.hostile_helpers import (
    bare_peak_mib,
    clean_stderr,
    fingerprint,
    run_cli,
    run_measured,
)

DIM = 4
KEY = "a" * 40
NOBODY = 65534  # another user: the files are chowned to it (the tests run as root)


def saw_bm25(ckpt: Path, cache: Path) -> tuple[int, dict, str]:
    proc = run_cli(
        "saw", str(ckpt), "9755", "--json", "--embedder", "bm25", "--no-letta",
        env={"ARI_MEM_TUI_CACHE": str(cache)},
    )  # fmt: skip
    clean_stderr(proc.stderr)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else {}, proc.stderr


def hit_ids(result: dict) -> list[str]:
    return [h["entry_id"] for h in result["hits"]]


def bm25_file(cache: Path) -> Path:
    (path,) = (cache / "bm25").iterdir()
    return path


@pytest.fixture
def demo_copy(small_ckpt: Path, tmp_path: Path) -> Path:
    """The small demo under a name `saw … 9755` resolves (its node node_9755d4c1)."""
    dest = tmp_path / "run"
    shutil.copytree(small_ckpt, dest)
    assert any(
        n["id"].endswith("9755d4c1") for n in json.loads((dest / "tree.json").read_text())["nodes"]
    )
    return dest


# ---------------------------------------------------------------- BM25 index
def damage_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def damage_dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def damage_flipped_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x10
    path.write_bytes(bytes(data))


def repacked_bm25(path: Path, change) -> None:
    """The stored index decoded, changed by `change`, and packed again: its checksum holds,
    only its contents are hostile."""
    stored = cachefile.unpack(path.read_bytes(), bm25_cache.KIND, bm25_cache.Stored)
    path.write_bytes(cachefile.pack(bm25_cache.KIND, change(stored)))


def damage_foreign_pool(path: Path) -> None:
    """Another pool's index under this key: the checksum holds, the arrays do not describe
    this pool (a row past its last text)."""

    def row_past_the_end(stored):
        indices = np.frombuffer(stored.indices, dtype=stored.dtypes[1]).copy()
        indices[0] = 10**6
        return msgspec.structs.replace(stored, indices=memoryview(indices.tobytes()))

    repacked_bm25(path, row_past_the_end)


def damage_another_key(path: Path) -> None:
    repacked_bm25(path, lambda stored: msgspec.structs.replace(stored, key="0" * 40))


def damage_word_past_the_end(path: Path) -> None:
    """A query word mapped to the last column pointer (the empty token's): its postings would
    end past the array (an IndexError at the first query that holds it)."""

    def last_id(stored):
        vocab = dict(stored.vocab)
        word = next(w for w, i in vocab.items() if w and i == 0)
        vocab[word] = len(stored.indptr) // np.dtype(stored.dtypes[2]).itemsize - 1
        return msgspec.structs.replace(stored, vocab=vocab)

    repacked_bm25(path, last_id)


def damage_another_user(path: Path) -> None:
    os.chown(path, NOBODY, NOBODY)


BM25_DAMAGE = {
    "fifo": (damage_fifo, "it is a FIFO"),
    "dev-zero": (damage_dev_zero, "it is a device"),
    "flipped-byte": (damage_flipped_byte, "checksum does not match"),
    "foreign-pool": (damage_foreign_pool, "do not describe an index of this pool"),
    "another-key": (damage_another_key, "the index of another pool"),
    "word-past-the-end": (damage_word_past_the_end, "do not describe an index of this pool"),
    "another-user": (damage_another_user, "not written by this user alone"),
}


@pytest.mark.parametrize("case", list(BM25_DAMAGE))
def test_a_damaged_bm25_index_is_rebuilt_and_said_once(
    demo_copy: Path, tmp_path: Path, case: str
) -> None:
    cache = tmp_path / "cache"
    code, sound, err = saw_bm25(demo_copy, cache)
    assert code == 0 and "BM25 index" not in err
    before = fingerprint(demo_copy)
    damage, why = BM25_DAMAGE[case]
    damage(bm25_file(cache))
    code, again, err = saw_bm25(demo_copy, cache)
    assert code == 0, err
    assert hit_ids(again) == hit_ids(sound)  # the same answer, from the rebuilt index
    lines = [line for line in err.splitlines() if "BM25 index" in line]
    assert len(lines) == 1 and why in lines[0] and lines[0].endswith(": rebuilt"), err
    code, third, err = saw_bm25(demo_copy, cache)
    assert code == 0 and "BM25 index" not in err  # repaired: silent from then on
    assert hit_ids(third) == hit_ids(sound)
    assert fingerprint(demo_copy) == before


def test_a_bm25_index_on_dev_zero_costs_no_memory(
    demo_copy: Path, tmp_path: Path, small_ckpt: Path
) -> None:
    cache = tmp_path / "cache"
    assert saw_bm25(demo_copy, cache)[0] == 0
    damage_dev_zero(bm25_file(cache))
    env = {"ARI_MEM_TUI_CACHE": str(cache)}
    m = run_measured("saw", str(demo_copy), "9755", "--embedder", "bm25", "--no-letta", env=env)
    assert m.returncode == 0 and "it is a device" in m.stderr
    assert m.peak_mib < bare_peak_mib(small_ckpt) + 256, m.peak_mib  # was 18 GB in 47 s


# ---------------------------------------------------------------- run counts
def workspace_of(small_ckpt: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "checkpoints").mkdir(parents=True)
    shutil.copytree(small_ckpt, ws / "checkpoints" / "20260528191903_run")
    return ws


def runs_json(ws: Path, cache: Path) -> tuple[int, dict, str]:
    proc = run_cli("runs", str(ws), "--json", env={"ARI_MEM_TUI_CACHE": str(cache)})
    clean_stderr(proc.stderr)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else {}, proc.stderr


def counts_of(listing: dict) -> list[tuple]:
    return [(r["nodes"], r["completed"], r["failed"], r["entries"]) for r in listing["runs"]]


def sealed(body: bytes) -> bytes:
    """A run-counts file whose checksum holds: only its contents are hostile."""
    return cachefile.seal(COUNTS_KIND, body)


def entries_399(path: Path) -> None:
    """398 entries made 399 in the packed body (msgpack: the key, then uint16 398)."""
    data = path.read_bytes()
    assert data.count(b"\xa7entries\xcd\x01\x8e") == 1
    path.write_bytes(data.replace(b"\xa7entries\xcd\x01\x8e", b"\xa7entries\xcd\x01\x8f"))


COUNTS_DAMAGE = {
    "fifo": (lambda p: os.mkfifo(p), "it is a FIFO"),
    "dev-zero": (lambda p: p.symlink_to("/dev/zero"), "it is a device"),
    "flipped-byte": (entries_399, "checksum does not match"),
    "old-unsealed": (lambda p: p.write_text('{"version": 1, "runs": {}}'), "not a sealed file"),
    "old-kind": (  # the JSON body of the version before
        lambda p: p.write_bytes(cachefile.seal("run-counts/2", b'{"runs": {}}')),
        "holds 'run-counts/2', not 'run-counts/3'",
    ),
    "nested-100k": (
        lambda p: p.write_bytes(sealed(b"\x81\xa4runs" + b"\x91" * 100_000 + b"\x90")),
        "nested deeper than 100 levels",
    ),
    "nested-150": (  # within msgspec's own limit: the tool's depth limit decides
        lambda p: p.write_bytes(sealed(b"\x81\xa4runs" + b"\x91" * 150 + b"\x90")),
        "nested deeper than 100 levels",
    ),
    "another-user": (lambda p: os.chown(p, NOBODY, NOBODY), "not written by this user alone"),
}


@pytest.mark.parametrize("case", list(COUNTS_DAMAGE))
def test_a_damaged_run_counts_cache_is_recounted_and_said_once(
    small_ckpt: Path, tmp_path: Path, case: str
) -> None:
    ws, cache = workspace_of(small_ckpt, tmp_path), tmp_path / "cache"
    code, sound, err = runs_json(ws, cache)
    assert code == 0 and counts_of(sound) == [(8, 3, 2, 398)], err
    before = fingerprint(ws)
    target = cache / COUNTS_FILE
    damage, why = COUNTS_DAMAGE[case]
    if case in ("fifo", "dev-zero"):
        target.unlink()
    damage(target)
    code, again, err = runs_json(ws, cache)
    assert code == 0 and counts_of(again) == counts_of(sound), err
    lines = [line for line in err.splitlines() if "run counts cache" in line]
    assert len(lines) == 1 and why in lines[0] and lines[0].endswith(": rebuilt"), err
    assert runs_json(ws, cache)[2] == ""  # rewritten whole: the next listing is silent
    assert fingerprint(ws) == before


def test_wrong_typed_counts_under_a_good_checksum_are_counted_again(
    small_ckpt: Path, tmp_path: Path
) -> None:
    ws, cache = workspace_of(small_ckpt, tmp_path), tmp_path / "cache"
    sound = runs_json(ws, cache)[1]
    target = cache / COUNTS_FILE
    data = msgspec.msgpack.decode(cachefile.unseal(target.read_bytes(), COUNTS_KIND))
    for row in data["runs"].values():
        row["counts"].update(nodes="eight", statuses=[1, 2], problems=[{"nope": 1}])
    target.write_bytes(sealed(msgspec.msgpack.encode(data)))
    code, again, err = runs_json(ws, cache)
    assert code == 0 and counts_of(again) == counts_of(sound), err


def test_run_counts_on_dev_zero_costs_no_memory(small_ckpt: Path, tmp_path: Path) -> None:
    ws, cache = workspace_of(small_ckpt, tmp_path), tmp_path / "cache"
    cache.mkdir()
    (cache / COUNTS_FILE).symlink_to("/dev/zero")
    m = run_measured("runs", str(ws), env={"ARI_MEM_TUI_CACHE": str(cache)})
    assert m.returncode == 0 and "it is a device" in m.stderr  # was a MemoryError
    assert m.peak_mib < bare_peak_mib(small_ckpt) + 256, m.peak_mib


# ---------------------------------------------------------------- vector segments
def good_segment(cache: VectorCache, keys: list[str]) -> None:
    cache.add(keys, np.ones((len(keys), DIM), np.float32))


def named_like_ours(folder: Path, data: bytes) -> Path:
    body = data.partition(b"\n")[2]
    path = folder / f"seg-{cachefile.checksum(body)}.vec"
    path.write_bytes(data)
    return path


def packed_segment(keys: bytes, dim: int, vecs: bytes) -> bytes:
    return cachefile.pack(vector_cache.KIND, Segment(memoryview(keys), dim, memoryview(vecs)))


def short_segment(folder: Path) -> Path:
    """A segment whose checksum holds but whose vectors are fewer than its keys."""
    data = packed_segment(bytes(20), DIM, bytes(4 * DIM - 4))
    return named_like_ours(folder, data)


def foreign_segment(folder: Path) -> Path:
    """A sound segment with a good checksum, but vectors of another width."""
    data = packed_segment(bytes(20), DIM + 1, np.zeros(DIM + 1, "<f4").tobytes())
    return named_like_ours(folder, data)


def nan_segment(folder: Path) -> Path:
    data = packed_segment(bytes(20), DIM, np.full(DIM, np.nan, "<f4").tobytes())
    return named_like_ours(folder, data)


def misnamed_segment(folder: Path) -> Path:
    """A sound segment of ours under another checksum's name (copied in from elsewhere)."""
    data = packed_segment(bytes(20), DIM, np.ones(DIM, "<f4").tobytes())
    path = folder / f"seg-{'c' * 64}.vec"
    path.write_bytes(data)
    return path


def another_users_segment(folder: Path) -> Path:
    path = named_like_ours(folder, packed_segment(bytes(20), DIM, np.ones(DIM, "<f4").tobytes()))
    os.chown(path, NOBODY, NOBODY)
    return path


def fifo_segment(folder: Path) -> Path:
    path = folder / f"seg-{'d' * 64}.vec"
    os.mkfifo(path)
    return path


def flipped_segment(folder: Path) -> Path:
    (seg,) = folder.glob("seg-*.vec")
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 1
    seg.write_bytes(bytes(data))
    return seg


def old_named_segment(folder: Path) -> Path:
    path = folder / "seg-0123.npz"  # as the segments of earlier versions were named
    path.write_bytes(b"x")
    return path


SEGMENT_DAMAGE = {
    "fifo": (fifo_segment, "it is a FIFO"),
    "short": (short_segment, "12 bytes of vectors for 1 keys"),
    "foreign-width": (foreign_segment, "5-dimensional rows, not 4"),
    "nan": (nan_segment, "NaN or infinite"),
    "misnamed": (misnamed_segment, "its name is not its checksum"),
    "another-user": (another_users_segment, "not written by this user alone"),
    "old-name": (old_named_segment, "older version"),
}


@pytest.mark.parametrize("case", list(SEGMENT_DAMAGE))
def test_a_bad_vector_segment_is_set_aside_and_said(tmp_path: Path, case: str) -> None:
    cache = VectorCache(tmp_path, "minilm", DIM)
    good_segment(cache, [KEY])
    make, why = SEGMENT_DAMAGE[case]
    bad = make(cache.dir)
    cachefile.take_notes()
    keys, matrix = cache.load()
    assert keys == [KEY] and matrix.shape == (1, DIM)  # the sound segment still counts
    notes = cachefile.take_notes()
    assert len(notes) == 1 and why in notes[0] and bad.name in notes[0], notes
    assert not bad.exists() and bad.with_name(bad.name + ".corrupt").exists()
    assert VectorCache(tmp_path, "minilm", DIM).load()[0] == [KEY]
    assert cachefile.take_notes() == []  # set aside once: nothing more to say


def test_a_flipped_bit_in_a_vector_segment_fails_its_checksum(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "minilm", DIM)
    good_segment(cache, [KEY])
    bad = flipped_segment(cache.dir)
    cachefile.take_notes()
    assert cache.load()[0] == []
    (note,) = cachefile.take_notes()
    assert "checksum does not match" in note and bad.name in note


def test_a_segment_over_cache_mib_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_CACHE_MIB", "1")
    cache = VectorCache(tmp_path, "minilm", DIM)
    big = cache.dir / f"seg-{'e' * 64}.vec"
    with big.open("wb") as handle:
        handle.truncate(2 << 20)  # sparse: costs no disk, and is never read
    cachefile.take_notes()
    assert cache.load()[0] == []
    (note,) = cachefile.take_notes()
    assert "over the 1 MiB limit" in note and "--max cache-mib=N" in note


def test_merged_segments_are_verifiable_and_lose_no_vector(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "minilm", DIM)
    keys = [f"{i:040x}" for i in range(40)]
    for i in range(0, 40, 2):  # 20 segments: past MERGE_ABOVE, merged on the next load
        good_segment(cache, keys[i : i + 2])
    assert sorted(cache.load()[0]) == keys
    merged = list(cache.dir.glob("seg-*.vec"))
    assert len(merged) == 1
    cachefile.take_notes()
    assert sorted(VectorCache(tmp_path, "minilm", DIM).load()[0]) == keys
    assert cachefile.take_notes() == []


# ---------------------------------------------------------------- settings and recent runs
HOSTILE_SETTINGS = {
    "fifo": (lambda p: os.mkfifo(p), "it is a FIFO"),
    "dev-zero": (lambda p: p.symlink_to("/dev/zero"), "it is a device"),
    "nested-100k": (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested deeper"),
    "too-big": (
        lambda p: p.write_text(json.dumps({"x": "y" * (2 << 20)})),
        "over the 1 MiB limit for a file read whole (raise it with --max config-kib=N",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_SETTINGS))
def test_a_hostile_config_file_gives_the_defaults_and_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    make, why = HOSTILE_SETTINGS[case]
    make(tmp_path / "config.json")
    cachefile.take_notes()
    assert config.load_settings() == config.Settings()
    assert config.load_settings() == config.Settings()
    notes = cachefile.take_notes()
    assert len(notes) == 1 and why in notes[0] and "defaults used" in notes[0], notes
    if case != "dev-zero":
        before = (tmp_path / "config.json").lstat()
        assert not config.save_setting("theme", "x")  # a file the user broke is left as it is
        after = (tmp_path / "config.json").lstat()
        assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)


@pytest.mark.parametrize("case", list(HOSTILE_SETTINGS))
def test_a_hostile_recent_list_is_no_recent_runs_and_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    make, why = HOSTILE_SETTINGS[case]
    make(tmp_path / "recent.json")
    cachefile.take_notes()
    assert recent_runs() == []
    (note,) = cachefile.take_notes()
    assert why in note and "started afresh" in note


def test_runs_without_a_folder_survives_a_fifo_recent_list(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    os.mkfifo(tmp_path / "config" / "recent.json")
    proc = run_cli("runs", env={config.CONFIG_ENV: str(tmp_path / "config")})
    assert proc.returncode == 0, proc.stderr
    assert "it is a FIFO" in proc.stderr and "no recently opened runs" in proc.stderr


async def test_the_tui_opens_with_defaults_on_a_fifo_config(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.tui_app_helpers import make_app, settle

    folder = tmp_path / "hostile-config"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    monkeypatch.setenv(config.CONFIG_ENV, str(folder))
    cachefile.take_notes()
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for _ in range(100):  # the notes are looked for every CACHE_NOTES_EVERY_S
            if any("it is a FIFO" in n.message for n in app._notifications):
                break
            await pilot.pause(0.05)
        toasts = [n.message for n in app._notifications]
        assert any("settings file" in t and "it is a FIFO" in t for t in toasts), toasts
        assert app.current_id is not None  # not blank: the run is shown


# ---------------------------------------------------------------- the demo's marker
def test_a_fifo_marker_in_the_demo_folder_is_refused_not_waited_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / ".ari_mem_tui_demo.json")
    proc = run_cli("demo", "--out", str(out), "--nodes", "3", "--recordings", "keywords")
    assert proc.returncode == 2, proc.stderr
    assert "is not a previous demo checkpoint" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [".ari_mem_tui_demo.json"]


# ---------------------------------------------------------------- a cache inside the run
@pytest.mark.parametrize(
    "command",
    [
        ("summary",),
        ("saw", "9755", "--embedder", "bm25"),
        ("audit",),
    ],
)
def test_a_cache_dir_inside_the_checkpoint_writes_nothing_there(
    demo_copy: Path, command: tuple[str, ...]
) -> None:
    before = fingerprint(demo_copy)
    env = {"ARI_MEM_TUI_CACHE": str(demo_copy / ".cache")}
    proc = run_cli(command[0], str(demo_copy), *command[1:], "--no-letta", env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode in (0, 1), proc.stderr  # audit: 1 for the demo's planted leak
    assert fingerprint(demo_copy) == before
    if command[0] == "saw":
        assert "is inside the checkpoint" in proc.stderr and "nothing is cached" in proc.stderr


def test_runs_with_the_cache_inside_a_run_writes_nothing_there(
    small_ckpt: Path, tmp_path: Path
) -> None:
    ws = workspace_of(small_ckpt, tmp_path)
    run = next((ws / "checkpoints").iterdir())
    before = fingerprint(ws)
    proc = run_cli("runs", str(ws), env={"ARI_MEM_TUI_CACHE": str(run / ".cache")})
    assert proc.returncode == 0, proc.stderr
    assert "is inside the checkpoint" in proc.stderr
    assert fingerprint(ws) == before


def test_a_sealed_file_names_what_is_wrong() -> None:
    body = b'{"runs": {}}'
    good = cachefile.seal("kind/1", body)
    assert cachefile.unseal(good, "kind/1") == body
    for data, why in (
        (good.replace(b"runs", b"rune"), "checksum does not match"),
        (good, "not 'kind/2'"),
        (body, "not a sealed file"),
        (good[: good.index(b"\n")], "not a sealed file"),
    ):
        kind = "kind/2" if why.startswith("not 'kind") else "kind/1"
        with pytest.raises(cachefile.CacheMiss, match=why):
            cachefile.unseal(data, kind)


def test_reading_a_cache_file_never_opens_what_is_not_regular(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name, why in (("fifo", "FIFO"), ("dir", "directory")):
        with pytest.raises(cachefile.CacheMiss, match=why):
            cachefile.read_file(tmp_path / name)
    with pytest.raises(cachefile.CacheMiss, match="device"):
        cachefile.read_file("/dev/zero")
    with pytest.raises(FileNotFoundError):
        cachefile.read_file(tmp_path / "missing")
    with zipfile.ZipFile(tmp_path / "z.zip", "w") as archive:
        archive.writestr("a", "b")
    assert cachefile.read_file(tmp_path / "z.zip", limit=1 << 20).startswith(b"PK")


def test_a_big_segment_without_the_wanted_keys_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ranker asks for its pool's keys: a big segment (another run's vectors) whose keys name
    none of them is skipped unread, its bytes not even checked; one that names one is read
    and checked, and set aside when damaged."""
    monkeypatch.setattr(vector_cache, "PEEK_ABOVE", 0)  # every segment counts as big
    cache = VectorCache(tmp_path, "minilm", DIM)
    ours, theirs = [f"{i:040x}" for i in range(3)], [f"{i:040x}" for i in range(100, 160)]
    good_segment(cache, ours)
    (mine,) = cache.dir.glob("seg-*.vec")
    good_segment(cache, theirs)
    (other,) = set(cache.dir.glob("seg-*.vec")) - {mine}
    data = bytearray(other.read_bytes())
    data[-200] ^= 1  # in the vectors: the keys still read, the checksum fails
    other.write_bytes(bytes(data))
    cachefile.take_notes()
    keys, matrix = cache.load({ours[1], "f" * 40})
    assert keys == [ours[1]] and matrix.shape == (1, DIM)
    assert cache.find({ours[2]}).keys() == {ours[2]}
    assert cachefile.take_notes() == [] and other.exists()  # never read: nothing to say
    keys, _ = cache.load({theirs[0], ours[0]})
    assert keys == [ours[0]]  # the damaged segment was read for theirs[0]...
    (note,) = cachefile.take_notes()
    assert "checksum does not match" in note and other.name in note  # ...and set aside
    assert not other.exists()
