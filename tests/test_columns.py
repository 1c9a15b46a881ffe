"""The column store's own rules (model/columns.py), on tables built here."""

from __future__ import annotations

from ari_mem_tui.model import Entries, Events, MemoryEntry, StringTable
from ari_mem_tui.model.columns import content_id
from ari_mem_tui.model.records import AccessEvent

TEXTS = ["plain", "日本語の方向", "lone \ud800 surrogate", "", "plain", "tab\tand\nnewline"]


def test_ids_are_the_content_ids_of_the_rows_duplicates_numbered_in_order() -> None:
    records = [
        MemoryEntry(id="", kind="node_scope", node_id=node, text=text, ts=ts, source="x")
        for node, ts in (("n1", 1.5), ("ノード", None))
        for text in TEXTS
    ]
    entries = Entries.from_records(records, StringTable())
    entries.ids = None  # (computed from the columns, not given)
    expected, seen = [], {}
    for record in records:
        base = content_id(record.kind, record.node_id, record.ts, record.text)
        seen[base] = seen.get(base, 0) + 1
        expected.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    assert entries.all_ids() == expected
    assert len(set(expected)) == len(expected) and expected[4].endswith("-2")
    entries.ids = None
    assert [entries.id_at(row) for row in range(len(entries))] == expected  # one at a time


def test_rows_of_op_are_the_rows_of_that_op_in_order() -> None:
    ops = ["read", "write", "write", "read", "write"]
    records = [
        AccessEvent(ts=float(i), node_id="n", op=op, collection="c", source="x")
        for i, op in enumerate(ops)
    ]
    events = Events.from_records(records, StringTable())
    assert list(events.rows_of_op("read")) == [0, 3]
    assert list(events.rows_of_op("write")) == [1, 2, 4]
