"""Memory and ranking from a live Letta server, in place of the checkpoint's backup.

`open_letta_run` keeps what only the files hold (tree, access log, trace data) and takes from the
server what ARI actually searched: every passage of the run's agent (decoded from ARI's footer),
the core blocks, and the ranking itself (`passages.search`, ARI's route). The post-filter stays
the one in `search.replay`, so a node's hits are computed the same way for both sources.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ari_mem_tui.checkpoint.entry_ids import EntryIds
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.checkpoint.values import as_float, nonfinite, nonfinite_why
from ari_mem_tui.letta.api import (
    MAX_ROWS,
    PAGE_SIZE,
    SERVER_VERSION,
    LettaConnection,
)
from ari_mem_tui.letta.errors import LettaUnavailable
from ari_mem_tui.letta.footer import agent_name, decode_passage, given_hash
from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.model import (
    Checkpoint,
    CoreBlocks,
    Entries,
    EntryKind,
    EntryView,
    MemoryEntry,
    Problem,
    Run,
    StringTable,
)
from ari_mem_tui.model.columns import EntryBuilder, entries_of
from ari_mem_tui.model.origin import AGENT, GIVEN, THIS_PATH, HashFinding
from ari_mem_tui.model.words import plural
from ari_mem_tui.search.rankers import Ranking
from ari_mem_tui.search.run_model import AgentEmbedding

__all__ = [
    "LettaMemory",
    "LettaRanker",
    "LettaUnavailable",
    "agent_embedding",
    "entry_from_passage",
    "open_letta_run",
    "read_letta_memory",
]

AGENT_HASH_RE = re.compile(r"^ari_agent_([0-9a-f]{12})$")
CORE_LABELS = ("persona", "human", "ari_context")
SOURCE = "letta"

# (passages read, passages expected): the total is unknown until the last page, so while paging
# it is "read + one more page"; the last call is (n, n)
ProgressFn = Callable[[int, int], None]


@dataclass
class LettaMemory:
    """What one agent holds, decoded (its entries as columns, in the backup's order)."""

    entries: Entries = field(default_factory=entries_of)
    core: CoreBlocks = field(default_factory=lambda: CoreBlocks(source=SOURCE))
    problems: list[Problem] = field(default_factory=list)
    passages: int = 0  # rows read from the server
    url: str = ""
    capped: bool = False  # stopped at the hard cap (more rows may exist)


# ---- decoding ------------------------------------------------------------------------------


def entry_from_passage(
    passage_id: str,
    blob: Any,
    created_at: float | None,
    ids: EntryIds,
    problems: list[Problem],
    problem_file: str,
) -> MemoryEntry:
    """One passage as a MemoryEntry. Never raises; a bad footer becomes a Problem.

    A passage whose footer does not decode keeps its whole text with empty metadata, as ARI
    reads it; it still occupies a place in the server's ranking, so it is kept, as a react-kind
    entry of no node and no checkpoint (ARI's post-filter can never select it).
    """
    decoded = decode_passage(blob if isinstance(blob, str) else str(blob))
    footer = decoded.footer
    where = f"passage {passage_id}"

    def problem(what: str, why: str) -> None:
        problems.append(Problem(file=problem_file, where=where, what=what, why=why))

    if not decoded.ok:
        problem("kept its text without ARI metadata", decoded.error)
        kind: EntryKind = "react_step"
        node_id, ckpt, metadata, ts, step = "", "", {}, created_at, None
    else:
        kind = _footer_kind(footer, problem)
        node_id = footer.get("node_id")
        node_id = node_id if isinstance(node_id, str) else ""
        ckpt = footer.get("ari_checkpoint")
        ckpt = ckpt if isinstance(ckpt, str) else ""
        metadata = footer.get("ari_metadata")
        if not isinstance(metadata, dict):
            if metadata is not None:
                problem("dropped its ari_metadata", "ari_metadata is not a JSON object")
            metadata = {}
        ts = as_float(footer.get("ts"))  # (NaN, 1e400 written out: no number)
        if ts is None:
            ts = created_at
            if "ts" in footer:
                problem("used the passage's creation time", "footer ts is not a number")
        step = footer.get("step")
        step = step if isinstance(step, int) and not isinstance(step, bool) else None
        if kind == "react_step" and step is None:
            step = _int_or_none(metadata.get("step"))
    return MemoryEntry(
        id=ids.make(kind, node_id, ts, decoded.text),
        kind=kind,
        node_id=node_id,
        text=decoded.text,
        metadata=metadata,
        ts=ts,
        source=SOURCE,
        letta_id=passage_id,
        step=step,
        ari_checkpoint=ckpt,
    )


def _footer_kind(footer: dict[str, Any], problem: Callable[[str, str], None]) -> EntryKind:
    kind = footer.get("kind")
    if kind in ("node_scope", "react_step"):
        return kind
    collection = str(footer.get("collection") or "")
    if collection.startswith("ari_node_"):
        return "node_scope"
    if not collection.startswith("ari_react_"):
        problem("read it as a react entry", f"footer has no known kind ({kind!r})")
    return "react_step"


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _epoch(value: Any) -> float | None:
    try:
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, str) and value:
            return datetime.fromisoformat(value).timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return None


# ---- reading -------------------------------------------------------------------------------


def read_letta_memory(
    conn: LettaConnection,
    agent_id: str,
    progress: ProgressFn | None = None,
    page_size: int = PAGE_SIZE,
    max_rows: int = MAX_ROWS,
) -> LettaMemory:
    """Every passage of the agent (paged, capped like ARI) and its three core blocks."""
    memory = LettaMemory(url=conn.url)
    problem_file = f"letta:{conn.url}"
    ids = EntryIds()
    rows = EntryBuilder(StringTable())
    kinds = bytearray()  # (the kind of each row: the backup's order is made from them)
    for passage in conn.iter_passages(agent_id, page_size=page_size, max_rows=max_rows):
        memory.passages += 1
        entry = entry_from_passage(
            passage.id,
            passage.text,
            _epoch(passage.created_at),
            ids,
            memory.problems,
            problem_file,
        )
        rows.add_record(entry)
        kinds.append(entry.kind == "node_scope")
        if progress is not None and memory.passages % page_size == 0:
            progress(memory.passages, memory.passages + page_size)
    if progress is not None:
        progress(memory.passages, memory.passages)
    if memory.passages >= max_rows:
        memory.capped = True
        memory.problems.append(
            Problem(
                file=problem_file,
                what=f"read the first {max_rows:,} passages only",
                why="ARI's own listings stop at this cap too",
            )
        )
    if memory.passages == 0:
        memory.problems.append(
            Problem(
                file=problem_file,
                what="found no passages",
                why="the agent is empty (a copied checkpoint? restore it with letta-restore)",
                severity="info",
            )
        )
    # the backup's order: node-scope entries first, then react steps, each in the server's order
    order = [row for row, node_scope in enumerate(kinds) if node_scope]
    memory.entries = rows.finish(order + [row for row, node in enumerate(kinds) if not node])
    memory.core = read_core(conn, agent_id, memory.problems)
    return memory


def read_core(conn: LettaConnection, agent_id: str, problems: list[Problem]) -> CoreBlocks:
    """persona, human and ari_context (a JSON string; empty or missing means not seeded)."""
    values: dict[str, str] = {}
    for label in CORE_LABELS:
        value = conn.block(agent_id, label)
        if value is None:
            problems.append(
                Problem(
                    file=f"letta:{conn.url}",
                    where=f"block {label}",
                    what="read it as empty",
                    why="the agent has no such block",
                    severity="info",
                )
            )
        values[label] = value or ""
    context: dict[str, Any] = {}
    raw = values["ari_context"].strip()
    if raw:
        try:
            decoded = _json_loads(raw)
        except ValueError as exc:
            decoded = None
            why = f"not JSON ({exc})"
        else:
            why = "not a JSON object"
        if isinstance(decoded, dict):
            context = decoded
            odd = nonfinite(context, "ari_context")
            if odd:  # (json reads NaN, Infinity and 1e400; a JSON output writes null there)
                problems.append(
                    Problem(
                        file=f"letta:{conn.url}",
                        where="block ari_context",
                        what="kept the experiment context as read",
                        why=nonfinite_why(odd),
                    )
                )
        else:
            problems.append(
                Problem(
                    file=f"letta:{conn.url}",
                    where="block ari_context",
                    what="read the experiment context as empty",
                    why=why,
                )
            )
    return CoreBlocks(
        persona=values["persona"], human=values["human"], ari_context=context, source=SOURCE
    )


def _json_loads(raw: str) -> Any:
    try:
        return json.loads(raw)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


# ---- ranking -------------------------------------------------------------------------------


class LettaRanker:
    """ARI's ranking, by the server itself: `passages.search(query, top_k)` over the agent.

    The server returns only its window (no scores, no ranks beyond it), so `global_rank` of an
    entry outside the window is None. Entries are matched to the ones read at open time by
    passage id; a passage added since then is decoded on the fly.
    """

    def __init__(self, conn: LettaConnection, agent_id: str, ckpt: Checkpoint) -> None:
        self.conn = conn
        self.agent_id = agent_id
        self.ckpt = ckpt
        self.name = f"letta:{conn.url}"
        self.hash_finding: HashFinding | None = None  # the agent's hash, and how it was found

    def rank(self, query: str, top_k: int, before_ts: float | None = None) -> Ranking:
        results = self.conn.search(self.agent_id, query, top_k, before_ts=before_ts)
        known = self.ckpt.entries_by_letta_id
        ids = EntryIds()
        unseen = 0
        window: list[MemoryEntry | EntryView] = []
        for row in results:
            entry = known.get(row.id)
            if entry is None:
                unseen += 1
                entry = entry_from_passage(
                    row.id, row.content, _epoch(row.timestamp), ids, [], self.name
                )
            window.append(entry)
        note = (
            f"{plural(unseen, 'passage')} added on the server since it was read" if unseen else ""
        )
        pool_size = pool_size_before(self.ckpt.entries, before_ts)
        return Ranking(window=window, pool_size=pool_size, ranks=None, used=self.name, note=note)


def pool_size_before(entries: Entries, before_ts: float | None) -> int:
    """How many entries were written before `before_ts` (None: all; an entry of no ts counts),
    off the ts column (NaN: no ts)."""
    if before_ts is None:
        return len(entries)
    return sum(1 for ts in entries.ts if not ts >= before_ts)


def agent_embedding(ranker: object) -> AgentEmbedding | None:
    """The Letta agent's own `embedding_config`, for ranking through its endpoint without the
    server (`--embedder run` with `--letta-url`); None when it cannot be read."""
    if not isinstance(ranker, LettaRanker):
        return None
    try:
        config = ranker.conn.embedding_config(ranker.agent_id) or {}
    except LettaUnavailable:
        return None

    def text(key: str) -> str | None:
        value = config.get(key)
        return value if isinstance(value, str) and value else None

    dim = config.get("embedding_dim")
    return AgentEmbedding(
        handle=text("handle"),
        endpoint=text("embedding_endpoint"),
        model=text("embedding_model"),
        dim=dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else None,
    )


# ---- opening a run -------------------------------------------------------------------------


def agent_ref_for(ckpt: Checkpoint, options: LettaOptions) -> str:
    """--letta-agent, else `ari_agent_<hash>` of --checkpoint-hash or of the checkpoint path."""
    if options.agent:
        return options.agent
    return agent_name(given_hash(options.checkpoint_hash) or checkpoint_hash(ckpt.path))


def hash_for(ckpt: Checkpoint, options: LettaOptions, name: str) -> str:
    """The hash the post-filter compares footers with: given, else the agent's, else the path's."""
    named = AGENT_HASH_RE.match(name or "")
    given = given_hash(options.checkpoint_hash)
    return given or (named.group(1) if named else checkpoint_hash(ckpt.path))


def _hash_mismatch(entries: Entries, ckpt_hash: str, url: str) -> Problem | None:
    """A problem line when no passage carries the hash (a renamed agent, a wrong hash)."""
    strings = entries.strings
    by_code = Counter(entries.ckpt)  # (counted by string code, off the column)
    hashes = Counter({strings[code]: n for code, n in by_code.items() if code >= 0})
    del hashes[""]
    if not hashes or ckpt_hash in hashes:
        return None
    common, count = hashes.most_common(1)[0]
    return Problem(
        file=f"letta:{url}",
        what=f"no passage carries checkpoint hash {ckpt_hash}, so no node can find any",
        why=f"{count} footers carry {common}: try --checkpoint-hash {common}",
    )


def open_letta_run(
    ckpt: Checkpoint,
    options: LettaOptions,
    progress: ProgressFn | None = None,
    conn: LettaConnection | None = None,
) -> Run:
    """The checkpoint with the server's memory, core blocks and ranking (see module doc)."""
    if conn is None:
        conn = LettaConnection(options.url, api_key=options.api_key, timeout=options.timeout)
    agent_ref = agent_ref_for(ckpt, options)
    version = conn.health()
    agent_id, name, finding = _agent(conn, ckpt, options, agent_ref)
    ckpt_hash = hash_for(ckpt, options, name)
    memory = read_letta_memory(conn, agent_id, progress=progress)
    mismatch = _hash_mismatch(memory.entries, ckpt_hash, conn.url)
    if mismatch is not None:
        memory.problems.append(mismatch)
    if not version.startswith(SERVER_VERSION):
        memory.problems.insert(
            0,
            Problem(
                file=f"letta:{conn.url}",
                what=f"read it as a Letta {SERVER_VERSION}x server",
                why=f"the server reports version {version}",
                severity="info",
            ),
        )
    apply_letta_memory(ckpt, memory, ckpt_hash)
    ranker = LettaRanker(conn, agent_id, ckpt)
    ranker.hash_finding = finding or HashFinding(
        hash=ckpt_hash,
        source=GIVEN if options.checkpoint_hash else (AGENT if options.agent else THIS_PATH),
        note=f"the server holds agent {name}",
    )
    return Run(checkpoint=ckpt, ranker=ranker, source_label=f"letta: {conn.url} agent {name}")


def _agent(
    conn: LettaConnection, ckpt: Checkpoint, options: LettaOptions, ref: str
) -> tuple[str, str, HashFinding | None]:
    """The run's agent: the one named (or of this path's hash); when that is missing and none
    was named, the candidate agent that reproduces the run's recorded searches
    (letta/agent_hash.py), said where it came from; else the server's ARI agents are listed."""
    from ari_mem_tui.letta.agent_hash import find_agent  # noqa: PLC0415 - a moved run only

    try:
        agent_id, name = conn.find_agent(ref)
        return agent_id, name, None
    except LettaUnavailable as missing:
        if options.agent or options.checkpoint_hash or not str(missing).startswith("no agent"):
            raise
        found = find_agent(conn, ckpt)
        if found is None:
            raise LettaUnavailable(
                f"{missing}; none of them reproduced this run's recorded searches"
            ) from None
        return found


def apply_letta_memory(ckpt: Checkpoint, memory: LettaMemory, ckpt_hash: str) -> None:
    """Swap the checkpoint's entries and core blocks for the server's; keep the rest."""
    # passage ids the file loader joined from the access log, by content id
    logged = logged_passage_ids(ckpt.entries)
    ckpt.entries = memory.entries
    ckpt.core = memory.core
    ckpt.checkpoint_hash = ckpt_hash  # the post-filter's `ari_checkpoint == hash`
    ckpt.problems.extend(memory.problems)
    ckpt.reindex()
    rejoin_access_log(ckpt)
    ckpt.reindex()
    aliased = alias_logged_ids(ckpt, logged)
    if aliased:
        ckpt.problems.append(
            Problem(
                file=f"letta:{memory.url}" if memory.url else "letta",
                what=f"joined {aliased} logged passage ids to the server's entries by content",
                why="the server's passage ids differ from the access log's (a restored agent)",
                severity="info",
            )
        )


def logged_passage_ids(entries: Entries) -> dict[str, str]:
    """Our content id of each entry by the passage id the loader joined to it (the last entry
    of a passage id wins), read off the passage-id column."""
    strings, id_at = entries.strings, entries.id_at
    return {
        strings[code]: id_at(row)  # type: ignore[misc]
        for row, code in enumerate(entries.letta)
        if code >= 0 and strings[code]
    }


def alias_logged_ids(ckpt: Checkpoint, logged: dict[str, str]) -> int:
    """Let recorded search hits resolve on a RESTORED server, whose passages have new ids.

    The file loader joined the access log's passage ids to entries by content; the server's
    entries carry the same content ids, so each logged id not on the server is looked up
    through its content id. Call after the last `reindex()` (which drops these aliases).
    """
    count = 0
    for letta_id, content_id in logged.items():
        entry = ckpt.entries_by_id.get(content_id)
        if letta_id not in ckpt.entries_by_letta_id and entry is not None:
            ckpt.entries_by_letta_id[letta_id] = entry
            count += 1
    return count


def rejoin_access_log(ckpt: Checkpoint) -> int:
    """Point write events at the entries now loaded; returns how many joined.

    The access log records passage ids, so on the ORIGINAL server they match the passages'
    ids exactly (after a restore they do not: new ids). Events that do not match keep the
    join the file loader made by content, if the same entry (same content id) is still there.
    """
    events = ckpt.access_events
    entry_of = ckpt.entries_by_letta_id.row_of_code  # (by the events' passage-id codes)
    empty = events.strings.find("")
    eid, by_id, joined = events.eid, ckpt.entries_by_id, 0
    for row in events.rows_of_op("write"):
        code = eid[row]
        target = entry_of(code) if code != empty else -1
        if target >= 0:
            events.join_row(row, target)
            joined += 1
        elif row in events.joined_ids and events.joined_ids[row] not in by_id:
            events.join_row(row, -1)  # (joined by content to an entry the server lacks)
    return joined
