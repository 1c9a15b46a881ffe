"""The column store's own rules (model/columns/), on tables built here."""

from __future__ import annotations

from ari_mem_tui.model import MemoryEntry, StringTable
from ari_mem_tui.model.columns import Groups, content_id, entries_of, events_of
from ari_mem_tui.model.records import AccessEvent

TEXTS = ["plain", "日本語の方向", "lone \ud800 surrogate", "", "plain", "tab\tand\nnewline"]


def test_ids_are_the_content_ids_of_the_rows_duplicates_numbered_in_order() -> None:
    records = [
        MemoryEntry(id="", kind="node_scope", node_id=node, text=text, ts=ts, source="x")
        for node, ts in (("n1", 1.5), ("ノード", None))
        for text in TEXTS
    ]
    entries = entries_of(records, StringTable())
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
    events = events_of(records, StringTable())
    assert list(events.rows_of_op("read")) == [0, 3]
    assert list(events.rows_of_op("write")) == [1, 2, 4]


def test_an_events_scores_are_those_of_its_results() -> None:
    """`scores_at` reads each result's score as `results_at`'s dicts hold it: a number, None
    written as null, None where the row has no score, a row of another shape's own."""
    results = [
        [{"entry_id": "p1", "score": 0.99}, {"entry_id": "p2", "score": None}, {"entry_id": "p3"}],
        [],
        [{"entry_id": "p4", "score": 0.5, "extra": [1]}, {"score": 0.25, "count": 3}],
    ]
    records = [
        AccessEvent(ts=float(i), node_id="n", op="read", collection="c", source="x", results=r)
        for i, r in enumerate(results)
    ]
    events = events_of(records, StringTable())
    for row in range(len(events)):
        expected = [r.get("score") for r in events.results_at(row)]
        assert events.scores_at(row) == expected
    assert [events.scores_at(row) for row in range(3)] == [[0.99, None, None], [], [0.5, 0.25]]


def test_groups_give_each_codes_rows_as_the_dict_they_were_made_of() -> None:
    grouped = {7: [0, 2], -1: [1], 3: [], 5: [4, 5, 6]}
    groups = Groups.of(grouped)
    assert list(groups.items()) == list(grouped.items())
    assert all(groups.get(code) == rows for code, rows in grouped.items())
    assert groups.get(8) is None and groups.get(8, []) == []
    records = [
        MemoryEntry(id="", kind="node_scope", node_id=node, text=text, source="x")
        for node, text in (("a", "1"), ("b", "2"), ("a", "3"), ("c", "4"))
    ]
    entries = entries_of(records, StringTable())
    a = entries.strings.find("a")
    assert entries.rows_of_node(a) == [0, 2]
    stored = entries_of(records, StringTable())
    stored._by_node = entries.node_groups()  # as a reopen reads it off the run index
    assert [stored.rows_of_node(code) for code in range(-1, 5)] == [
        entries.rows_of_node(code) for code in range(-1, 5)
    ]
