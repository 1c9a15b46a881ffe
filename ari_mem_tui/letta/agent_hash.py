"""Which agent on a Letta server holds a moved run's memory: its hash found and checked.

ARI names a run's agent `ari_agent_<hash>` after its checkpoint path (§1.3); a run copied from
where it ran hashes differently, so the agent of the path it sits in now is missing. Its own
files often name the path it ran at (checkpoint/origin.py), and the server lists its ARI
agents: each is a candidate. A candidate agent is checked by reproducing a few recorded
searches on the server, as ARI ran them (search/run_hash.py picks them: the earliest that
returned something): `passages.search` as of the search's moment, ARI's post-filter on the
footers (the node in scope, this hash, node scope), the first `limit`, each compared with the
recording by window rank, node and text (a restored agent's passages have new ids). The first
agent that reproduces them all is the run's; none: the server's agents are listed, as before.
"""

from __future__ import annotations

from typing import Any

from ari_mem_tui.checkpoint.origin import hash_candidates
from ari_mem_tui.letta.api import LettaConnection
from ari_mem_tui.letta.errors import LettaUnavailable
from ari_mem_tui.letta.footer import agent_name, decode_passage
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.origin import Candidate, HashFinding
from ari_mem_tui.search.replay import recorded_search, top_k_for
from ari_mem_tui.search.run_hash import probe_events

PREFIX = "ari_agent_"


def server_candidates(conn: LettaConnection, ckpt: Checkpoint) -> list[Candidate]:
    """The run files' candidates whose agent is on the server, then the server's other ARI
    agents (`ari_agent_<12 hex>`)."""
    try:
        names = set(conn.ari_agent_names())
    except LettaUnavailable:
        names = set()
    files = [c for c in hash_candidates(ckpt) if agent_name(c.hash) in names]
    named = {c.hash for c in files}
    others = [
        Candidate(hash=name.removeprefix(PREFIX), source=f"the server's agent {name}")
        for name in sorted(names)
        if len(name) == len(PREFIX) + 12 and name.removeprefix(PREFIX) not in named
    ]
    return files + others


def find_agent(conn: LettaConnection, ckpt: Checkpoint) -> tuple[str, str, HashFinding] | None:
    """(agent id, agent name, how it was found) of the candidate agent that reproduces the
    run's recorded searches; None when none does (or nothing can be checked)."""
    events, _pool = probe_events(ckpt)
    if not events:
        return None
    tried: list[Candidate] = []
    for candidate in server_candidates(conn, ckpt):
        found = conn.agent_by_name(agent_name(candidate.hash))
        if found is None:
            continue
        tried.append(candidate)
        reproduced = sum(1 for e in events if _reproduces(conn, found[0], candidate.hash, ckpt, e))
        if reproduced == len(events):
            finding = HashFinding(
                hash=candidate.hash,
                source=candidate.source,
                path=candidate.path,
                found=True,
                reproduced=reproduced,
                probes=len(events),
                tried=tried,
            )
            return found[0], found[1], finding
    return None


def _reproduces(
    conn: LettaConnection, agent_id: str, ckpt_hash: str, ckpt: Checkpoint, event: Any
) -> bool:
    """Whether the server's ranking, post-filtered as ARI did with `ckpt_hash`, gives what
    `event` recorded: the same window ranks, nodes and texts."""
    got = _server_hits(conn, agent_id, ckpt_hash, event)
    recorded, _unresolved = recorded_search(ckpt, event)
    if len(got) != len(recorded.hits):
        return False
    for (rank, node, text), hit in zip(got, recorded.hits, strict=True):
        if hit.global_rank >= 0 and hit.global_rank != rank:
            return False
        if node != hit.node_id or (hit.text and hit.text != text):
            return False
    return True


def _server_hits(conn: LettaConnection, agent_id: str, ckpt_hash: str, event: Any) -> list:
    """(window rank, node, text) of what ARI's post-filter keeps of the server's ranking for
    `event`'s query as of its time, with `ckpt_hash` as the checkpoint's."""
    limit = event.limit if isinstance(event.limit, int) and event.limit > 0 else 5
    scope = set(event.ancestor_ids)
    rows = conn.search(agent_id, event.query, top_k_for(limit), before_ts=event.ts)
    got = []
    for rank, row in enumerate(rows):
        decoded = decode_passage(getattr(row, "content", "") or "")
        footer = decoded.footer
        if (
            footer.get("node_id") in scope
            and footer.get("ari_checkpoint") == ckpt_hash
            and footer.get("kind") == "node_scope"
        ):
            got.append((rank, footer.get("node_id"), decoded.text))
        if len(got) >= limit:
            break
    return got
