"""ARI's memory skill as a run meets it: the CoW guard, the access log and two backends.

Written from docs/ari-format.md (§3.7 footers, §4 access log, §4.6 CoW, §5.1–§5.2 search)
and facts read in ARI's source (ari-skill-memory backends, access_log.py); no code is copied.
Every call takes the `Process` that makes it: the memory-skill MCP subprocess, whose
ARI_CURRENT_NODE_ID only `_set_current_node` changes (right before each guarded write), or the
ari-core process, which never sets it (so its events log `node_id ""`). Time is the run's
simulated clock: nothing here sleeps.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

COW_VIOLATION = "node_id does not match current node (CoW violation)"
NOT_SET = "ARI_CURRENT_NODE_ID not set"
PREVIEW_CHARS = 200  # ARI_MEMORY_ACCESS_PREVIEW_CHARS
OVERFETCH = 200  # ARI_MEMORY_LETTA_OVERFETCH
SEPARATOR = "\n<<<ARI_META>>>\n"
INHERIT = "inherit:get_node_memory"
BULK = "inherit:bulk_get_node_memory"


@dataclass
class Process:
    """One OS process of the run: its name in the access log's batches, and its env."""

    name: str  # "skill" (the memory MCP server) or "core" (ari-core)
    current: str = ""  # ARI_CURRENT_NODE_ID in this process


@dataclass
class Event:
    process: str
    fields: dict[str, Any]
    reader: str = ""  # who really read (the generator knows): a node id, "pipeline", "select"


@dataclass
class AccessLog:
    """Events in call order, per process; `lines()` gives them as the file holds them."""

    events: list[Event] = field(default_factory=list)

    def write(self, process: Process, fields: dict[str, Any], reader: str = "") -> Event:
        event = Event(process.name, fields, reader)
        self.events.append(event)
        return event

    def lines(self, flush_s: float = 2.0) -> list[str]:
        """Each process appends its queue every ~2 s (§4.1): the file is ordered by batch, not by
        ts, and the two processes' batches interleave."""
        if not self.events:
            return []
        start = min(e.fields["ts"] for e in self.events)
        order = {"skill": 0, "core": 1}
        keyed = [
            (int((e.fields["ts"] - start) // flush_s), order[e.process], seq, e)
            for seq, e in enumerate(self.events)
        ]
        keyed.sort(key=lambda item: item[:3])
        return [json.dumps(item[3].fields, ensure_ascii=False) for item in keyed]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


class Backend(Protocol):
    """What the generator calls: the memory skill's tools, as ARI's backends answer them."""

    name: str

    def add_memory(self, proc: Process, node_id: str, text: str, metadata: dict) -> dict: ...
    def search_memory(
        self, proc: Process, query: str, ancestor_ids: list[str], limit: int, reader: str
    ) -> dict: ...
    def get_node_memory(self, proc: Process, node_id: str, reader: str) -> dict: ...
    def bulk_get_node_memory(self, proc: Process, node_ids: list[str], reader: str) -> dict: ...
    def clear_node_memory(self, proc: Process, node_id: str) -> dict: ...
    def react_add(self, proc: Process, content: str, metadata: dict) -> None: ...
    def react_search(self, proc: Process, query: str, limit: int) -> list[dict]: ...
    def seed_core_memory(self, context: dict) -> None: ...
    def backup_records(self) -> list[dict]: ...


class SkillBase:
    """The parts both backends share: the CoW guard and the access-log events (§4.2, §4.6)."""

    name = ""

    latency = 0.002  # seconds one call takes (the log's ts is taken after it returned)
    list_latency = 0.003  # one node's listing (get_node_memory)

    def __init__(self, clock: list[float], log: AccessLog, rng: random.Random) -> None:
        self.time, self.log, self.rng = clock, log, rng
        self.context: dict = {}
        self.seeded_at = 0.0

    def clock(self) -> float:
        return self.time[0]

    def _took(self, seconds: float) -> None:
        """The call ran this long: the run's clock moves on (calls never overlap in time)."""
        self.time[0] = round(self.time[0] + seconds, 6)

    # the guard: ARI checks the env of the process, never the caller's claim
    def _cow(self, proc: Process, node_id: str) -> str | None:
        if not proc.current:
            return NOT_SET
        if node_id != proc.current:
            return COW_VIOLATION
        return None

    def _write_event(self, proc: Process, collection: str, entry_id: str, text: str, md: dict):
        self.log.write(
            proc,
            {
                "ts": self.clock(),
                "node_id": proc.current,
                "op": "write",
                "collection": collection,
                "entry_id": entry_id,
                "text_preview": text[:PREVIEW_CHARS],
                "metadata": md,
            },
        )

    def _read_event(
        self,
        proc: Process,
        collection: str,
        query: str,
        ancestors: list[str] | None,
        limit: int,
        results: list[dict],
        reader: str,
    ) -> None:
        self.log.write(
            proc,
            {
                "ts": self.clock(),
                "node_id": proc.current,
                "op": "read",
                "collection": collection,
                "query": query,
                "ancestor_ids": ancestors,
                "limit": limit,
                "results": results,
            },
            reader,
        )

    def add_memory(self, proc: Process, node_id: str, text: str, metadata: dict) -> dict:
        refused = self._cow(proc, node_id)
        if refused:
            return {"ok": False, "error": refused}
        entry_id = self._insert(node_id, text, metadata or {})
        self._took(self.latency)
        self._write_event(proc, "node_scope", entry_id, text, metadata or {})
        return {"ok": True, "id": entry_id}

    def clear_node_memory(self, proc: Process, node_id: str) -> dict:
        refused = self._cow(proc, node_id)
        if refused:
            return {"removed": 0, "error": refused}
        raise NotImplementedError("the generated run never clears its own memory")

    def search_memory(
        self, proc: Process, query: str, ancestor_ids: list[str], limit: int, reader: str
    ) -> dict:
        if not ancestor_ids:
            return {"results": []}  # short-circuit: nothing searched, nothing logged (§5.1)
        results = self._search(query, ancestor_ids, limit)
        self._took(self.latency)
        logged = [
            {"entry_id": r["entry_id"], "src_node_id": r["node_id"], "score": r["score"]}
            for r in results
        ]
        self._read_event(proc, "node_scope", query, list(ancestor_ids), limit, logged, reader)
        return {"results": results}

    def get_node_memory(self, proc: Process, node_id: str, reader: str) -> dict:
        rows = self._node_rows(node_id)
        self._took(self.list_latency)
        logged = [
            {"src_node_id": node_id, "entry_id": r["id"], "type": r["metadata"].get("type")}
            for r in rows
        ]
        self._read_event(proc, "node_scope", INHERIT, [node_id], len(rows), logged, reader)
        return {
            "entries": [{"text": r["text"], "metadata": r["metadata"], "ts": r["ts"]} for r in rows]
        }

    def bulk_get_node_memory(self, proc: Process, node_ids: list[str], reader: str) -> dict:
        by_node = {nid: self._node_rows(nid) for nid in node_ids}
        count = sum(len(rows) for rows in by_node.values())
        self._took(self.list_latency * max(1, len(node_ids)))
        logged = [{"src_node_id": nid, "count": len(by_node[nid])} for nid in node_ids]
        self._read_event(proc, "node_scope", BULK, list(node_ids), count, logged, reader)
        return {
            "by_node": {
                nid: [
                    {
                        "entry_id": r["id"],
                        "text": r["text"],
                        "metadata": r["metadata"],
                        "ts": r["ts"],
                    }
                    for r in rows
                ]
                for nid, rows in by_node.items()
            }
        }

    def react_add(self, proc: Process, content: str, metadata: dict) -> None:
        entry_id = self._insert_react(content, metadata)
        self._took(self.latency)
        self._write_event(proc, "react_step", entry_id, content, metadata)

    def react_search(self, proc: Process, query: str, limit: int) -> list[dict]:
        found = self._react_search(query, limit)
        self._took(self.latency)
        logged = [{"entry_id": r["id"], "src_node_id": "", "score": r["score"]} for r in found]
        self._read_event(proc, "react_step", query, None, limit, logged, "select")
        return found

    def backup_records(self) -> list[dict]:
        """`_do_backup`'s lines (§3.1): node groups in order of each node's first entry, each
        by ts; react steps by ts; the core seed last when the context is not empty."""
        by_node: dict[str, list[dict]] = {}
        for row in sorted(self._all_rows(), key=lambda r: r["ts"]):
            by_node.setdefault(row["node_id"], []).append(row)
        records = [
            {
                "kind": "node_scope",
                "node_id": nid,
                "text": r["text"],
                "metadata": r["metadata"],
                "ts": r["ts"],
            }
            for nid, rows in by_node.items()
            for r in rows
        ]
        records += [
            {"kind": "react_step", "text": r["content"], "metadata": r["metadata"], "ts": r["ts"]}
            for r in sorted(self._react_rows(), key=lambda r: r["ts"])
        ]
        context = self.experiment_context()
        if context:
            records.append(
                {
                    "kind": "core_seed",
                    "persona": "",
                    "human": "",
                    "context": context,
                    "seeded_at": context.get("seeded_at", 0.0),
                }
            )
        return records

    def experiment_context(self) -> dict:
        return dict(self.context)

    def seed_core_memory(self, context: dict) -> None:
        self.context = dict(context)
        self.seeded_at = self.clock()

    # per backend
    def _insert(self, node_id: str, text: str, metadata: dict) -> str:
        raise NotImplementedError

    def _insert_react(self, content: str, metadata: dict) -> str:
        raise NotImplementedError

    def _search(self, query: str, ancestors: list[str], limit: int) -> list[dict]:
        raise NotImplementedError

    def _react_search(self, query: str, limit: int) -> list[dict]:
        raise NotImplementedError

    def _node_rows(self, node_id: str) -> list[dict]:
        return sorted(
            (r for r in self._all_rows() if r["node_id"] == node_id), key=lambda r: r["ts"]
        )

    def _all_rows(self) -> list[dict]:
        raise NotImplementedError

    def _react_rows(self) -> list[dict]:
        raise NotImplementedError


def keyword_score(text: str, query: str) -> float:
    """ARI's InMemoryBackend score: the share of the query's whitespace words found in the
    lower-cased text (substring match). Written here from the spec, not imported: the
    generator must not share code with the ranker it is the fixture for."""
    words = [w.lower() for w in (query or "").split() if w]
    if not words:
        return 0.0
    haystack = (text or "").lower()
    return sum(1 for w in words if w in haystack) / len(words)


class InMemoryBackend(SkillBase):
    """ARI's `ARI_MEMORY_BACKEND=in_memory`: a dict of entries in insertion order, uuid4 ids,
    keyword-overlap search over the node store only (§5.2), a core seed stamped `seeded_at`."""

    name = "in_memory"

    def __init__(self, clock: list[float], log: AccessLog, rng: random.Random) -> None:
        super().__init__(clock, log, rng)
        self.rows: dict[str, dict] = {}  # insertion order, as ARI's dict
        self.react: list[dict] = []

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _insert(self, node_id: str, text: str, metadata: dict) -> str:
        entry_id = self._uuid()
        self.rows[entry_id] = {
            "id": entry_id,
            "node_id": node_id,
            "text": text,
            "metadata": metadata,
            "ts": self.clock(),
        }
        return entry_id

    def _insert_react(self, content: str, metadata: dict) -> str:
        entry_id = self._uuid()
        row = {"id": entry_id, "content": content, "metadata": metadata, "ts": self.clock()}
        self.react.append(row)
        return entry_id

    def _search(self, query: str, ancestors: list[str], limit: int) -> list[dict]:
        allowed = set(ancestors)
        blank = not (query or "").strip()
        scored = []
        for row in self.rows.values():
            if row["node_id"] not in allowed:
                continue
            score = keyword_score(row["text"], query)
            if score > 0 or blank:
                scored.append(
                    {
                        "entry_id": row["id"],
                        "node_id": row["node_id"],
                        "text": row["text"],
                        "metadata": row["metadata"],
                        "score": score,
                    }
                )
        scored.sort(key=lambda r: -r["score"])  # stable: ties keep insertion order
        return scored[:limit]

    def _react_search(self, query: str, limit: int) -> list[dict]:
        scored = [(keyword_score(r["content"], query), r) for r in self.react]
        scored = [pair for pair in scored if pair[0] > 0]
        scored.sort(key=lambda pair: -pair[0])
        return [{**row, "score": score} for score, row in scored[:limit]]

    def _all_rows(self) -> list[dict]:
        return list(self.rows.values())

    def _react_rows(self) -> list[dict]:
        return list(self.react)

    def experiment_context(self) -> dict:
        context = dict(self.context)
        context["seeded_at"] = self.seeded_at  # InMemory's get_experiment_context adds it
        return context


def footer(ckpt_hash: str, node_id: str, metadata: dict, ts: float, react: bool) -> str:
    """ARI's metadata footer (§3.7): sorted keys, non-ASCII kept, odd values as strings."""
    if react:
        meta = {
            "collection": f"ari_react_{ckpt_hash}",
            "ari_checkpoint": ckpt_hash,
            "kind": "react_step",
            "node_id": metadata.get("node_id") or "",
            "step": metadata.get("step"),
            "ari_metadata": metadata,
            "ts": ts,
        }
    else:
        meta = {
            "collection": f"ari_node_{ckpt_hash}",
            "node_id": node_id,
            "ari_checkpoint": ckpt_hash,
            "kind": "node_scope",
            "ari_metadata": metadata,
            "ts": ts,
        }
    return json.dumps(meta, sort_keys=True, ensure_ascii=False, default=str)


class LettaBackend(SkillBase):
    """ARI's LettaBackend against a real Letta 0.16.7 through `letta-client`: one agent per
    checkpoint, passages carrying ARI's footer, `passages.search(top_k = max(200, limit·40))`,
    the post-filter in rank order, scores `max(0, 1 − 0.01·r)` (§5.1–§5.2).

    Passages are created with `created_at` set to the simulated clock (a real run's server stamps
    its own now, the same moment). Listings (`get_node_memory`, the backup) read a mirror of what
    was inserted instead of paging the server each time; `verify_mirror` checks it against the
    server once, at the end."""

    name = "letta"
    latency = 0.25  # a passage insert or a search takes ~0.2–0.5 s (docs/letta.md)
    list_latency = 0.6  # a filtered listing pages through every passage

    def __init__(
        self,
        clock: list[float],
        log: AccessLog,
        rng: random.Random,
        client: Any,
        ckpt_hash: str,
        embedding: str,
    ) -> None:
        super().__init__(clock, log, rng)
        self.client, self.ckpt_hash = client, ckpt_hash
        self.agent = client.agents.create(
            name=f"ari_agent_{ckpt_hash}",
            model="letta/letta-free",
            embedding=embedding,
            include_base_tools=False,
            memory_blocks=[
                {"label": "persona", "value": ""},
                {"label": "human", "value": ""},
                {"label": "ari_context", "value": ""},
            ],
        )
        self.rows: list[dict] = []  # the mirror: node passages
        self.react: list[dict] = []  # react passages

    def _create(self, blob: str, ts: float) -> str:
        made = self.client.agents.passages.create(self.agent.id, text=blob, created_at=iso(ts))
        return (made[0] if isinstance(made, list) else made).id

    def _insert(self, node_id: str, text: str, metadata: dict) -> str:
        ts = self.clock()
        blob = text + SEPARATOR + footer(self.ckpt_hash, node_id, metadata, ts, react=False)
        pid = self._create(blob, ts)
        self.rows.append(
            {"id": pid, "node_id": node_id, "text": text, "metadata": metadata, "ts": ts}
        )
        return pid

    def _insert_react(self, content: str, metadata: dict) -> str:
        ts = self.clock()
        blob = content + SEPARATOR + footer(self.ckpt_hash, "", metadata, ts, react=True)
        pid = self._create(blob, ts)
        self.react.append({"id": pid, "content": content, "metadata": metadata, "ts": ts})
        return pid

    def _window(self, query: str, top_k: int) -> list[tuple[str, str, dict]]:
        """The server's ranking: (passage id, text, footer) in rank order."""
        found = self.client.agents.passages.search(self.agent.id, query=query, top_k=top_k)
        rows = []
        for row in found.results:
            text, _, tail = row.content.rpartition(SEPARATOR)
            try:
                meta = json.loads(tail)
            except ValueError:
                text, meta = row.content, {}
            rows.append((row.id, text, meta if isinstance(meta, dict) else {}))
        return rows

    def _search(self, query: str, ancestors: list[str], limit: int) -> list[dict]:
        allowed = set(ancestors)
        kept = []
        for rank, (pid, text, meta) in enumerate(self._window(query, max(OVERFETCH, limit * 40))):
            if (
                meta.get("node_id") in allowed
                and meta.get("ari_checkpoint") == self.ckpt_hash
                and meta.get("kind") == "node_scope"
            ):
                kept.append(
                    {
                        "entry_id": pid,
                        "node_id": meta.get("node_id", ""),
                        "text": text,
                        "metadata": meta.get("ari_metadata") or {},
                        "score": max(0.0, 1.0 - 0.01 * rank),
                    }
                )
        return kept[:limit]

    def _react_search(self, query: str, limit: int) -> list[dict]:
        by_id = {r["id"]: r for r in self.react}
        found = []
        for rank, (pid, _text, meta) in enumerate(self._window(query, max(OVERFETCH, limit))):
            if meta.get("kind") == "react_step" and pid in by_id:
                found.append({**by_id[pid], "score": max(0.0, 1.0 - 0.01 * rank)})
        return found[:limit]

    def _all_rows(self) -> list[dict]:
        return list(self.rows)

    def _react_rows(self) -> list[dict]:
        return list(self.react)

    def seed_core_memory(self, context: dict) -> None:
        super().seed_core_memory(context)
        value = json.dumps(context, ensure_ascii=False)
        self.client.agents.blocks.update("ari_context", agent_id=self.agent.id, value=value)

    def verify_mirror(self) -> None:
        """Every passage the server holds is one the mirror holds, byte for byte."""
        served, after = [], None
        while True:
            page = self.client.agents.passages.list(
                self.agent.id, limit=200, after=after, ascending=True
            )
            if not page:
                break
            served += [(p.id, p.text) for p in page]
            after = page[-1].id
        mine = [
            (
                r["id"],
                r["text"]
                + SEPARATOR
                + footer(self.ckpt_hash, r["node_id"], r["metadata"], r["ts"], react=False),
            )
            for r in self.rows
        ]
        mine += [
            (
                r["id"],
                r["content"]
                + SEPARATOR
                + footer(self.ckpt_hash, "", r["metadata"], r["ts"], react=True),
            )
            for r in self.react
        ]
        if sorted(served) != sorted(mine):
            raise AssertionError("the Letta server does not hold what the generator inserted")
