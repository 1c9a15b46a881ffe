"""A whole ARI workspace: the runs under a folder, their headline numbers, the recent ones.

ARI keeps each run in `{workspace}/checkpoints/{run_id}/` (docs/ari-format.md §1.1), the
future bucketed layout in `{workspace}/runs/{run_id}/checkpoints/`. A person may point at the
workspace, at its `checkpoints/` folder, or at one run: `scan` tells which, and says so in one
line when the folder is none of these. Reading is strictly read-only; the counts that cost a
full read of a big run (nodes, entries) are cached outside the runs, keyed by file size and
mtime, so listing a hundred runs again is instant.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from platformdirs import user_config_path

from ari_mem_tui import run_summary
from ari_mem_tui.checkpoint import cachefile, index
from ari_mem_tui.checkpoint.backup import BACKUP_FILE, GzipLines
from ari_mem_tui.checkpoint.jsonfile import usable_file
from ari_mem_tui.checkpoint.paths import RUN_FILES, is_run, not_a_folder
from ari_mem_tui.checkpoint.tree import read_tree_document
from ari_mem_tui.checkpoint.values import as_float, parse_iso
from ari_mem_tui.model import Problem
from ari_mem_tui.model.workspace import RunInfo, Workspace

CONFIG_ENV = "ARI_MEM_TUI_CONFIG_DIR"
RECENT_FILE = "recent.json"
RECENT_KEEP = 20
COUNTS_FILE = "run-counts.bin"
COUNTS_KIND = "run-counts/3"  # the cache file's kind: another version is counted afresh
OLD_COUNTS = ("run-counts.json",)  # earlier versions' names, removed when the counts are written
RUN_STAMP = re.compile(r"^(\d{14})_")
ProgressFn = Callable[[int, int], None]


# ---------------------------------------------------------------------- what a folder is
def unreadable_dir(path: Path) -> bool:
    """A folder that cannot be listed (no permission): in `checkpoints/` it is still a run's,
    listed with its problem rather than left out."""
    try:
        with os.scandir(path):
            return False
    except NotADirectoryError:
        return False
    except OSError:
        return path.is_dir()


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def find_runs(path: Path) -> tuple[list[Path], list[str]]:
    """The run folders under `path` (a workspace or a checkpoints/ folder), and where they lay.

    Looked at: `path/checkpoints/*`, `path/runs/*/checkpoints` (the future layout), `path/*`."""
    runs: dict[Path, None] = {}
    where: list[str] = []

    def take(folder: Path, candidates: Iterable[Path], or_unreadable: bool = False) -> None:
        found = [c for c in candidates if is_run(c) or (or_unreadable and unreadable_dir(c))]
        if found:
            where.append(str(folder))
            runs.update(dict.fromkeys(found))

    take(path / "checkpoints", _subdirs(path / "checkpoints"), or_unreadable=True)
    take(path / "runs", [d / "checkpoints" for d in _subdirs(path / "runs")])
    take(path, _subdirs(path))
    return list(runs), where


def scan(
    path: Path | str,
    counts: bool = True,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Workspace:
    """What `path` is, with every run's info (newest first). `counts=False` skips the reads of
    trees and backups (nodes, entries stay None) for a first, instant listing."""
    folder = Path(path).expanduser()
    if not folder.exists():
        return Workspace(
            path=str(folder),
            kind="none",
            message=f"{folder}: not a checkpoint directory (no such folder)",
        )
    if not folder.is_dir():
        return Workspace(
            path=str(folder),
            kind="none",
            message=f"{folder}: not a checkpoint directory ({not_a_folder(folder)})",
        )
    if is_run(folder):
        info = run_info(folder, counts=counts)
        return Workspace(path=str(folder), kind="run", where=[str(folder)], runs=[info])
    paths, where = find_runs(folder)
    if not paths:
        return Workspace(
            path=str(folder),
            kind="none",
            message=(
                f"{folder}: neither an ARI run (no tree.json, nodes_tree.json, "
                f"{BACKUP_FILE} or memory_access.jsonl) nor a workspace holding runs "
                "(none in it, in checkpoints/ or in runs/*/checkpoints/)"
            ),
        )
    cache = CountCache.load() if counts else None
    recent = recent_runs_by_path()
    infos = []
    for done, run_path in enumerate(paths):
        if cancelled is not None and cancelled():
            break
        info = run_info(run_path, counts=counts, cache=cache)
        info.recent = recent.get(info.path)
        infos.append(info)
        if progress is not None:
            progress(done + 1, len(paths))
    if cache is not None:
        cache.save()
    return Workspace(path=str(folder), kind="workspace", where=where, runs=newest_first(infos))


def newest_first(runs: list[RunInfo]) -> list[RunInfo]:
    return sorted(runs, key=lambda r: (-(r.created or 0.0), r.run_id))


# ---------------------------------------------------------------------- one run
def run_info(path: Path, counts: bool = True, cache: CountCache | None = None) -> RunInfo:
    """A run's headline numbers. Never raises: what cannot be read is a problem on the row."""
    path = Path(path)
    absolute = str(path.resolve())
    size, last = _disk_usage(path)
    info = RunInfo(run_id=path.name, path=absolute, folder=path.name, size=size, last_change=last)
    info.live = os.path.lexists(path / ".ari_pid")  # False, not an error, without permission
    if counts:
        own = cache if cache is not None else CountCache.load()
        found = own.get(path)
        if found is None:
            found = _count_or_say(path)
            own.put(path, found)
            if cache is None:
                own.save()
        _apply_counts(info, found)
    if counts:
        info.summary = run_summary.kept(path)  # (a small file beside the run index, or None)
    stamp = _stamp(info.run_id) or _stamp(path.name)
    if stamp is not None:
        info.created, info.created_source = stamp, "run_id"
    elif info.created is None and last is not None:
        info.created, info.created_source = last, "mtime"
    return info


def _stamp(name: str) -> float | None:
    """The start time in a run id `YYYYMMDDHHMMSS_<slug>` (§1.1), as UTC epoch seconds."""
    match = RUN_STAMP.match(name)
    if not match:
        return None
    try:
        return datetime.strptime(match.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _disk_usage(path: Path) -> tuple[int, float | None]:
    """Bytes and newest mtime of every file under `path` (symlinks not followed; a folder that
    cannot be listed counts nothing). scandir, not os.walk: a thousand runs' listing spent a
    fifth of its time in os.walk's own steps."""
    total, newest = 0, None
    folders = [path]
    while folders:
        try:
            with os.scandir(folders.pop()) as found:
                entries = list(found)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += stat.st_size
            newest = stat.st_mtime if newest is None else max(newest, stat.st_mtime)
    return total, newest


def _count_or_say(path: Path) -> Counts:
    """`_count`, or what stopped it as the row's problem: one unreadable run (a folder or a
    backup without permission) must not end the listing of all the others."""
    try:
        return _count(path)
    except OSError as exc:
        why = f"cannot read it ({exc.strerror or type(exc).__name__})"
        name = Path(exc.filename).name if exc.filename else path.name
        problem = Problem(file=name, what="not counted", why=why, severity="error")
        return Counts(problems=[problem.as_data()])


def _count(path: Path) -> Counts:
    """The costly numbers: node statuses from the tree, records in the backup."""
    problems: list[Problem] = []
    found = Counts()
    name, document, nodes = read_tree_document(path, problems)
    if name is not None:
        statuses: dict[str, int] = {}
        for raw in nodes:
            status = raw.get("status") if isinstance(raw, dict) else None
            key = status if isinstance(status, str) else ""
            statuses[key] = statuses.get(key, 0) + 1
        found.nodes = len(nodes)
        found.statuses = statuses
        if isinstance(document, dict):
            run_id = document.get("run_id")
            if isinstance(run_id, str) and run_id.strip():
                found.run_id = run_id
            created = document.get("created_at")
            found.tree_created = parse_iso(created) if isinstance(created, str) else None
    backup = path / BACKUP_FILE
    if usable_file(backup, BACKUP_FILE, problems):
        lines = GzipLines(backup)
        records = 0
        try:
            for raw in lines:
                if raw.strip() and b'"core_seed"' not in raw:
                    records += 1
        except OSError as exc:  # no permission, an I/O error: the tree's counts still stand
            why = f"cannot read it ({exc.strerror or type(exc).__name__})"
            problems.append(Problem(file=BACKUP_FILE, what="entries not counted", why=why))
            records = None
        found.entries = records
        if lines.stop.reason:
            problems.append(
                Problem(
                    file=BACKUP_FILE,
                    where=f"line {lines.stop.line}",
                    what=f"counted {records} records",
                    why=lines.stop.reason,
                )
            )
    found.problems = [p.as_data() for p in problems]
    return found


class Counts(msgspec.Struct):
    """The costly numbers of a run, as `_count` finds them and the count cache keeps them."""

    problems: list[dict[str, Any]] = msgspec.field(default_factory=list)
    nodes: int | None = None
    statuses: dict[str, int] = msgspec.field(default_factory=dict)
    entries: int | None = None
    run_id: str | None = None
    tree_created: float | None = None


def _apply_counts(info: RunInfo, found: Counts) -> None:
    statuses = found.statuses
    info.nodes = found.nodes
    info.completed = statuses.get("success", 0)
    info.failed = statuses.get("failed", 0)
    info.running = statuses.get("running", 0)
    info.pending = statuses.get("pending", 0)
    info.entries = found.entries
    if found.run_id:
        info.run_id = found.run_id
    if found.tree_created is not None:
        info.created, info.created_source = found.tree_created, "tree.json created_at"
    info.problems = [Problem.from_data(p) for p in found.problems]


def _checked(counts: Any) -> Counts | None:
    """Counts of the cache's file as the typed numbers, or None when any is of the wrong shape
    (the run is then counted again)."""
    try:
        found = msgspec.convert(counts, Counts)
        for problem in found.problems:
            Problem.from_data(problem)
    except (msgspec.ValidationError, ValueError):
        return None
    return found


class CountCache:
    """Node and entry counts by run path, valid while the tree's and backup's size and mtime
    are unchanged. Kept in the cache dir (never inside a run) as a cache file of the tool's one
    format (checkpoint/cachefile.py): a damaged or foreign file is counted again, said once.
    Unwritable means in-memory, said once."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self.dirty = False

    @classmethod
    def load(cls) -> CountCache:
        path = index.cache_dir() / COUNTS_FILE
        data: Any = {}
        try:
            data = cachefile.read_packed(path, COUNTS_KIND, dict[str, Any])
        except FileNotFoundError:
            pass
        except cachefile.CacheMiss as exc:
            cachefile.rebuilt("run counts cache", path, exc)
        if not isinstance(data, dict) or not isinstance(data.get("runs"), dict):
            data = {"runs": {}}
        return cls(path, data)

    @staticmethod
    def signature(path: Path) -> list[Any]:
        sig: list[Any] = []
        for name in (*RUN_FILES[:3],):
            try:
                stat = (path / name).stat()
                sig.append([name, stat.st_size, stat.st_mtime_ns])
            except OSError:
                sig.append([name, None, None])
        legacy = sorted(str(p) for p in path.glob("node_*/tree.json"))
        sig.append(len(legacy))
        return sig

    def get(self, path: Path) -> Counts | None:
        row = self.data["runs"].get(str(path.resolve()))
        if isinstance(row, dict) and row.get("sig") == self.signature(path):
            return _checked(row.get("counts"))
        return None

    def put(self, path: Path, counts: Counts) -> None:
        self.data["runs"][str(path.resolve())] = {
            "sig": self.signature(path),
            "counts": msgspec.to_builtins(counts),
        }
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        if any(cachefile.refuse_inside(self.path.parent, run) for run in self.data["runs"]):
            return  # a cache dir inside a run it counts: never written into a checkpoint
        # a row msgpack cannot hold (a lone surrogate in a path or a problem) is left out: that
        # run is counted again next time
        runs = {path: row for path, row in self.data["runs"].items() if _packable([path, row])}
        cost = "the runs are counted again at every listing"
        data = cachefile.pack(COUNTS_KIND, {"runs": runs})
        if cachefile.write_optional(self.path, data, "run counts", cost):
            for old in OLD_COUNTS:
                cachefile.remove(self.path.with_name(old))


def _packable(value: Any) -> bool:
    try:
        msgspec.msgpack.encode(value)
    except (msgspec.EncodeError, TypeError, OverflowError, UnicodeEncodeError):
        return False
    return True


# ---------------------------------------------------------------------- recent runs
def config_dir() -> Path:
    """$ARI_MEM_TUI_CONFIG_DIR, else the user's XDG config dir (shared with the TUI settings)."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    return user_config_path("ari-mem-tui")


def recent_runs() -> list[dict[str, Any]]:
    """[{path, opened}] newest first; a broken file is an empty list (said once), rewritten at
    the next open."""
    path = config_dir() / RECENT_FILE
    try:
        data = cachefile.decode_json(cachefile.read_config(path))
    except FileNotFoundError:
        return []
    except cachefile.CacheMiss as exc:
        cachefile.tell(f"recent runs list {path} ignored ({exc}): started afresh")
        return []
    rows = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return []
    # `opened` a finite float: an integer past a float's range raised OverflowError (exit 3)
    good = [
        {**r, "opened": opened}
        for r in rows
        if isinstance(r, dict)
        and isinstance(r.get("path"), str)
        and (opened := as_float(r.get("opened"))) is not None
    ]
    return sorted(good, key=lambda r: -r["opened"])


def recent_runs_by_path() -> dict[str, float]:
    return {r["path"]: float(r["opened"]) for r in recent_runs()}


def remember_run(path: Path | str, when: float | None = None) -> bool:
    """Put a run at the top of the recent list; False when the file could not be written."""
    absolute = str(Path(path).expanduser().resolve())
    rows = [r for r in recent_runs() if r["path"] != absolute]
    rows.insert(0, {"path": absolute, "opened": time.time() if when is None else when})
    body = json.dumps({"runs": rows[:RECENT_KEEP]}, indent=2)  # ASCII, surrogates escaped
    cost = "this run is not added to the recent runs"
    return cachefile.write_optional(
        config_dir() / RECENT_FILE, body.encode(), "recent runs", cost, "saved"
    )


def recent_workspace(counts: bool = True) -> Workspace:
    """The recently opened runs that still exist, as a workspace (most recent first)."""
    infos = []
    cache = CountCache.load() if counts else None
    for row in recent_runs():
        path = Path(row["path"])
        if is_run(path):
            info = run_info(path, counts=counts, cache=cache)
            info.recent = float(row["opened"])
            infos.append(info)
    if cache is not None:
        cache.save()
    return Workspace(path="(recent)", kind="workspace", where=["recently opened"], runs=infos)


# ---------------------------------------------------------------------- summaries, made in bulk
def missing_summaries(ws: Workspace) -> list[RunInfo]:
    """The runs of `ws` with no summary kept for their files as they are (readable ones)."""
    return [run for run in ws.runs if run.summary is None and run.nodes]


def make_summaries(
    runs: list[RunInfo], jobs: int | None = None, progress: ProgressFn | None = None
) -> int:
    """Make and keep the summary of each of `runs` (run_summary.py), in `jobs` processes at
    once (default: one per core), each run read from its files (or its run index; no index is
    written: a thousand runs' would fill the cache). `progress(done, total)` after each run.
    The runs' infos get their summaries; how many were made."""
    paths = [run.path for run in runs]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(paths) or 1))
    made = 0
    by_path = {run.path: run for run in runs}
    results = _in_processes(paths, jobs) if jobs > 1 else map(summarize_run, paths)
    for done, (path, summary) in enumerate(results, start=1):
        if summary is not None:
            by_path[path].summary = summary
            made += 1
        if progress is not None:
            progress(done, len(paths))
    return made


def _in_processes(paths: list[str], jobs: int) -> Iterable[tuple[str, Any]]:
    """`summarize_run` of each path in a pool of `jobs` processes, as each ends (forked on
    Linux: the modules a summary needs are imported once, here, not by every process)."""
    import multiprocessing  # noqa: PLC0415 - only for a scan

    from ari_mem_tui import audit, health  # noqa: F401, PLC0415 - imported before the fork

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(jobs) as pool:
        yield from pool.imap_unordered(summarize_run, paths, chunksize=2)


def summarize_run(path: str) -> tuple[str, Any]:
    """(path, its summary, kept) of one run read from its files; None when it cannot be
    read or kept. Never raises (one bad run must not end a scan of a thousand)."""
    from ari_mem_tui.audit import AuditStore  # noqa: PLC0415
    from ari_mem_tui.checkpoint.load import load_checkpoint  # noqa: PLC0415
    from ari_mem_tui.search.check_store import CheckStore  # noqa: PLC0415

    run = Path(path)
    try:
        before = run_summary.files_key(run)
        store = AuditStore.before_load(run)
        checks = CheckStore.before_load(run, only_if_kept=True)  # (a replay check, if any)
        # the run index when one is there; none written (`defer_index` drops the write)
        ckpt = load_checkpoint(run, use_index=True, defer_index=lambda _write: None)
        if ckpt.tree_source is None:
            return path, None
        made = run_summary.summary_maker(ckpt, before, store, checks)
        if not made(None):
            return path, None
        return path, run_summary.kept(run)
    except Exception:  # noqa: BLE001 - a run that breaks the reader is listed without one
        return path, None
