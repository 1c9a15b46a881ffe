"""A big run's BM25 index built ahead, by a process of its own, while the run loads.

A first open of a 10k-node run reads its files for ~5 s, and then built the BM25 index of its
pool for 2-2.6 s more before its first hits (every local ranker ranks by BM25 until MiniLM's
vectors are in). That pool is the backup's entries in the load's order unless the load adds an
entry for an access-log write the backup lacks (checkpoint/load.py `backup_entries`), and the
backup can be read alone. So the first open of a run whose backup is big starts a process
(`start`; search/bm25_builder.py) that reads the backup, says its pool's key on its stdout,
builds that pool's index and stores it in the BM25 cache (bm25_cache.py): on the machine's
other core, while this process loads. The ranker then asks (`wait`): the same key as its own
pool's, it waits for the process and reads the stored index, checked as any cache file is;
another key (the load added entries), the process is stopped and the ranker builds as before
(so is a process storing into another cache than the ranker's, or one that has not said its key
within KEY_PATIENCE). Nothing of the process is taken but that cache file, whose key hashes
every text of the pool in order: the index read is the one the ranker would have built. The
process ends when its index is stored, is stopped when its index is not wanted, and is stopped
at this process's exit at the latest.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

from ari_mem_tui.checkpoint import cachefile

WARM_ENV = "ARI_MEM_TUI_WARM"  # "0": no index built ahead (the ranker builds it, as before)
# a backup smaller than this (~20k entries) is indexed sooner than a process starts (0.3 s)
MIN_BACKUP_BYTES = 1 << 20
BUILDER = "ari_mem_tui.search.bm25_builder"  # the process's module
# s: the longest wait for a process's key (it reads one file where the load read them all,
# so a process that has not said it by then is stuck or starved: the ranker builds instead),
# then for its end once it said the ranker's key (its index is then the one wanted)
KEY_PATIENCE, PATIENCE = 10.0, 120.0

# the run's folder (real path) -> its process and the cache it stores the index in
_started: dict[str, tuple[subprocess.Popen, str]] = {}
_lock = threading.Lock()  # (the TUI loads in a worker thread; a ranker may ask from another)


def start(checkpoint: Path, cache: Path) -> bool:
    """Build the BM25 index of the run's backup ahead, in a process of its own, when it pays:
    a backup of at least MIN_BACKUP_BYTES, two cores or more, a cache it can store the index
    in, no process already at it; True when one was started."""
    from ari_mem_tui.checkpoint.backup import BACKUP_FILE  # noqa: PLC0415 - the readers' module

    if os.environ.get(WARM_ENV, "1") == "0" or _cores() < 2:
        return False
    try:
        size = (checkpoint / BACKUP_FILE).stat().st_size
    except OSError:
        return False
    if size < MIN_BACKUP_BYTES or cachefile.inside(cache, checkpoint):
        return False
    if not cachefile.writable(cache):
        return False
    name = _name(checkpoint)
    with _lock:
        if name in _started:
            return False
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", BUILDER, str(checkpoint), str(cache)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # (the load says what the backup holds; no traceback)
            )
        except OSError:
            return False
        _started[name] = (process, _name(cache))
    return True


def wait(checkpoint: Path, key: str, cache: Path) -> None:
    """Wait for the process building the run's index ahead when it builds the index of `key`
    (the ranker's own pool) into `cache` (the ranker's); else stop it. Either way it is gone
    on return (none: at once)."""
    with _lock:
        process, into = _started.pop(_name(checkpoint), (None, ""))
    if process is None:
        return
    try:
        if into == _name(cache) and _said_key(process) == key:
            process.wait(PATIENCE)
    except subprocess.TimeoutExpired:
        pass
    finally:
        _stop(process)


def stop(checkpoint: Path) -> None:
    """Stop the process building the run's index ahead, if any (its index is not wanted)."""
    with _lock:
        process, _into = _started.pop(_name(checkpoint), (None, ""))
    if process is not None:
        _stop(process)


@atexit.register
def _stop_all() -> None:
    with _lock:
        left = [process for process, _into in _started.values()]
        _started.clear()
    for process in left:
        _stop(process)


def _said_key(process: subprocess.Popen) -> str | None:
    """The key the process said once it read the backup (None: it ended or stayed silent)."""
    out = process.stdout
    if out is None or not select.select([out], [], [], KEY_PATIENCE)[0]:
        return None
    return out.readline().decode("ascii", "replace").strip() or None


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _name(checkpoint: Path) -> str:
    return os.path.realpath(checkpoint)


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1
