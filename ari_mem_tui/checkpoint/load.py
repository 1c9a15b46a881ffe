"""`load_checkpoint`: every file ARI writes, read into one `Checkpoint`, strictly read-only.

Order matters: the tree first (scopes and timestamps), then memory entries, then the access log
(joined to the entries and attributed to readers through the tree and the trace logs), and last
the CoW write log, which draws on all of them.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

from ari_mem_tui.checkpoint import index
from ari_mem_tui.checkpoint.access_log import read_access_log, read_access_summary
from ari_mem_tui.checkpoint.attribution import READ_TOOLS, attribute_reads
from ari_mem_tui.checkpoint.backup import BACKUP_FILE, BackupResult, read_backup
from ari_mem_tui.checkpoint.bulk import without_gc
from ari_mem_tui.checkpoint.core import approximate_core, core_from_seed
from ari_mem_tui.checkpoint.cow import CowLog
from ari_mem_tui.checkpoint.join import EntryIndex, join_writes
from ari_mem_tui.checkpoint.jsonfile import read_json, read_text, usable_file
from ari_mem_tui.checkpoint.legacy_memory import (
    memory_json_entries,
    memory_store_entries,
    nodes_tree_entries,
)
from ari_mem_tui.checkpoint.paths import checkpoint_hash, not_a_folder
from ari_mem_tui.checkpoint.settings import letta_embedding_config
from ari_mem_tui.checkpoint.trace_log import scanner, some_trace_calls, trace_calls_of
from ari_mem_tui.checkpoint.tree import (
    Scan,
    TreeResult,
    forget_read_pages,
    load_tree,
    raw_node_list,
    sketch_tree,
)
from ari_mem_tui.checkpoint.values import parse_iso
from ari_mem_tui.model import Checkpoint, CoreBlocks, Entries, Events, Node, Problem, TraceCall
from ari_mem_tui.model.columns import EntryBuilder, StringTable

__all__ = [
    "LOAD_STEPS",
    "DeferFn",
    "StepFn",
    "TreeFn",
    "checkpoint_hash",
    "load_checkpoint",
    "load_tree_only",
    "sketch_first",
]

STALE_BACKUP_S = 300.0  # a backup whose newest entry is this much older than the tree is stale

# What `load_checkpoint` reports to `on_step(n, len(LOAD_STEPS), name)` as it starts each part,
# so a caller can say how far a long load (14 s on 10,000 nodes) has got.
LOAD_STEPS = ("tree", "memory", "trace logs", "access log", "reads and writes")
StepFn = Callable[[int, int, str], None]
TreeFn = Callable[[Checkpoint], None]  # given the tree alone, as soon as it is read
DeferFn = Callable[[Callable[[], bool]], None]  # given a fresh load's index write, to run later


def load_checkpoint(
    path: Path,
    on_step: StepFn | None = None,
    use_index: bool = False,
    on_tree: TreeFn | None = None,
    defer_index: DeferFn | None = None,
) -> Checkpoint:
    """Load everything readable under `path`; what is not readable becomes `ckpt.problems`.

    `on_tree(tree)` is called once the tree is read, with a Checkpoint of the tree alone (as
    `load_tree_only` gives), so a caller can show it while the rest loads (not on a reopen from
    the index: that gives the whole run at once).

    With `use_index`, a run whose files are unchanged since it was last loaded comes from its
    persistent index (checkpoint/index.py, in the cache dir), and a fresh load writes one:
    before returning, or, with `defer_index`, when the caller runs the write it is handed (the
    TUI: once the first hits are on screen, as it would compete with them for the one CPU the
    GIL gives; quitting first leaves no index, never a broken one: it appears by a rename).
    """
    path, on_step = Path(path), on_step or _no_step
    if not use_index or index.index_dir(path) is None:  # (off, or it would be in the run)
        return without_gc(_load, path, on_step, on_tree)
    index.sweep(path)  # what a writer that died half-way left (none while one is alive)
    cached = without_gc(index.load, path)  # (a damaged index: a miss, the user told once)
    if cached is not None:
        for number, name in enumerate(LOAD_STEPS, start=1):  # every part, done at once
            on_step(number, len(LOAD_STEPS), name)
        return cached
    before, started = index.run_key(path, None), time.perf_counter()
    ckpt = without_gc(_load, path, on_step, on_tree)
    took = time.perf_counter() - started  # (what every open costs when no index is written)
    if ckpt.tree_source is None:
        return ckpt
    if defer_index is not None:  # (gc stays on then: it is process-wide)
        defer_index(lambda: index.save(ckpt, before, took))
    else:
        without_gc(index.save, ckpt, before, took)
    return ckpt


def load_tree_only(path: Path) -> Checkpoint:
    """Only the tree (nodes, graph, roots, run id, their problems): a first view of a big run.

    The same reader as `load_checkpoint`'s first step, so the nodes are the ones the full load
    will show; memory, core blocks, logs and the CoW log stay empty.
    """
    ckpt = Checkpoint(path=Path(path))
    without_gc(_read_tree_into, ckpt)
    return ckpt


def sketch_first(path: Path, on_tree: TreeFn, use_index: bool = True) -> bool:
    """On a run with no run index (a first open: its files will be read whatever their keys
    say), give `on_tree` the sketched tree at once, before the files' keys are taken (their
    whole-file hashes: 0.16-0.4 s at 10k nodes, measured in the TUI) and before the load;
    True when it was given (the load is then given no `on_tree`). With an index there, nothing:
    a reopen gives the whole run at once."""
    if use_index and index.exists(path):
        return False
    return without_gc(_show_sketch, Path(path), on_tree)


def _tree_alone(ckpt: Checkpoint) -> Checkpoint:
    """A Checkpoint sharing `ckpt`'s tree, which the rest of the load does not change."""
    return Checkpoint(
        path=ckpt.path,
        run_id=ckpt.run_id,
        tree_source=ckpt.tree_source,
        nodes=ckpt.nodes,
        graph=ckpt.graph,
        roots=ckpt.roots,
        problems=list(ckpt.problems),
    )


def _show_sketch(path: Path, on_tree: TreeFn) -> bool:
    """Give `on_tree` the tree sketched from its file (checkpoint/tree.py `sketch_tree`);
    False when there is none to give (the full read's tree is given then)."""
    if _unreadable_dir(path):
        return False
    tree = sketch_tree(path)
    if tree is None:
        return False
    sketched = Checkpoint(path=path)
    _take_tree(sketched, tree)
    on_tree(sketched)
    return True


def _no_step(_n: int, _m: int, _name: str) -> None:
    pass


def _read_tree_into(ckpt: Checkpoint, scan: Scan | None = None) -> TreeResult | None:
    """The tree into `ckpt` (None when `ckpt.path` is no directory; a problem says so);
    `scan`: as `load_tree` takes it."""
    path, problems = ckpt.path, ckpt.problems
    why = _unreadable_dir(path)
    if why:
        problems.append(Problem(file=str(path), what="loaded nothing", why=why, severity="error"))
        return None
    tree = load_tree(path, problems, scan)
    if tree.source is None:
        problems.append(
            Problem(
                file="tree.json",
                what="loaded no nodes",
                why="none of tree.json, nodes_tree.json, node_*/tree.json gave a node list",
                severity="error",
            )
        )
    _take_tree(ckpt, tree)
    return tree


def _take_tree(ckpt: Checkpoint, tree: TreeResult) -> None:
    ckpt.run_id, ckpt.tree_source = tree.run_id, tree.source
    ckpt.nodes, ckpt.graph, ckpt.roots = tree.nodes, tree.graph, tree.roots


def _unreadable_dir(path: Path) -> str | None:
    """Why `path` cannot be read as a folder (missing, a file, no permission), else None."""
    try:
        with os.scandir(path):
            return None
    except NotADirectoryError:
        return not_a_folder(path)
    except FileNotFoundError:
        return "no such folder"
    except OSError as exc:
        return f"cannot list the folder: {exc.strerror or type(exc).__name__}"


def _load(path: Path, on_step: StepFn, on_tree: TreeFn | None = None) -> Checkpoint:
    ckpt = Checkpoint(path=path)
    problems = ckpt.problems
    total = len(LOAD_STEPS)
    on_step(1, total, LOAD_STEPS[0])
    # the tree to draw first, from its nodes without their trace logs (a 10k run's full read
    # of the tree takes a second more); the full read below gives the run its nodes
    sketched = on_tree is not None and _show_sketch(path, on_tree)
    # (what attribution and the CoW log need of the trace logs, taken as the tree reader
    # decodes them to check them: `_read_tool_calls` then decodes none of them again)
    tree = _read_tree_into(ckpt, scanner(READ_TOOLS))
    if tree is None:
        return ckpt
    if on_tree is not None and ckpt.nodes and not sketched:
        on_tree(_tree_alone(ckpt))
    on_step(2, total, LOAD_STEPS[1])
    ckpt.experiment_goal = _experiment_goal(path, tree, problems)
    rows = EntryBuilder(ckpt.strings)
    backup = _read_memory(ckpt, tree, rows)
    ckpt.core = _core(ckpt, backup)
    ckpt.letta_embedding_config = letta_embedding_config(path, problems)
    on_step(3, total, LOAD_STEPS[2])
    # only the calls attribution and the CoW log need; the rest waits for a reader of them
    needed, count = _read_tool_calls(ckpt.nodes)
    on_step(4, total, LOAD_STEPS[3])
    rows.flush()
    entry_index = EntryIndex(rows)  # (the join's: built now, previews are read off it)
    previews = (entry_index.sources, rows)
    events = read_access_log(path, ckpt.run_id, problems, ckpt.strings, previews)
    ckpt.access_summary = read_access_summary(path, ckpt.run_id, problems)
    on_step(5, total, LOAD_STEPS[4])
    same_meta = join_writes(events, rows, problems, entry_index)
    ckpt.entries, ckpt.access_events = _grouped(rows, events), events
    events.derive_from(ckpt.entries, same_meta)
    attribute_reads(ckpt.access_events, ckpt.nodes, ckpt.experiment_goal, needed, problems)
    cow = CowLog(ckpt.entries, ckpt.access_events, needed)
    ckpt.defer_writes(cow)  # one row per entry: built when first read
    ckpt.defer_trace_calls(trace_calls_of(ckpt.nodes), count)
    ckpt.reindex()
    return ckpt


def _read_tool_calls(nodes: dict[str, Node]) -> tuple[dict[str, list[TraceCall]], int]:
    """`some_trace_calls` of the read tools, a slice of nodes at a time, the pages of their
    mapped trace logs let go after each (so the pass never holds them all)."""
    needed: dict[str, list[TraceCall]] = {}
    count = 0
    ids = list(nodes)
    for start in range(0, len(ids), 512):
        part = {node_id: nodes[node_id] for node_id in ids[start : start + 512]}
        found, number = some_trace_calls(part, READ_TOOLS)
        needed.update(found)
        count += number
        forget_read_pages(part)
    return needed, count


def _grouped(rows: EntryBuilder, events: Events) -> Entries:
    """node_scope entries first, then react ones, each group in source order (as the backup);
    the events' joined rows follow their entries."""
    rows.flush()
    order = _pool_order(rows.kind)
    entries = rows.finish(order)
    if any(row != old for row, old in enumerate(order)):
        moved = array("i", bytes(4 * len(order)))
        for row, old in enumerate(order):
            moved[old] = row
        for column in (events.joined, events.derived):
            for event, old in enumerate(column):
                if old >= 0:
                    column[event] = moved[old]
    return entries


def _pool_order(kind: Sequence[int]) -> list[int]:
    """The rows' order in the run: node_scope entries first, then react ones, each group in
    source order."""
    order = [r for r in range(len(kind)) if kind[r] == 0]
    order += [r for r in range(len(kind)) if kind[r] != 0]
    return order


def backup_entries(path: Path) -> Entries | None:
    """The entries the backup alone gives, in the order a load gives them: the run's pool
    unless the load adds entries for access-log writes the backup lacks (search/bm25_warm.py
    builds its index ahead). None when the backup gives no entry. Its problems are not said
    here: the load reads the same file and says them."""
    if not usable_file(path / BACKUP_FILE, BACKUP_FILE, []):
        return None
    rows = EntryBuilder(StringTable())
    if not without_gc(read_backup, path / BACKUP_FILE, BACKUP_FILE, [], rows).count:
        return None
    rows.flush()
    return rows.finish(_pool_order(rows.kind))


def _experiment_goal(path: Path, tree: TreeResult, problems: list[Problem]) -> str:
    if usable_file(path / "experiment.md", "experiment.md", problems):
        return read_text(path / "experiment.md", "experiment.md", problems)
    document = tree.document if tree.source == "nodes_tree.json" else None
    if document is None and usable_file(path / "nodes_tree.json", "nodes_tree.json", []):
        document = read_json(path / "nodes_tree.json", "nodes_tree.json", [], retry=False)
    goal = document.get("experiment_goal") if isinstance(document, dict) else None
    return goal if isinstance(goal, str) else ""


def _read_memory(ckpt: Checkpoint, tree: TreeResult, rows: EntryBuilder) -> BackupResult:
    """Entries by §11.2 precedence into `rows`: the backup, else nodes_tree memory, else the
    v0.5 stores."""
    path, problems = ckpt.path, ckpt.problems
    backup = BackupResult(rows=rows)
    if usable_file(path / BACKUP_FILE, BACKUP_FILE, problems):
        backup = read_backup(path / BACKUP_FILE, BACKUP_FILE, problems, rows)
        if backup.records == 0:
            problems.append(Problem(file=BACKUP_FILE, what="found no records", why="empty backup"))
    if not backup.count:
        node_memory = tree.node_memory if tree.source == "nodes_tree.json" else None
        if node_memory is None and (path / "nodes_tree.json").is_file():
            node_memory = _nodes_tree_memory(path)
        if not nodes_tree_entries(node_memory or {}, rows, problems):
            memory_store_entries(path, rows, problems)
        memory_json_entries(path, rows, problems)
    _warn_stale_backup(ckpt, backup)
    return backup


def _nodes_tree_memory(path: Path) -> dict:
    """The per-node `memory` arrays of nodes_tree.json when the tree itself came from tree.json."""
    document = read_json(path / "nodes_tree.json", "nodes_tree.json", [], retry=False)
    memory = {}
    for raw in raw_node_list(document) or []:
        if isinstance(raw, dict) and isinstance(raw.get("id"), str) and "memory" in raw:
            memory.setdefault(raw["id"], raw["memory"])
    return memory


def _warn_stale_backup(ckpt: Checkpoint, backup: BackupResult) -> None:
    """§3.1: a resumed run does not re-write the backup; it may predate part of the tree."""
    stamps = backup.stamps()
    done = [parse_iso(n.completed_at) for n in ckpt.nodes.values() if n.completed_at]
    done = [t for t in done if t is not None]
    if not stamps or not done:
        return
    newest_entry, newest_node = max(stamps), max(done)
    if newest_entry < newest_node - STALE_BACKUP_S:
        late = sum(1 for t in done if t > newest_entry + STALE_BACKUP_S)
        ckpt.problems.append(
            Problem(
                file=BACKUP_FILE,
                what=f"the backup may predate {late} completed nodes",
                why=(
                    f"its newest entry is {newest_node - newest_entry:.0f} s older than the "
                    "newest completed node (a resumed run does not rewrite the backup)"
                ),
                severity="info",
            )
        )


def _core(ckpt: Checkpoint, backup: BackupResult) -> CoreBlocks:
    if backup.core_seed is not None:
        return core_from_seed(backup.core_seed, BACKUP_FILE)
    return approximate_core(ckpt.path, ckpt.experiment_goal, ckpt.problems)
