"""A run at a glance, kept beside its run index: what `runs` and the run picker show per run.

Made when a run is first read from its files (the CLI once its answer is out, the TUI once the
first hits are shown, `runs --scan` for the runs never opened here) and kept in a sealed file,
`run-summary.bin`, in the run's index folder (checkpoint/index.py; never inside the run). It
holds the counts (nodes, entries), the audit's findings (leaks, scope violations, rejected
writes), the starved nodes and the replay check.

Starved nodes are judged on the recorded start-up searches alone, by health's rule (a node that
searched got fewer hits than min(limit, entries of its lineage written before it started)): the
recorded hits are what the node really got, so no ranker is needed and the count is the one
`health` gives for those nodes. A node that searched without a recording is counted apart
(`unjudged`): only a replay could say, and that is `health`'s work.

The replay check is search/check.py's, kept beside the run index by its CheckStore: the last
one kept for these files that compared a search (reproduced of checked, its verdict, its
ranker), read when the summary is made, and told to a kept summary when a check is kept later
(`note_check`: the TUI checks in the background after the first hits, `summary --embedder` on a
reopen). Until then the summary says "unchecked" (None); a stand-in's check, which compares
nothing, leaves it as it is.

Keyed by what no edit of the run's files can keep: every file a load reads, as (name, inode,
size, mtime_ns, ctime_ns), stat'ed only (an edit changes the inode's ctime, which no one can
set back; listing a thousand runs must not read them), with this code's and the loader's
sources. Another key, or a damaged file, is no summary (the run shows its counts alone, and
`runs --scan` makes it again). The replay check is kept with the key of the search code that
made it (check_store.source_key, the key of the check it came from): after an update of the
replay's rules the counts stand and the check reads "unchecked" until the run is checked again.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ari_mem_tui.audit import AuditReport, AuditStore, kept_or_audit
from ari_mem_tui.checkpoint import cachefile, index
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.workspace import RunSummary

LIMIT = 5  # ARI's hits per start-up search (search/replay.py DEFAULT_LIMIT)

SUMMARY_FILE = "run-summary.bin"  # beside index.bin
SUMMARY_KIND = "run-summary-3"  # the cache file's kind: a new layout takes a new number
_SOURCES = [Path(__file__), Path(__file__).parent / "audit.py", Path(__file__).parent / "health.py"]
_source_key: str | None = None


def source_key() -> str:
    """This module's, the audit's and health's sources, and the loader's (index.code_key)."""
    global _source_key
    if _source_key is None:
        digest = hashlib.sha1(index.code_key().encode())
        for source in _SOURCES:
            digest.update(source.read_bytes())
        _source_key = digest.hexdigest()
    return _source_key


def files_key(path: Path) -> list[Any]:
    """Every file a load of `path` reads, stat'ed (see the module doc)."""
    key: list[Any] = []
    root = Path(path)  # (watched names its files under this spelling of the path)
    inside = os.path.join(root, "")  # (a file under the run: its name without relpath's work)
    for file in index.watched(root, None):
        try:
            info = file.stat()
        except OSError as exc:
            key.append([file.name, "unreadable", exc.__class__.__name__])
            continue
        name = str(file)
        key.append(
            [
                name[len(inside) :] if name.startswith(inside) else os.path.relpath(file, path),
                info.st_ino,
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
            ]
        )
    return key


def _where(path: Path) -> Path | None:
    folder = index.index_dir(Path(path))
    return folder / SUMMARY_FILE if folder is not None else None


class _Stored(msgspec.Struct, array_like=True):
    """The file's body (cachefile.pack): the key it was made for, the summary, and the key of
    the search code its replay check was made with (search/check_store.source_key)."""

    key: list[Any]
    summary: dict[str, Any]
    check_key: str = ""


def _check_key() -> str:
    from ari_mem_tui.search.check_store import source_key as search_key  # noqa: PLC0415

    return search_key()


def kept(path: Path) -> RunSummary | None:
    """The summary kept for the run's files as they are now, else None."""
    where = _where(path)
    if where is None:
        return None
    try:
        stored = cachefile.read_packed(where, SUMMARY_KIND, _Stored)
        now = msgspec.msgpack.decode(msgspec.msgpack.encode([source_key(), files_key(path)]))
        if stored.key != now:
            return None
        summary = RunSummary.from_data(stored.summary)
        if summary.replay_checked is not None and stored.check_key != _check_key():
            _unchecked(summary)  # made by other replay rules: the counts stand, the check not
        return summary
    except FileNotFoundError:
        return None
    except (cachefile.CacheMiss, msgspec.DecodeError, ValueError, TypeError) as exc:
        cachefile.rebuilt("run summary", where, exc)
        if not isinstance(exc, cachefile.Foreign):  # (said once: the next listing has none)
            cachefile.remove(where)
        return None


def keep(path: Path, before: list[Any], summary: RunSummary) -> bool:
    """Keep `summary` of the run's files, whose key was `before` when the load began; False
    (nothing written) when a file changed since, or it cannot be written."""
    where = _where(path)
    if where is None or files_key(path) != before:
        return False
    checked = _check_key() if summary.replay_checked is not None else ""
    data = cachefile.pack(SUMMARY_KIND, _Stored([source_key(), before], summary.as_data(), checked))
    cost = "`runs` shows its counts alone until it is opened again (or `runs --scan`)"
    return cachefile.write_optional(where, data, "run summary", cost)


def summarize(ckpt: Checkpoint, report: AuditReport, check: Any = None) -> RunSummary:
    """The summary of a loaded run, its audit and its kept replay check (or None)."""
    summary = RunSummary(made=time.time(), nodes=len(ckpt.nodes), entries=len(ckpt.entries))
    summary.leaks, summary.scope_violations = len(report.leaks), len(report.scope_violations)
    summary.rejected_writes, summary.unattributed = (
        len(report.rejected_writes),
        len(report.unattributed),
    )
    summary.problems = len(ckpt.problems)
    summary.judged, summary.starved, summary.unjudged = starved_nodes(ckpt)
    with_check(summary, check)
    return summary


def starved_nodes(ckpt: Checkpoint, limit: int = LIMIT) -> tuple[int, int, int]:
    """(judged, starved, unjudged): nodes whose recorded start-up search can be judged, those
    of them starved by health's rule, and nodes that searched without a recording."""
    # (health and the search modules import numpy: only where a summary is made)
    from ari_mem_tui.health import Lineages  # noqa: PLC0415
    from ari_mem_tui.search.replay import checkpoint_hash  # noqa: PLC0415
    from ari_mem_tui.search.startup import recorded_startup_search, start_time  # noqa: PLC0415

    lineages = Lineages(ckpt, checkpoint_hash(ckpt))
    judged = starved = unjudged = 0
    for node in ckpt.nodes.values():
        if not node.ancestor_ids:
            continue  # a root searches nothing
        recorded, _ = recorded_startup_search(ckpt, node)
        if recorded is None:
            unjudged += node.status != "pending"  # (a pending node never started)
            continue
        judged += 1
        started, _ = start_time(ckpt, node)
        eligible = lineages.eligible(node, started)
        hits = min(len(recorded.results), limit)
        starved += eligible > 0 and hits < min(limit, eligible)
    return judged, starved, unjudged


def with_check(summary: RunSummary, check: Any) -> bool:
    """Put a replay check (search/check.py's ReplayCheck) in `summary`; False, left as it is,
    when there is none or it compared no search (a stand-in's, MiniLM's not asked for)."""
    if check is None or not check.checked:
        return False
    summary.replay_checked, summary.replay_reproduced = check.checked, check.reproduced
    summary.replay_word, summary.replay_ranker = check.word, check.ranker
    return True


def _unchecked(summary: RunSummary) -> None:
    summary.replay_checked = summary.replay_reproduced = None
    summary.replay_word = summary.replay_ranker = ""


def note_check(path: Path, check: Any) -> bool:
    """Tell the summary kept for the run's files as they are now of a replay check just kept
    for them (run_check.py); False (nothing written) when none is kept or the check compared
    no search."""
    summary = kept(path)
    if summary is None or not with_check(summary, check):
        return False
    return keep(path, files_key(path), summary)


def summary_maker(
    ckpt: Checkpoint, before: list[Any], store: AuditStore | None, checks: Any = None
) -> Callable[[AuditReport | None], bool]:
    """What makes and keeps the summary of a run read from its files whose key (`files_key`)
    was `before` when the load began, run once the answer is out: with the audit when the
    caller has it, else the kept one (or a new one, then kept too), and the replay check
    kept by `checks` (search/check_store.CheckStore) when there is one."""

    def make(report: AuditReport | None = None) -> bool:
        if report is None:
            report, new = kept_or_audit(ckpt, store)
            if new and store is not None:
                store.save(ckpt, report)
        check = checks.latest(ckpt) if checks is not None else None
        return keep(ckpt.path, before, summarize(ckpt, report, check))

    return make
