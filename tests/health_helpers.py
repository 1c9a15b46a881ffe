"""A run built so that some nodes are starved and some entries never retrieved (ARI's files).

    root ── B   (250 entries "kernel tuning sweep nNNN", a leaf)
        ├── A1  (query "kernel tuning": the window is B's and the react steps' → starved)
        │    └── A2  (its logged start-up search returned 1 of 5 eligible → starved, recorded)
        └── C   (query "alpha result": root's 3 entries rank first → fed)

Numbers by hand (limit 5, top_k 200, BM25, each node's pool as of its start):
* B starts at T0+100: the pool is root's 3 entries → window 3, eligible 3, reached 3, hits 3.
* A1 starts at T0+1000: pool = root 3 + B 250 + react 2 = 255. Only B's and the react
  steps' texts hold the query words; the react texts ("kernel tuning") are shorter, so rank
  first: window = 2 react + 198 of B. eligible 3 (root), reached 0, hits 0 → starved,
  shortfall 3, other 198/200 = 0.99, react 2/200 = 0.01.
* C starts at T0+1000: root's 3 rank first, then zero scores in pool order (B's first 197):
  eligible 3, reached 3, hits 3, other 197/200 = 0.985, react 0.
* A2 starts at its first start-up read, T0+1999.8: eligible = root 3 + A1's 2 written before
  (A1's third is written at T0+2500) = 5; the logged search returned 1 → starved, shortfall 4.
  Its replay ("gamma direction" matches nothing: all scores 0, pool order) holds root's 3, then
  B's first 197: reached 3, replayed hits 3, other 0.985.
Entries (node scope 256): B's 250 are leaf entries. Of root's 3 and A1's 3: A2's inheritance
burst read root's 3 and A1's first 2 → 5 retrieved by a descendant, A1's late one never.
Searches that returned a non-leaf entry to a descendant: A2's start-up search (A1's first),
C's LLM search found only in its trace_log (root's first) → never searched: 4.
Retrievals: inherit 5, startup 1, llm 1 (from trace_log 1).
"""

from __future__ import annotations

import json
from pathlib import Path

from checkpoint_helpers import (
    T0,
    node,
    react,
    read_event,
    scope,
    write_access,
    write_backup,
    write_event,
    write_tree,
)

ROOT, B, A1, A2, C = (
    "node_t_root",
    "node_bbbbbbbb",
    "node_a1a1a1a1",
    "node_a2a2a2a2",
    "node_cccccccc",
)
A2_START = T0 + 2000.0
ROOT_IDS = ["p-root-0", "p-root-1", "p-root-2"]
A1_IDS = ["p-a1-0", "p-a1-1", "p-a1-2"]


def c_trace() -> list[str]:
    args = {"query": "alpha", "ancestor_ids": [ROOT], "limit": 5}
    result = {"results": [{"entry_id": ROOT_IDS[0], "node_id": ROOT, "text": "alpha", "score": 1}]}
    return [
        f"→ search_memory({json.dumps(args)})",
        "  ← " + str({"result": json.dumps(result)}),
    ]


def write_starved_run(path: Path, run_id: str = "20260101000000_starved") -> Path:
    nodes = [
        node(ROOT, created=T0, original_direction="root direction", eval_summary="root"),
        node(B, ROOT, [ROOT], created=T0 + 100, original_direction="kernel tuning baseline"),
        node(A1, ROOT, [ROOT], created=T0 + 1000, original_direction="kernel tuning"),
        node(
            C,
            ROOT,
            [ROOT],
            created=T0 + 1000,
            original_direction="alpha result",
            trace_log=c_trace(),
        ),
        node(A2, A1, [ROOT, A1], created=T0 + 1900, original_direction="gamma direction"),
    ]
    for raw in nodes:
        raw["children"] = [n["id"] for n in nodes if n["parent_id"] == raw["id"]]
    write_tree(path, nodes, run_id=run_id)
    root_texts = ["alpha result one", "alpha result two", "alpha result three"]
    a1_texts = ["beta finding first", "beta finding second", "beta finding late"]
    a1_ts = [T0 + 1500, T0 + 1501, T0 + 2500]
    records = [scope(ROOT, t, T0 + 10 + i) for i, t in enumerate(root_texts)]
    records += [scope(B, f"kernel tuning sweep n{i:03d}", T0 + 200 + i * 0.01) for i in range(250)]
    records += [scope(A1, t, ts) for t, ts in zip(a1_texts, a1_ts, strict=True)]
    records += [react("kernel tuning", T0 + 300, {"node_id": B}) for _ in range(2)]
    write_backup(path, records)
    events = [
        write_event(T0 + 10 + i + 0.1, ROOT, ROOT_IDS[i], t) for i, t in enumerate(root_texts)
    ]
    events += [
        write_event(ts + 0.1, A1, A1_IDS[i], t)
        for i, (t, ts) in enumerate(zip(a1_texts, a1_ts, strict=True))
    ]
    events += [
        read_event(
            A2_START - 0.2,
            A1,
            "inherit:get_node_memory",
            [ROOT],
            limit=3,
            results=[{"src_node_id": ROOT, "entry_id": e, "type": None} for e in ROOT_IDS],
        ),
        read_event(
            A2_START - 0.1,
            A1,
            "inherit:get_node_memory",
            [A1],
            limit=2,
            results=[{"src_node_id": A1, "entry_id": e, "type": None} for e in A1_IDS[:2]],
        ),
        read_event(
            A2_START,
            A1,
            "gamma direction",
            [ROOT, A1],
            limit=5,
            results=[{"entry_id": A1_IDS[0], "src_node_id": A1, "score": 0.97}],
        ),
    ]
    events.sort(key=lambda e: e["ts"])
    write_access(path, events)
    return path


def write_fed_run(path: Path, run_id: str = "20260102000000_fed") -> Path:
    """root → child, the child's search gets every one of root's 2 entries: nobody starved."""
    nodes = [
        node(ROOT, created=T0, original_direction="root direction"),
        node(A1, ROOT, [ROOT], created=T0 + 100, original_direction="alpha"),
    ]
    nodes[0]["children"] = [A1]
    write_tree(path, nodes, run_id=run_id)
    write_backup(path, [scope(ROOT, "alpha one", T0 + 1), scope(ROOT, "alpha two", T0 + 2)])
    return path
