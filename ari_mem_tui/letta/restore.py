"""`ari-mem-tui letta-restore`: load a checkpoint's memory backup into a Letta agent.

The ONE command of this tool that writes anywhere (to the server, never to the checkpoint), and
it says so before writing. It writes what ARI's own restore writes (§3.7, §3.8): agent
`ari_agent_<hash>` with model letta/letta-free, the chosen embedding handle, blocks persona /
human / ari_context, and one passage per backup record in ARI's encoding (text + footer with
sorted keys, non-ASCII kept), created at the record's `ts` so as-of searches work. New passage
ids are assigned by the server, as with ARI's restore.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from ari_mem_tui.checkpoint.backup import BACKUP_FILE, read_backup
from ari_mem_tui.checkpoint.entry_ids import EntryIds
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.letta.api import LettaConnection
from ari_mem_tui.letta.errors import LettaUnavailable, check_url, safe_url
from ari_mem_tui.letta.footer import agent_name, encode_passage, node_footer, react_footer
from ari_mem_tui.model import MemoryEntry, Problem
from ari_mem_tui.render.text import clean

EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE = 0, 1, 2
AGENT_MODEL = "letta/letta-free"  # a mock: the agent's chat model is never called
WRITE_TIMEOUT = 30.0  # one insert embeds its text on the server (~0.2 s; more when it is busy)


@dataclass
class RestorePlan:
    url: str
    agent: str
    ckpt_hash: str
    entries: list[MemoryEntry]
    core_seed: dict[str, Any] | None
    problems: list[Problem]


def passage_text(entry: MemoryEntry, ckpt_hash: str) -> str:
    """The passage ARI would have written for this entry."""
    ts = entry.ts
    if entry.kind == "node_scope":
        footer = node_footer(ckpt_hash, entry.node_id, entry.metadata, ts)
    else:
        footer = react_footer(ckpt_hash, entry.metadata, ts)
    return encode_passage(entry.text, footer)


def created_at(entry: MemoryEntry) -> str | None:
    if entry.ts is None:
        return None
    try:
        return datetime.fromtimestamp(entry.ts, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def plan_restore(args: argparse.Namespace) -> RestorePlan:
    """Read the backup and settle names; nothing is sent yet."""
    from ari_mem_tui.letta.source import given_hash

    url = args.letta_url
    if not url:
        raise LettaUnavailable("letta-restore needs --letta-url (or $LETTA_BASE_URL)")
    check_url(url)
    path = Path(args.checkpoint)
    backup = path / BACKUP_FILE
    if not backup.is_file():
        raise LettaUnavailable(f"no {BACKUP_FILE} in {path}: nothing to restore")
    problems: list[Problem] = []
    result = read_backup(backup, BACKUP_FILE, EntryIds(), problems)
    ckpt_hash = given_hash(args) or checkpoint_hash(path)
    return RestorePlan(
        url=url,
        agent=args.agent or agent_name(ckpt_hash),
        ckpt_hash=ckpt_hash,
        entries=result.entries,
        core_seed=result.core_seed,
        problems=problems,
    )


def restore(
    plan: RestorePlan,
    conn: LettaConnection,
    merge: bool = False,
    embedding: str = "openai/text-embedding-3-small",
    err: TextIO = sys.stderr,
) -> tuple[str, int]:
    """Write the plan to the server; returns (agent id, passages written)."""
    conn.health()
    found = conn.agent_by_name(plan.agent)
    agent_id = found[0] if found else None
    blocks = _block_values(plan.core_seed)
    if agent_id is not None:
        has_passages = next(conn.iter_passages(agent_id, page_size=1, max_rows=1), None)
        if has_passages is not None and not merge:
            raise _Refused(
                f"agent {plan.agent} on {conn.url} already holds passages; refusing to add to it"
                " (pass --merge to add anyway: duplicates are possible, as with ARI's merge)"
            )
        print(
            clean(f"adding to the existing agent {plan.agent} ({agent_id})", multiline=False),
            file=err,
        )
        if plan.core_seed is not None:
            for label, value in blocks.items():
                conn.call(
                    f"writing core block {label}",
                    lambda label=label, value=value: conn.client.agents.blocks.update(
                        label, agent_id=agent_id, value=value
                    ),
                )
    else:
        handle = AGENT_MODEL if embedding == "letta-default" else embedding
        agent = conn.call(
            f"creating agent {plan.agent}",
            lambda: conn.client.agents.create(
                name=plan.agent,
                model=AGENT_MODEL,
                embedding=handle,
                include_base_tools=False,
                memory_blocks=[{"label": k, "value": v} for k, v in blocks.items()],
            ),
        )
        agent_id = agent.id
        print(
            clean(f"created agent {plan.agent} ({agent_id}), embedding {handle}", multiline=False),
            file=err,
        )
    written = 0
    total = len(plan.entries)
    step = max(1, total // 20)
    for entry in plan.entries:
        text = passage_text(entry, plan.ckpt_hash)
        stamp = created_at(entry)
        kwargs: dict[str, Any] = {"text": text}
        if stamp is not None:
            kwargs["created_at"] = stamp
        try:
            conn.call(
                f"writing passage {written + 1} of {total}",
                lambda kwargs=kwargs: conn.client.agents.passages.create(agent_id, **kwargs),
            )
        except LettaUnavailable as exc:
            raise LettaUnavailable(
                f"{exc} (after {written} of {total} passages were written to {plan.agent})"
            ) from None
        written += 1
        if written % step == 0 or written == total:
            print(clean(f"  {written}/{total} passages", multiline=False), file=err, flush=True)
    return agent_id, written


class _Refused(Exception):
    pass


def _block_values(core_seed: dict[str, Any] | None) -> dict[str, str]:
    """The three blocks as ARI writes them; ari_context is the context dict as JSON text."""
    seed = core_seed or {}
    context = seed.get("context") or {}
    return {
        "persona": seed.get("persona") or "",
        "human": seed.get("human") or "",
        "ari_context": json.dumps(context, ensure_ascii=False) if context else "",
    }


def cmd_letta_restore(args: argparse.Namespace, err: TextIO | None = None) -> int:
    err = err or sys.stderr
    try:
        plan = plan_restore(args)
    except LettaUnavailable as exc:
        print(clean(f"ari-mem-tui letta-restore: {exc}", multiline=False), file=err)
        return EXIT_UNAVAILABLE
    for problem in plan.problems:
        print(clean(f"warning: {problem.line()}", multiline=False), file=err)
    nodes = sum(1 for e in plan.entries if e.kind == "node_scope")
    seed = "and the core blocks" if plan.core_seed is not None else "(no core seed in the backup)"
    print(
        clean(
            f"letta-restore WRITES to the Letta server at {safe_url(plan.url)}: agent {plan.agent},"
            f" {nodes} node-scope + {len(plan.entries) - nodes} react passages {seed}",
            multiline=False,
        ),
        file=err,
        flush=True,
    )
    conn = LettaConnection(plan.url, api_key=args.letta_api_key, timeout=WRITE_TIMEOUT)
    started = time.monotonic()
    try:
        agent_id, written = restore(plan, conn, merge=args.merge, embedding=args.embedding, err=err)
    except _Refused as exc:
        print(clean(f"ari-mem-tui letta-restore: {exc}", multiline=False), file=err)
        return EXIT_REFUSED
    except LettaUnavailable as exc:
        print(clean(f"ari-mem-tui letta-restore: {exc}", multiline=False), file=err)
        return EXIT_UNAVAILABLE
    elapsed = time.monotonic() - started
    print(
        clean(
            f"restored {written} passages into {plan.agent} ({agent_id}) at {safe_url(plan.url)}"
            f" in {elapsed:.1f} s; checkpoint hash {plan.ckpt_hash};"
            f" {len(plan.problems)} backup problem(s)",
            multiline=False,
        ),
        file=err,
    )
    return EXIT_OK
