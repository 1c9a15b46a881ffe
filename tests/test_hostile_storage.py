"""A cache that can be read but not written (issue 31 §1 and §3): a read-only mount, a full
file system, another user's cache. The answer comes as with a sound cache; what cannot be
cached is said once per command, with what it costs; nothing says "rebuilt" where nothing can
be written; and a cache that was only read says nothing at all.

Built as the cases were seen, in the real CLI in a child process:
- a read-only file system: the cache dir bind-mounted read-only, and an empty read-only tmpfs,
  in a private mount namespace (`unshare -m`: the tests run as root, and root ignores chmod);
- a full file system: a small tmpfs filled to ENOSPC, in the same kind of namespace;
- another user's cache: its files chowned to nobody and the command run as root without the
  capabilities that bypass permissions (`setpriv`, tests/hostile_helpers.py `run_cli`).
Where a mount namespace cannot be made, those tests are skipped, with the reason.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fake_embeddings import fake_embeddings
from search_helpers import make_entry

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.vector_cache import VectorCache
from tests.hostile_helpers import HANG_S, ROOT, clean_stderr, fingerprint, run_cli

NODE = "9755"  # node_9755d4c1 of the small demo
NOBODY = 65534


@functools.cache
def no_mount_namespace() -> str | None:
    """None when a private mount namespace with a tmpfs can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d"; rmdir "$d"'
    try:
        proc = subprocess.run(
            ["unshare", "-m", "sh", "-c", probe],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unshare -m failed: {exc}"
    return None if proc.returncode == 0 else f"unshare -m: {proc.stderr.strip()[:200]}"


@pytest.fixture
def mounts() -> None:
    why = no_mount_namespace()
    if why is not None:
        pytest.skip(f"no private mount namespace here ({why}): a read-only or full cache dir")


def run_mounted(setup: str, *args: str, env: dict, after: str = "") -> subprocess.CompletedProcess:
    """The real CLI in a private mount namespace, after the shell `setup` mounted the cache
    (the mounts end with the namespace); `after` runs there too, before it ends."""
    script = f'set -e; {setup}; set +e; "$0" -m ari_mem_tui "$@"; rc=$?; {after} exit $rc'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, sys.executable, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "400", **env},
    )


def read_only(cache: Path) -> str:
    where = shlex.quote(str(cache))
    return f"mount --bind {where} {where} && mount -o remount,bind,ro {where}"


def full(cache: Path) -> str:
    where = shlex.quote(str(cache))
    fill = f"dd if=/dev/zero of={where}/filler bs=4096 2>/dev/null || true"
    return f"mount -t tmpfs -o size=512k tmpfs {where} && {fill}"


def saw_args(run: Path, *extra: str) -> list[str]:
    return ["saw", str(run), NODE, "--json", "--no-letta", *extra]


def hits(stdout: str) -> list[str]:
    return [h["entry_id"] for h in json.loads(stdout)["hits"]]


def lines_with(stderr: str, words: str) -> list[str]:
    return [line for line in stderr.splitlines() if words in line]


@pytest.fixture
def run(small_ckpt: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(small_ckpt, dest)
    return dest


# ---------------------------------------------------------------- read-only
def test_a_read_only_cache_that_holds_the_index_answers_and_says_nothing(
    mounts: None, run: Path, tmp_path: Path
) -> None:
    """Issue 31 §1: `saw --embedder bm25` on a read-only cache exited 2, "cannot read run:
    [Errno 30] Read-only file system" (the BM25 index's os.utime). Everything is read from it;
    nothing is lost by not marking it used, so nothing is said."""
    cache = tmp_path / "cache"
    env = {"ARI_MEM_TUI_CACHE": str(cache)}
    warm = run_cli(*saw_args(run, "--embedder", "bm25"), env=env)
    assert warm.returncode == 0, warm.stderr
    before = fingerprint(cache)
    proc = run_mounted(read_only(cache), *saw_args(run, "--embedder", "bm25"), env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert hits(proc.stdout) == hits(warm.stdout)
    assert proc.stderr == ""
    assert fingerprint(cache) == before


def test_a_failed_touch_is_no_error_in_process(tmp_path: Path, monkeypatch) -> None:
    """The TUI loads through the same ranker ("could not load the run's memory:
    PermissionError" before): a touch that fails is skipped."""
    pool = Pool([make_entry(0, "n", "alpha beta"), make_entry(1, "n", "beta gamma")])
    BM25Ranker(pool, tmp_path)

    def refuse(*_args, **_kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "utime", refuse)
    assert BM25Ranker(pool, tmp_path).rank("beta", 2).window
    assert cachefile.take_notes() == []


def test_an_empty_read_only_cache_says_once_what_cannot_be_cached(
    mounts: None, run: Path, tmp_path: Path
) -> None:
    """Issue 31 §3: on an empty read-only cache nothing was said, and every open paid again."""
    sound = run_cli(
        *saw_args(run, "--embedder", "bm25"), env={"ARI_MEM_TUI_CACHE": str(tmp_path / "c")}
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {"ARI_MEM_TUI_CACHE": str(cache)}
    proc = run_mounted(read_only(cache), *saw_args(run, "--embedder", "bm25"), env=env)
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert hits(proc.stdout) == hits(sound.stdout)
    (line,) = lines_with(proc.stderr, "BM25 index")
    assert re.fullmatch(
        rf"ari-mem-tui: BM25 index cannot be cached in {re.escape(str(cache))}/bm25"
        r" \(Read-only file system\): it is built again on every run \(\d+\.\d s this time\)",
        line,
    ), line
    (line,) = lines_with(proc.stderr, "run index")  # §3: every open a full parse, said once
    assert re.search(
        r"\(Read-only file system\): every open of the run reads its files \(\d+\.\d s this time\)$",
        line,
    ), line
    assert "rebuilt" not in proc.stderr
    assert list(cache.iterdir()) == []


def test_runs_on_a_read_only_cache_counts_and_says_so_once(
    mounts: None, small_ckpt: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    for name in ("20260528191903_a", "20260528191904_b"):
        shutil.copytree(small_ckpt, ws / "checkpoints" / name)
    cache = tmp_path / "cache"
    cache.mkdir()
    proc = run_mounted(
        read_only(cache), "runs", str(ws), "--json", env={"ARI_MEM_TUI_CACHE": str(cache)}
    )
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert [r["entries"] for r in json.loads(proc.stdout)["runs"]] == [398, 398]
    (line,) = lines_with(proc.stderr, "run counts")
    assert line.endswith("(Read-only file system): the runs are counted again at every listing"), (
        line
    )


# ---------------------------------------------------------------- full
def test_a_full_cache_says_once_and_leaves_no_temp_file(
    mounts: None, run: Path, tmp_path: Path
) -> None:
    """Issue 31 §3 on a full disk: the run's vectors are written a segment at a time, each
    write fails; one line says so, the answer is the run's own, and no temp file is left."""
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {"ARI_MEM_TUI_CACHE": str(cache)}
    listing = tmp_path / "left"
    after = f"find {shlex.quote(str(cache))} -type f ! -name filler > {shlex.quote(str(listing))};"
    with fake_embeddings() as fake:
        args = saw_args(
            run, "--embedder", "run", "--embed-url", fake.url, "--embed-model", "m",
            "--checkpoint-hash", "0123456789ab",
        )  # fmt: skip
        sound = run_cli(*args, env={"ARI_MEM_TUI_CACHE": str(tmp_path / "sound")})
        sent = len(fake.requests)
        proc = run_mounted(full(cache), *args, env=env, after=after)
        assert len(fake.requests) == 2 * sent  # nothing was cached: asked again
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert hits(proc.stdout) == hits(sound.stdout) and hits(sound.stdout)
    (line,) = lines_with(proc.stderr, "vectors cannot be cached")
    assert "(No space left on device): kept in memory only; the texts not in it are sent" in line
    assert "rebuilt" not in proc.stderr
    assert listing.read_text() == ""  # no temp file, no half segment


# ---------------------------------------------------------------- another user's
def test_another_users_cache_is_one_line_never_rebuilt(run: Path, tmp_path: Path) -> None:
    """Issue 31 §3: with another user's cache the same line came once per segment, each
    ending "rebuilt" while nothing could be written. Its files are chowned to nobody (as
    written: files 0600, folders 0755) and the command runs without the capabilities that let
    root past permissions."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to play another user's cache")
    cache = tmp_path / "cache"
    env = {"ARI_MEM_TUI_CACHE": str(cache)}
    with fake_embeddings() as fake:
        args = saw_args(
            run, "--embedder", "run", "--embed-url", fake.url, "--embed-model", "m",
            "--checkpoint-hash", "0123456789ab",
        )  # fmt: skip
        warm = run_cli(*args, env=env)
        assert warm.returncode == 0, warm.stderr
        segments = list(cache.glob("vectors/*/seg-*.vec"))
        assert len(segments) >= 2
        sent = len(fake.requests)
        for path in [cache, *cache.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        before = fingerprint(cache)
        proc = run_cli(*args, env=env, unprivileged=True)
        assert len(fake.requests) == 2 * sent  # another user's vectors are not used
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert hits(proc.stdout) == hits(warm.stdout)
    (line,) = lines_with(proc.stderr, "vector cache segment")
    assert f"{len(segments)} vector cache segments in" in line and "Permission denied" in line
    assert not any(line.endswith("rebuilt") for line in proc.stderr.splitlines()), proc.stderr
    (line,) = lines_with(proc.stderr, "vectors cannot be cached")
    assert "(Permission denied): kept in memory only" in line
    assert fingerprint(cache) == before  # nothing set aside, nothing written


def test_another_users_readable_segment_is_not_used(tmp_path: Path) -> None:
    """Issue 29 §3: a vector written by another user is not used, readable or not."""
    cache = VectorCache(tmp_path, "minilm", 4)
    cache.add(["a" * 40], np.ones((1, 4), np.float32))
    (seg,) = cache.dir.glob("seg-*.vec")
    os.chown(seg, NOBODY, NOBODY)
    seg.chmod(0o644)
    cachefile.take_notes()
    assert cache.load()[0] == []
    (note,) = cachefile.take_notes()
    assert "not written by this user alone" in note


# ---------------------------------------------------------------- settings, recent runs, demo
@pytest.fixture
def fresh_notes(monkeypatch) -> None:
    """`cannot_cache` says a thing once per process: each of these tests is its own command."""
    monkeypatch.setattr(cachefile, "_cannot", set())
    cachefile.take_notes()


def test_settings_and_recent_runs_that_cannot_be_saved_are_one_line_each(
    tmp_path: Path, monkeypatch, fresh_notes: None
) -> None:
    from ari_mem_tui.tui import config
    from ari_mem_tui.workspace import remember_run

    """A read-only config dir (the write refused as a read-only mount refuses it: the TUI
    cannot be run in a mount namespace here); each said once, however often it is tried."""
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path / "config"))

    def read_only(*_args, **_kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(cachefile, "write_atomic", read_only)
    for theme in ("a", "b"):
        assert not config.save_setting("theme", theme)
        assert not remember_run(tmp_path)
    notes = cachefile.take_notes()
    assert [n.split(" cannot be saved in ")[0] for n in notes] == ["settings", "recent runs"]
    assert notes[0].endswith("(Read-only file system): a setting lasts until the TUI quits")
    assert notes[1].endswith("(Read-only file system): this run is not added to the recent runs")


def test_a_demo_whose_cache_cannot_be_written_is_kept_in_one_private_folder(
    tmp_path: Path, monkeypatch, fresh_notes: None
) -> None:
    """Kept in this user's folder of the temp dir and reused there (a new folder at every run
    filled the temp dir); generated in a new folder only where that folder is not private."""
    from ari_mem_tui import demo

    (tmp_path / "file").write_text("")
    monkeypatch.setenv("ARI_MEM_TUI_CACHE", str(tmp_path / "file" / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    spare = tmp_path / "tmp" / f"ari-mem-tui-{os.getuid()}"
    path = demo.demo_checkpoint(nodes=3, seed=2)
    assert path == spare / "demo-n3-s2" and (path / "tree.json").is_file()
    assert stat.S_IMODE(spare.stat().st_mode) == 0o700
    (note,) = cachefile.take_notes()
    assert note.startswith(f"demo checkpoint cannot be cached in {tmp_path / 'file' / 'cache'}")
    assert note.endswith(f"it is kept in {path} instead")
    stamp = (path / "tree.json").stat().st_mtime_ns
    assert demo.demo_checkpoint(nodes=3, seed=2) == path  # reused, not written again
    assert (path / "tree.json").stat().st_mtime_ns == stamp
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == [spare.name]
    cachefile.take_notes()
    cachefile._cannot.clear()  # (said once a process: the next is another command)

    spare.chmod(0o755)  # (another user could have made it, or may read it: not used)
    elsewhere = demo.demo_checkpoint(nodes=3, seed=2)
    assert elsewhere.parent == tmp_path / "tmp" and elsewhere.name.startswith("ari-mem-tui-demo-")
    assert (elsewhere / "tree.json").is_file()
    (note,) = cachefile.take_notes()
    assert note.endswith(f"it is generated again every time (this time in {elsewhere})")
