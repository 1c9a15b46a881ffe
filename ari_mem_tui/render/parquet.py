"""A run as Parquet files, for engines that query many runs at once (DuckDB, Spark, Trino).

`ari-mem-tui export RUN|WORKSPACE --parquet DIR` writes one folder per run, `DIR/<run id>/`,
holding six tables, each row carrying the run's id (`run_id`) so that a glob over the folders
(`DIR/*/nodes.parquet`) is one table of every run:

- `nodes`: the tree (one row per node, its parent, depth, status, score, metrics as JSON);
- `entries`: the memory (our entry id, the Letta passage id, owner, kind, time, text, metadata
  as JSON) and how often each was retrieved, as `health` counts it (start-up searches,
  inheritance reads, LLM calls, other), so "never retrieved" is one WHERE;
- `reads`: every read of the access log with the reader the files attribute it to (`reader`,
  `reader_how`: ARI logs a read under the node that last wrote, not the one that read);
- `search_results`: the rows each read returned, in order (`rank` from 1), with our entry id
  where the passage is in the run's memory;
- `findings`: the audit's leaks, scope violations, rejected writes and problems, and the
  unattributed reads (kind `unattributed`: listed, never counted as findings);
- `health`: each node's start-up search as `health` judges it (hits recorded or replayed,
  eligible, window, starved), with the ranker that replayed the unrecorded ones.

The columns and their types are docs/schema/parquet.md (a test checks it against `SCHEMAS`).
pyarrow writes the files; it is an optional extra (`pip install 'ari-mem-tui[parquet]'`), and
without it the command says so in one line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ari_mem_tui.audit import AuditReport
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.columns import KINDS
from ari_mem_tui.model.health import Health

PARQUET_EXTRA = "pip install 'ari-mem-tui[parquet]'"
SCHEMA_VERSION = 1  # in every file's metadata (ari_mem_tui.schema_version)

# (column, type) of each table: "string", "int64", "float64", "bool", "list<string>"
SCHEMAS: dict[str, list[tuple[str, str]]] = {
    "nodes": [
        ("run_id", "string"),
        ("node_id", "string"),
        ("parent_id", "string"),
        ("depth", "int64"),
        ("status", "string"),
        ("label", "string"),
        ("name", "string"),
        ("created_at", "string"),
        ("completed_at", "string"),
        ("score", "float64"),
        ("metrics", "string"),
        ("eval_summary", "string"),
        ("original_direction", "string"),
        ("ancestor_ids", "list<string>"),
    ],
    "entries": [
        ("run_id", "string"),
        ("entry_id", "string"),
        ("letta_id", "string"),
        ("node_id", "string"),
        ("kind", "string"),
        ("ts", "float64"),
        ("text", "string"),
        ("metadata", "string"),
        ("source", "string"),
        ("source_line", "int64"),
        ("partial", "bool"),
        ("ari_checkpoint", "string"),
        ("retrieved_startup", "int64"),
        ("retrieved_inherit", "int64"),
        ("retrieved_llm", "int64"),
        ("retrieved_other", "int64"),
        ("retrieved", "int64"),
    ],
    "reads": [
        ("run_id", "string"),
        ("read", "int64"),
        ("ts", "float64"),
        ("node_id", "string"),
        ("reader", "string"),
        ("reader_how", "string"),
        ("reader_note", "string"),
        ("collection", "string"),
        ("query", "string"),
        ("limit", "int64"),
        ("ancestor_ids", "list<string>"),
        ("results", "int64"),
        ("source", "string"),
        ("source_line", "int64"),
    ],
    "search_results": [
        ("run_id", "string"),
        ("read", "int64"),
        ("rank", "int64"),
        ("passage_id", "string"),
        ("entry_id", "string"),
        ("src_node_id", "string"),
        ("node_id", "string"),
        ("score", "float64"),
        ("type", "string"),
    ],
    "findings": [
        ("run_id", "string"),
        ("kind", "string"),
        ("severity", "string"),
        ("node_id", "string"),
        ("explanation", "string"),
        ("ref", "string"),
        ("ts", "float64"),
        ("targets", "list<string>"),
        ("tool", "string"),
        ("query", "string"),
        ("scope", "list<string>"),
        ("passages", "list<string>"),
        ("text", "string"),
        ("reason", "string"),
    ],
    "health": [
        ("run_id", "string"),
        ("node_id", "string"),
        ("depth", "int64"),
        ("started", "float64"),
        ("started_source", "string"),
        ("searched", "bool"),
        ("why_not", "string"),
        ("eligible", "int64"),
        ("reached", "int64"),
        ("hits", "int64"),
        ("hits_source", "string"),
        ("hits_recorded", "int64"),
        ("hits_replayed", "int64"),
        ("limit", "int64"),
        ("window", "int64"),
        ("other_branches", "int64"),
        ("react", "int64"),
        ("lineage", "int64"),
        ("starved", "bool"),
        ("shortfall", "int64"),
        ("query", "string"),
        ("ranker", "string"),
    ],
}


class ParquetUnavailable(Exception):
    """pyarrow is not installed (the `parquet` extra)."""


def _arrow() -> Any:
    try:
        import pyarrow  # noqa: PLC0415 - an optional extra, ~0.3 s to import
        import pyarrow.parquet  # noqa: PLC0415
    except ImportError:
        raise ParquetUnavailable(f"Parquet export needs pyarrow: {PARQUET_EXTRA}") from None
    return pyarrow


def _finite(value: Any) -> Any:
    """A float that is no finite number (NaN stands for "no ts") as null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _json(value: Any) -> str | None:
    """A value as JSON text (a lone surrogate escaped, NaN as null), None for None."""
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=True, default=str).replace("NaN", "null")


def _utf8(value: Any) -> Any:
    """A string Arrow can hold (UTF-8): a lone surrogate as its \\uXXXX escape, as JSON shows
    it (a memory text may hold one; it reads back as the same escape everywhere)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    elif isinstance(value, list):
        return [_utf8(item) for item in value]
    return value


def write_run(
    ckpt: Checkpoint, report: AuditReport, health: Health, usage: Any, out: Path
) -> list[Path]:
    """The run's six tables into `out` (made; files replaced); the files written."""
    pa = _arrow()
    run_id = ckpt.run_id or ckpt.path.name
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def write(name: str, data: dict[str, list[Any]]) -> None:
        rows = len(next(iter(data.values()))) if data else 0
        data = {"run_id": [run_id] * rows, **data}
        written.append(_write(pa, name, data, out / f"{name}.parquet"))

    # one table at a time (a 10k run's 590k result rows as Python lists are a few hundred MB)
    write("nodes", _nodes(ckpt))
    write("entries", _entries(ckpt, usage))
    reads, results = _reads(ckpt)
    write("reads", reads)
    del reads
    write("search_results", results)
    del results
    write("findings", _findings(report))
    write("health", _health(health))
    return written


def _write(pa: Any, name: str, data: dict[str, list[Any]], path: Path) -> Path:
    fields, arrays = [], []
    for column, kind in SCHEMAS[name]:
        arrow_type = _ARROW_TYPES[kind](pa)
        fields.append(pa.field(column, arrow_type))
        values = data[column]
        if kind in ("string", "list<string>"):
            values = [_utf8(v) for v in values]
        arrays.append(pa.array(values, type=arrow_type))
    meta = {b"ari_mem_tui.table": name.encode(), b"ari_mem_tui.schema_version": b"1"}
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))
    tmp = path.with_name(f".{path.name}.tmp")
    import pyarrow.parquet as pq  # noqa: PLC0415 - with pyarrow, above

    pq.write_table(table, tmp)
    tmp.replace(path)
    return path


_ARROW_TYPES: dict[str, Callable[[Any], Any]] = {
    "string": lambda pa: pa.string(),
    "int64": lambda pa: pa.int64(),
    "float64": lambda pa: pa.float64(),
    "bool": lambda pa: pa.bool_(),
    "list<string>": lambda pa: pa.list_(pa.string()),
}


def _empty(name: str) -> dict[str, list[Any]]:
    return {column: [] for column, _ in SCHEMAS[name] if column != "run_id"}


def _nodes(ckpt: Checkpoint) -> dict[str, list[Any]]:
    out = _empty("nodes")
    parents = {child: parent for parent, child in ckpt.graph.edges}
    for node in ckpt.nodes.values():
        out["node_id"].append(node.id)
        out["parent_id"].append(parents.get(node.id, node.parent_id))
        out["depth"].append(node.depth)
        out["status"].append(node.status)
        out["label"].append(node.label)
        out["name"].append(node.name)
        out["created_at"].append(node.created_at)
        out["completed_at"].append(node.completed_at)
        out["score"].append(_finite(_number(node.score)))
        out["metrics"].append(_json(node.metrics))
        out["eval_summary"].append(node.eval_summary)
        out["original_direction"].append(node.original_direction)
        out["ancestor_ids"].append(list(node.ancestor_ids))
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _entries(ckpt: Checkpoint, usage: Any) -> dict[str, list[Any]]:
    out = _empty("entries")
    entries, strings = ckpt.entries, ckpt.entries.strings
    ids = entries.all_ids()
    counts = usage.counts.tolist() if usage is not None else [[0, 0, 0, 0]] * len(entries)
    for row in range(len(entries)):
        out["entry_id"].append(ids[row])
        out["letta_id"].append(strings[entries.letta[row]])
        out["node_id"].append(strings[entries.node[row]] or "")
        out["kind"].append(KINDS[entries.kind[row]])
        out["ts"].append(_finite(entries.ts[row]))
        out["text"].append(entries.text[row] or "")
        out["metadata"].append(_json(entries.metadata_at(row)))
        out["source"].append(strings[entries.source[row]] or "")
        out["source_line"].append(entries.line[row])
        out["partial"].append(bool(entries.partial[row]))
        out["ari_checkpoint"].append(strings[entries.ckpt[row]])
        startup, inherit, llm, other = counts[row]
        out["retrieved_startup"].append(startup)
        out["retrieved_inherit"].append(inherit)
        out["retrieved_llm"].append(llm)
        out["retrieved_other"].append(other)
        out["retrieved"].append(startup + inherit + llm + other)
    return out


def _reads(ckpt: Checkpoint) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Every read event, and the rows each returned."""
    reads, results = _empty("reads"), _empty("search_results")
    events, strings = ckpt.access_events, ckpt.access_events.strings
    by_letta = ckpt.entries_by_letta_id
    ids = ckpt.entries.all_ids()
    for row in events.rows_of_op("read"):
        event = events[row]
        returned = event.results
        reads["read"].append(row)
        reads["ts"].append(_finite(events.ts[row]))
        reads["node_id"].append(strings[events.node[row]] or "")
        reads["reader"].append(event.reader)
        reads["reader_how"].append(event.reader_how)
        reads["reader_note"].append(event.reader_note)
        reads["collection"].append(strings[events.coll[row]] or "")
        reads["query"].append(strings[events.query[row]])
        reads["limit"].append(events.limit[row])
        reads["ancestor_ids"].append(event.ancestor_ids)
        reads["results"].append(len(returned))
        reads["source"].append(strings[events.source[row]] or "")
        reads["source_line"].append(events.line[row])
        for rank, item in enumerate(returned, start=1):
            passage = item.get("entry_id") if isinstance(item, dict) else None
            passage = passage if isinstance(passage, str) else None
            code = strings.find(passage) if passage else -1
            entry = by_letta.row_of_code(code)
            score = item.get("score") if isinstance(item, dict) else None
            results["read"].append(row)
            results["rank"].append(rank)
            results["passage_id"].append(passage)
            results["entry_id"].append(ids[entry] if entry >= 0 else None)
            results["src_node_id"].append(_text(item, "src_node_id"))
            results["node_id"].append(_text(item, "node_id"))
            results["score"].append(_finite(_number(score)))
            results["type"].append(_text(item, "type"))
    return reads, results


def _text(item: Any, key: str) -> str | None:
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def _findings(report: AuditReport) -> dict[str, list[Any]]:
    out = _empty("findings")
    groups = (
        report.leaks,
        report.scope_violations,
        report.rejected_writes,
        report.problems,
        report.unattributed,
    )
    for group in groups:
        for finding in group:
            out["kind"].append(finding.kind or "unattributed")
            out["severity"].append(finding.severity)
            out["node_id"].append(finding.node_id)
            out["explanation"].append(finding.explanation)
            out["ref"].append(finding.ref)
            out["ts"].append(_finite(finding.ts))
            out["targets"].append(list(finding.targets))
            out["tool"].append(finding.tool)
            out["query"].append(finding.query)
            out["scope"].append(list(finding.scope))
            out["passages"].append([p.entry_id for p in finding.passages])
            out["text"].append(finding.text)
            out["reason"].append(finding.reason)
    return out


def _health(health: Health) -> dict[str, list[Any]]:
    out = _empty("health")
    keys = [column for column, _ in SCHEMAS["health"] if column not in ("run_id", "ranker")]
    for row in health.nodes:
        data = row.as_data()
        for key in keys:
            out[key].append(_finite(data.get(key)))
        out["ranker"].append(health.ranker)
    return out


# ---- the export of a run or of a workspace ----


def export(path: Path, out: Path, progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Every run under `path` (a run, or a workspace of runs) into `out/<run id>/`; the folders
    written. Each run is read from its run index where one is current, else from its files (no
    index written: a workspace's would fill the cache)."""
    from ari_mem_tui.workspace import scan  # noqa: PLC0415 - only for an export

    _arrow()  # (before any run is read: without pyarrow, one line and nothing done)
    found = scan(path, counts=False)
    runs = [Path(run.path) for run in found.runs]
    folders: list[Path] = []
    taken: set[str] = set()
    for done, run in enumerate(runs, start=1):
        folder = out / _folder_name(run, taken)
        if export_run(run, folder):
            folders.append(folder)
        if progress is not None:
            progress(done, len(runs))
    return folders


def _folder_name(run: Path, taken: set[str]) -> str:
    """The run's id (its folder's name for ARI), made unique among the runs exported."""
    name = run.name if run.name != "checkpoints" else run.parent.name  # (runs/<id>/checkpoints)
    name = name.replace("/", "_") or "run"
    unique, number = name, 1
    while unique in taken:
        number += 1
        unique = f"{name}-{number}"
    taken.add(unique)
    return unique


def export_run(run: Path, folder: Path) -> bool:
    """One run's tables into `folder`; False when it has no readable tree."""
    from ari_mem_tui.audit import AuditStore, kept_or_audit  # noqa: PLC0415
    from ari_mem_tui.checkpoint.load import load_checkpoint  # noqa: PLC0415
    from ari_mem_tui.health import compute_health, entry_usage  # noqa: PLC0415
    from ari_mem_tui.run import local_ranker  # noqa: PLC0415

    store = AuditStore.before_load(run)
    ckpt = load_checkpoint(run, use_index=True, defer_index=lambda _write: None)
    if ckpt.tree_source is None:
        return False
    report, _ = kept_or_audit(ckpt, store)
    # the recorded start-up searches where logged; BM25 replays the others (named per row)
    health = compute_health(ckpt, local_ranker(ckpt, "bm25", prefetch=False))
    write_run(ckpt, report, health, entry_usage(ckpt), folder)
    return True
