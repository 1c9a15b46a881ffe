"""A node's dossier: everything the TUI shows about one node, as Markdown and as JSON.

Plain functions (no Textual), so scripts and the CLI can produce the same file the TUI's `e`
key writes. Dossiers are written outside the checkpoint directory: the tool is read-only there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ari_mem_tui.audit import audit, findings_by_node
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.model import Replay
from ari_mem_tui.render.findings import findings_markdown
from ari_mem_tui.render.text import (
    clean,
    fmt_iso,
    fmt_ts,
    json_text,
    pretty_json,
    short_id,
)
from ari_mem_tui.render.words import (
    differences_words,
    fmt_global,
    fmt_score,
    mark_long,
    pool_words,
    query_words,
    tier_badge,
)
from ari_mem_tui.search.tiers import NO_MESSAGE


def _cell(value: object, width: int = 160) -> str:
    """A Markdown table cell: one line, pipes escaped, control characters made visible."""
    text = clean(value, multiline=False).replace("|", "\\|").strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _block(text: object) -> list[str]:
    """Verbatim text in a fence long enough that the text cannot close it."""
    body = clean(text)
    fence = "```"
    while fence in body:
        fence += "`"
    return [fence + "text", body, fence]


def _table(head: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def dossier_markdown(replay: Replay, ckpt: Checkpoint) -> str:
    """The dossier as Markdown, for people."""
    node = ckpt.nodes.get(replay.node_id)
    out: list[str] = [f"# Dossier: node {_cell(replay.node_id)}", ""]
    out += [f"- checkpoint: `{_cell(ckpt.path)}`", f"- run: {_cell(ckpt.run_id or '–')}"]
    if node is not None:
        out += [
            f"- status: {_cell(node.status)}, label: {_cell(node.label)}, depth: {node.depth}",
            f"- score (`_scientific_score`): {node.score if node.score is not None else '–'}",
            f"- created: {fmt_iso(node.created_at)}, completed: {fmt_iso(node.completed_at)}",
            "- lineage: " + " → ".join(_cell(a) for a in ckpt.lineage(node.id)),
        ]
        if node.scope_reconstructed:
            out.append("- scope reconstructed from parent_id (ancestor_ids missing in file)")
        out += ["", "## Direction", "", *_block(node.original_direction or "–")]
        out += ["", "## eval_summary", "", *_block(node.eval_summary or "–")]
        metrics = {k: v for k, v in node.metrics.items()}
        if metrics:
            out += ["", "## Metrics", ""]
            out += _table(
                ["metric", "value"], [[k, json.dumps(v, default=str)] for k, v in metrics.items()]
            )
    out += _findings_section(replay, ckpt)
    out += _search_section(replay)
    out += _tiers_section(replay)
    out += _core_section(replay)
    out += _writes_section(replay)
    if replay.notes:
        out += ["", "## Notes", ""] + [f"- {_cell(n, 400)}" for n in replay.notes]
    return "\n".join(out) + "\n"


def node_findings(replay: Replay, ckpt: Checkpoint) -> list:
    return findings_by_node(audit(ckpt)).get(replay.node_id, [])


def _findings_section(replay: Replay, ckpt: Checkpoint) -> list[str]:
    return findings_markdown(node_findings(replay, ckpt), _cell)


def _search_section(replay: Replay) -> list[str]:
    out = ["", f"## Search (replayed with {_cell(replay.embedder)})", ""]
    out += [f"- ranker: {_cell(replay.fidelity.label or replay.embedder, 300)}"]
    if replay.fidelity.hash is not None:
        out += [f"- checkpoint {_cell(replay.fidelity.hash.line(), 400)}"]
    if replay.fidelity.note:
        out += [f"- {_cell(replay.fidelity.note, 400)}"]
    out += [f"- query ({_cell(query_words(replay))}): {_cell(replay.query, 400)}"]
    out += [f"- {_cell(pool_words(replay))}"]
    params, pool = replay.params, replay.pool
    if replay.windowless:  # ARI's in-memory rule: no top_k, no window to describe
        params = {"limit": params.get("limit")}
        pool = {k: v for k, v in pool.items() if k != "window"}
    out += [f"- params: {_cell(json.dumps(params))}"]
    out += [f"- pool: {_cell(json.dumps(pool, default=str), 400)}"]
    missed = (
        "none (the backend scores every ancestor entry)"
        if replay.windowless
        else len(replay.missed)
    )
    out += [f"- eligible ancestor entries: {replay.eligible}, missed: {missed}"]
    out += [""]
    out += _table(
        ["rank", "global", "score", "node", "kind", "mark", "text"],
        [
            [
                h.rank,
                fmt_global(h),
                fmt_score(h.score),
                h.node_id,
                h.kind,
                mark_long(h, "replay"),
                h.text,
            ]
            for h in replay.hits
        ],
    )
    if replay.missed:
        out += ["", "### Missed (eligible, outside the window)", ""]
        out += _table(
            ["global", "node", "text"],
            [
                [m.global_rank if m.global_rank is not None else "?", m.node_id, m.text]
                for m in replay.missed
            ],
        )
    rec = replay.recorded
    out += ["", "### Recorded (access log)", ""]
    if rec is None:
        out.append("No start-up read recorded for this node.")
    else:
        out.append(f"At {fmt_ts(rec.ts)}, query: {_cell(rec.query, 400)}, limit {rec.limit}")
        out += ["", f"Ranked by {_cell(rec.ranker)}. {_cell(differences_words(replay))}."]
        if rec.differences:
            out[-1] += " Marks read recorded→replayed."
        out += [""] + _table(
            ["rank", "global", "score", "node", "mark", "text"],
            [
                [
                    h.rank,
                    fmt_global(h),
                    fmt_score(h.score),
                    h.node_id,
                    mark_long(h, "recorded"),
                    h.text,
                ]
                for h in rec.hits
            ],
        )
    return out


def _tiers_section(replay: Replay) -> list[str]:
    out = ["", "## What it saw (working context at start)", ""]
    if not replay.tiers:
        out.append("No context tiers.")
    for tier in replay.tiers:
        badge = tier_badge(tier)
        out += [f"### Tier {tier.key}: {_cell(tier.title)} ({badge})", ""]
        if tier.note:
            out += [f"_{_cell(tier.note, 400)}_", ""]
        if not tier.lines:  # ARI sends no message for an empty tier
            if NO_MESSAGE not in (tier.note or ""):  # the note says it already
                out += [f"({NO_MESSAGE})", ""]
            continue
        lines = [tier.header] + [
            ("- " if tier.key in ("1b", "2") else "") + ln.text + (" ✂" if ln.truncated else "")
            for ln in tier.lines
        ]
        out += _block("\n".join(lines)) + [""]
    return out


def _core_section(replay: Replay) -> list[str]:
    core = replay.core
    out = ["", "## Core blocks", ""]
    if core.source:
        out.append(f"source: {_cell(core.source)}" + (" (approximate)" if core.approximate else ""))
    if not core.seeded:
        out.append("ari_context: not seeded yet")
    out += ["", "### persona", "", *_block(core.persona or "–")]
    out += ["", "### human", "", *_block(core.human or "–")]
    out += ["", "### ari_context", "", *_block(pretty_json(core.ari_context))]
    return out


def _writes_section(replay: Replay) -> list[str]:
    out = ["", "## Writes (copy-on-write log)", ""]
    if not replay.writes:
        return out + ["No writes recorded for this node."]
    rows = [
        [
            fmt_ts(w.ts),
            w.tool,
            w.target_node,
            "accepted" if w.accepted else "REJECTED",
            w.reason or "",
            w.source,
            w.text,
        ]
        for w in replay.writes
    ]
    return out + _table(["time", "tool", "target", "result", "reason", "source", "text"], rows)


def dossier_json(replay: Replay, ckpt: Checkpoint) -> dict[str, Any]:
    """The dossier as a JSON-ready dict, for scripts: `replay` has the shape of `saw --json`."""
    node = ckpt.nodes.get(replay.node_id)
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    data = {
        "checkpoint": str(ckpt.path),
        "run_id": ckpt.run_id,
        "node": node.as_data() if node is not None else None,
        "lineage": ckpt.lineage(replay.node_id) if node is not None else [],
        "replay": replay.as_data(),
        "findings": [f.as_data() for f in node_findings(replay, ckpt)],
    }
    return outputs.output(outputs.DossierOutput, data)


NAME_CHARS = 60  # readable part of an id in a file name, at most


def readable(value: str) -> str:
    """An id's file-name-safe characters, cut to NAME_CHARS."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value)[:NAME_CHARS].strip(".") or "id"


def digest(*parts: str) -> str:
    """8 hex characters of a hash of the exact ids: what keeps two names apart when their
    readable parts agree (`a/b`, `a b`, `a_b`, `A_b` on a case-insensitive disk, long ids)."""
    joined = "\0".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(joined).hexdigest()[:8]


def run_short(ckpt: Checkpoint) -> str:
    """A run's short name: its run_id's timestamp (ARI's run ids start with one), else the
    first characters of the run id or of the folder's name."""
    name = ckpt.run_id or Path(ckpt.path).resolve().name
    stamp = re.match(r"\d{14}", name)
    return stamp.group(0) if stamp else readable(name)[:20]


def dossier_paths(ckpt: Checkpoint, node_id: str, out_dir: Path) -> tuple[Path, Path]:
    """Where `export_dossier` writes the node's two halves: `<node short id>-<run short>-<hash>`
    (`b1000001-20260528210232-1f2e3d4c.md`), one pair of names per node of a run."""
    run = ckpt.run_id or str(Path(ckpt.path).resolve())
    stem = f"{readable(short_id(node_id))}-{run_short(ckpt)}-{digest(run, node_id)}"
    return out_dir / f"{stem}.md", out_dir / f"{stem}.json"


def export_dossier(ckpt: Checkpoint, replay: Replay, out_dir: Path) -> tuple[Path, Path]:
    """Write `dossier-<run>-<node>.md` and `.json` into `out_dir` (never the checkpoint).

    Both halves or neither: each is written to a temporary file in `out_dir` first, then both
    are renamed into place; on any failure the temporary files (and a half already renamed)
    are removed. A later export of the same node replaces its own two files, never another's.
    """
    out_dir = Path(out_dir).expanduser().resolve()
    root = Path(ckpt.path).resolve()
    if out_dir == root or root in out_dir.parents:
        raise ValueError(f"refusing to write into the checkpoint directory {root}")
    markdown = dossier_markdown(replay, ckpt)
    document = json_text(dossier_json(replay, ckpt)) + "\n"
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = dossier_paths(ckpt, replay.node_id, out_dir)
    temps: list[Path] = []
    placed: list[Path] = []
    try:
        for text, suffix in ((markdown, ".md"), (document, ".json")):
            handle, name = tempfile.mkstemp(dir=out_dir, prefix=".dossier-", suffix=suffix)
            temps.append(Path(name))
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
        for temp, final in zip(temps, (md_path, json_path), strict=True):
            os.replace(temp, final)
            placed.append(final)
    except BaseException:
        for path in (*temps, *placed):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
        raise
    return md_path, json_path
