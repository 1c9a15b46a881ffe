"""`ari-mem-tui letta-restore`: load a checkpoint's memory backup into a Letta agent.

The ONE command of this tool that writes anywhere (to the server, never to the checkpoint), and
it says so before writing. It writes what ARI's own restore writes (§3.7, §3.8): agent
`ari_agent_<hash>` with model letta/letta-free, the chosen embedding handle, blocks persona /
human / ari_context, and one passage per backup record in ARI's encoding (text + footer with
sorted keys, non-ASCII kept), created at the record's `ts` so as-of searches work. New passage
ids are assigned by the server, as with ARI's restore.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ari_mem_tui.checkpoint.backup import BACKUP_FILE, read_backup
from ari_mem_tui.checkpoint.load import load_tree_only
from ari_mem_tui.checkpoint.passages import passage_text
from ari_mem_tui.checkpoint.paths import checkpoint_hash
from ari_mem_tui.letta.api import LettaConnection
from ari_mem_tui.letta.errors import LettaUnavailable, check_url
from ari_mem_tui.letta.footer import agent_name, given_hash
from ari_mem_tui.model import Entries, EntryView, Problem

AGENT_MODEL = "letta/letta-free"  # a mock: the agent's chat model is never called
WRITE_TIMEOUT = 30.0  # one insert embeds its text on the server (~0.2 s; more when it is busy)


@dataclass
class RestorePlan:
    url: str
    agent: str
    ckpt_hash: str  # the hash written into every footer
    entries: Entries  # the backup's, as columns
    core_seed: dict[str, Any] | None
    problems: list[Problem]
    # where `ckpt_hash` came from: "given" (--checkpoint-hash: the run's own), "path" (this
    # directory's, as ARI writes it here), "re-encoded" (this path's instead of the given one)
    hash_source: str = "path"
    warnings: list[str] = field(default_factory=list)  # said before anything is written


def created_at(entry: EntryView) -> str | None:
    if entry.ts is None:
        return None
    try:
        return datetime.fromtimestamp(entry.ts, tz=UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def plan_restore(
    checkpoint: Path,
    url: str | None,
    agent: str | None = None,
    given: str | None = None,
    reencode: bool = False,
) -> RestorePlan:
    """Read the backup and settle names; nothing is sent.

    Footers are kept as ARI wrote them: Letta embeds the whole passage, footer included, so a
    different hash in it is different text, other vectors and another ranking than the one
    the access log recorded. ARI's backup does not record that hash; it is the one given
    (--checkpoint-hash, the run's own) or, without one, this path's (right unless the
    checkpoint was copied or moved, which the plan's warnings say). `reencode` writes this
    path's hash instead of the given one: an explicit choice, and it warns.
    """
    if not url:
        raise LettaUnavailable("letta-restore needs --letta-url (or $LETTA_BASE_URL)")
    check_url(url)
    path = Path(checkpoint)
    backup = path / BACKUP_FILE
    if not backup.is_file():
        raise LettaUnavailable(f"no {BACKUP_FILE} in {path}: nothing to restore")
    problems: list[Problem] = []
    result = read_backup(backup, BACKUP_FILE, problems)
    original = given_hash(given)
    here = checkpoint_hash(path)
    warnings: list[str] = []
    if reencode and original and original != here:
        ckpt_hash, source = here, "re-encoded"
        warnings.append(
            f"re-encoding every footer with this path's hash {here} instead of the run's "
            f"{original}: the passages' text changes, Letta embeds it anew, and rankings can "
            "differ from the recorded searches (drop --reencode-footers to keep them byte for "
            "byte)"
        )
    elif original:
        ckpt_hash, source = original, "given"
    else:
        ckpt_hash, source = here, "path"
        moved = looks_moved(path)
        if moved:
            warnings.append(moved)
        warnings.append(
            f"the backup does not record the hash ARI wrote into the footers: they carry this "
            f"path's hash {here}, as ARI writes them here. If this checkpoint was copied or "
            "moved from where it ran, restore with --checkpoint-hash <the run's hash> to keep "
            "ARI's passages byte for byte (another hash is other text to embed, and another "
            "ranking)"
        )
        if reencode:
            warnings.append("--reencode-footers without --checkpoint-hash changes nothing")
    return RestorePlan(
        url=url,
        agent=agent or agent_name(ckpt_hash),
        ckpt_hash=ckpt_hash,
        entries=result.entries,
        core_seed=result.core_seed,
        problems=problems,
        hash_source=source,
        warnings=warnings,
    )


def looks_moved(path: Path) -> str:
    """Why this directory is probably not where ARI ran the checkpoint ("" when it looks right).

    ARI runs a checkpoint at `<workspace>/checkpoints/<run_id>` (§1.1), so a directory of
    another name, or outside a `checkpoints` folder, was most likely copied or moved.
    """
    try:
        run_id = load_tree_only(path).run_id
    except Exception:  # noqa: BLE001 - only a hint: no tree, no hint
        return ""
    where = Path(path).resolve()
    if run_id and (where.name != run_id or where.parent.name != "checkpoints"):
        return (
            f"this directory is not checkpoints/{run_id}, where ARI runs this checkpoint: it "
            "looks copied or moved, so its path's hash is probably not the one in ARI's footers"
        )
    return ""


def verify_restore(plan: RestorePlan, conn: LettaConnection, agent_id: str) -> list[str]:
    """Read every passage back and compare with what was written, byte for byte (text and
    footer). Returns one line per planned passage that is not on the server as written."""
    present = Counter(str(p.text) for p in conn.iter_passages(agent_id))
    missing: list[str] = []
    for entry in plan.entries:
        text = passage_text(entry, plan.ckpt_hash)
        if present[text] > 0:
            present[text] -= 1
        else:
            missing.append(f"{entry.kind} of {entry.node_id or '(no node)'}: {entry.text[:60]}")
    return missing


def restore(
    plan: RestorePlan,
    conn: LettaConnection,
    merge: bool = False,
    embedding: str = "openai/text-embedding-3-small",
    say: Callable[[str], None] = print,
) -> tuple[str, int]:
    """Write the plan to the server, telling `say` each step; returns (agent id, written)."""
    conn.health()
    found = conn.agent_by_name(plan.agent)
    agent_id = found[0] if found else None
    blocks = _block_values(plan.core_seed)
    if agent_id is not None:
        has_passages = next(conn.iter_passages(agent_id, page_size=1, max_rows=1), None)
        if has_passages is not None and not merge:
            raise Refused(
                f"agent {plan.agent} on {conn.url} already holds passages; refusing to add to it"
                " (pass --merge to add anyway: duplicates are possible, as with ARI's merge)"
            )
        say(f"adding to the existing agent {plan.agent} ({agent_id})")
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
        say(f"created agent {plan.agent} ({agent_id}), embedding {handle}")
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
            say(f"  {written}/{total} passages")
    return agent_id, written


class Refused(Exception):
    """The agent already holds passages and --merge was not given: nothing was written."""


def _block_values(core_seed: dict[str, Any] | None) -> dict[str, str]:
    """The three blocks as ARI writes them; ari_context is the context dict as JSON text."""
    seed = core_seed or {}
    context = seed.get("context") or {}
    return {
        "persona": seed.get("persona") or "",
        "human": seed.get("human") or "",
        "ari_context": json.dumps(context, ensure_ascii=False) if context else "",
    }
