"""Memory sources used when there is no backup (§11.2): the `memory` arrays of `nodes_tree.json`
(partial: the pipeline keeps the 20 newest entries per node, capped at 2000 characters), and the
v0.5 stores `memory_store.jsonl*` (node scope) and `memory.json*` (react, a JSON array).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ari_mem_tui.checkpoint.backup import add_entry, parse_backup_line, parse_memory_record
from ari_mem_tui.checkpoint.jsonfile import read_json
from ari_mem_tui.checkpoint.jsonlines import TooLong, file_lines
from ari_mem_tui.checkpoint.problems import FileProblems
from ari_mem_tui.checkpoint.values import parse_iso
from ari_mem_tui.model import Problem
from ari_mem_tui.model.columns import EntryBuilder

NODES_TREE = "nodes_tree.json"


def nodes_tree_entries(
    node_memory: dict[str, Any], rows: EntryBuilder, problems: list[Problem]
) -> int:
    """Entries from the per-node `memory` arrays the paper pipeline adds (§2.3), into `rows`;
    how many."""
    sink = FileProblems(NODES_TREE, problems)
    before = len(rows)
    record_no = 0
    for node_id, items in node_memory.items():
        if not isinstance(items, list):
            sink.add(f"node {node_id}", "skipped its memory", "memory is not a list")
            continue
        for index, item in enumerate(items):
            record_no += 1
            where = f"node {node_id} memory[{index}]"
            if not isinstance(item, dict):
                sink.add(where, "skipped the item", "not an object")
                continue
            parsed = parse_memory_record({**item, "node_id": node_id}, "node_scope")
            if parsed.record is None:
                sink.add(where, "skipped the item", parsed.error or "unreadable")
                continue
            add_entry(rows, parsed.record, NODES_TREE, record_no, partial=True)
    sink.close()
    return len(rows) - before


def legacy_files(ckpt: Path, stem: str) -> list[Path]:
    """`<stem>` and its `<stem>.migrated-<ts>` renames, current file last."""
    migrated = sorted(ckpt.glob(f"{stem}.migrated-*"))
    current = ckpt / stem
    return [p for p in migrated if p.is_file()] + ([current] if current.is_file() else [])


def memory_store_entries(ckpt: Path, rows: EntryBuilder, problems: list[Problem]) -> int:
    """v0.5 node-scope store: one `{node_id, text, metadata, ts}` object per line, into
    `rows`; how many."""
    before = len(rows)
    seen: set[tuple[str, float | None, str]] = set()
    for path in legacy_files(ckpt, "memory_store.jsonl"):
        name = path.name
        sink = FileProblems(name, problems)
        try:
            with path.open("rb") as handle:
                lines = list(enumerate(file_lines(handle), start=1))
        except OSError as exc:
            problems.append(Problem(file=name, what="skipped the file", why=str(exc)))
            continue
        for line_no, raw in lines:
            if type(raw) is TooLong:
                sink.add(f"line {line_no}", "skipped the line", raw.why())
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                sink.add(f"line {line_no}", "skipped the line", "invalid UTF-8")
                continue
            parsed = parse_backup_line(line)
            if parsed.error or (parsed.record and parsed.record["kind"] != "node_scope"):
                sink.add(f"line {line_no}", "skipped the line", parsed.error or "not a node record")
                continue
            if parsed.record is None:
                continue
            record = parsed.record
            key = (record["node_id"], record["ts"], record["text"])
            if key in seen:  # the same line in a migrated copy and the live file
                continue
            seen.add(key)
            add_entry(rows, record, name, line_no)
        sink.close()
    return len(rows) - before


def memory_json_entries(ckpt: Path, rows: EntryBuilder, problems: list[Problem]) -> int:
    """v0.5 react store: a JSON array of `{content, metadata, ts: ISO string}`, into `rows`;
    how many."""
    before = len(rows)
    for path in legacy_files(ckpt, "memory.json"):
        name = path.name
        document = read_json(path, name, problems, retry=False)
        if document is None:
            continue
        if not isinstance(document, list):
            problems.append(Problem(file=name, what="skipped the file", why="not a JSON array"))
            continue
        sink = FileProblems(name, problems)
        for index, item in enumerate(document, start=1):
            if not isinstance(item, dict):
                sink.add(f"record {index}", "skipped the record", "not an object")
                continue
            ts = item.get("ts")
            parsed = parse_memory_record(
                {**item, "ts": parse_iso(ts) if isinstance(ts, str) else ts}, "react_step"
            )
            if parsed.record is None:
                sink.add(f"record {index}", "skipped the record", parsed.error or "unreadable")
                continue
            add_entry(rows, parsed.record, name, index)
        sink.close()
    return len(rows) - before
