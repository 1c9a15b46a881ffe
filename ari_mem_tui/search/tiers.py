"""The working context a node was given at start, rebuilt tier by tier (§5.8).

Tier 1a experiment core, 1c metric contract, 1b ancestor conclusions, 2 semantic supplement,
with ARI's field order, caps and dedupe. Each tier says whether the rebuild is exact and, if not,
why (Tier.exact + Tier.note).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ari_mem_tui.model import Checkpoint, Hit, Node, Replay, Tier, TierLine
from ari_mem_tui.model.words import plural

CORE_FIELDS = ("primary_metric", "higher_is_better", "metric_rationale", "hardware_spec")
CORE_FIELD_CAP = 400
IDEA_FIELD_CAP = 1500
ANCESTOR_SUMMARY_CAP = 600
SUPPLEMENT_CAP = 400
DEDUPE_CHARS = 120
TRUNCATED = " …[truncated]"
NO_MESSAGE = "no message emitted"  # ARI sends no message for an empty tier

HEADER_1A = "[Experiment context (stable across all nodes):]"
HEADER_1C = "METRIC-CORRECTNESS CONTRACT"


def header_1b(n: int) -> str:
    return f"[Established conclusions from ancestor nodes ({n}):]"


def header_2(n: int) -> str:
    return f"[Related prior findings from ancestors ({n}):]"


def _its(n: int) -> str:
    return "its" if n == 1 else "their"


def cap_core(value: Any, cap: int) -> tuple[str, bool]:
    """str(value) stripped, cut at `cap` with ARI's marker; dicts render as their Python repr."""
    text = str(value).strip()
    if len(text) > cap:
        return text[:cap] + TRUNCATED, True
    return text, False


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, dict, list)) and len(value) == 0)


def build_tiers(
    ckpt: Checkpoint, node: Node, replayed: Replay, started: float | None
) -> list[Tier]:
    tiers = [tier_1a(ckpt, node), tier_1c(ckpt, node)]
    if node.depth == 0 or not node.ancestor_ids:
        why = "root (depth 0, no ancestors): ARI emits no ancestor tiers"
        tiers.append(Tier(key="1b", title="Ancestor conclusions", header=header_1b(0), note=why))
        tiers.append(Tier(key="2", title="Semantic supplement", header=header_2(0), note=why))
        return tiers
    one_b, keys = tier_1b(ckpt, node, started)
    tiers.append(one_b)
    tiers.append(tier_2(replayed, keys))
    return tiers


def tier_1a(ckpt: Checkpoint, node: Node) -> Tier:
    tier = Tier(key="1a", title="Experiment core", header=HEADER_1A)
    if not node.ancestor_ids and node.depth in (0, None) and node.parent_id is None:
        tier.note = "the root never sees the core at its own start: ARI seeds it during that run"
        return tier
    context = ckpt.core.ari_context or {}
    if not context:
        tier.note = f"core context not seeded (no core_seed record): {NO_MESSAGE}"
        tier.exact = not ckpt.core.approximate
        return tier
    for key in CORE_FIELDS:
        value = context.get(key)
        if _empty(value):
            continue
        text, cut = cap_core(value, CORE_FIELD_CAP)
        tier.lines.append(TierLine(text=f"  {key}: {text}", truncated=cut))
    idea = context.get("selected_idea")
    if not _empty(idea):
        text, cut = cap_core(idea, IDEA_FIELD_CAP)
        tier.lines.append(TierLine(text=f"  selected_idea: {text}", truncated=cut))
    if ckpt.core.approximate:
        tier.exact = False
        tier.note = f"approximate: rebuilt from {ckpt.core.source or 'run files'}, not core_seed"
    else:
        tier.note = "assumes the final seeded context (core reads are not logged)"
    if not tier.lines:
        tier.note = f"context holds none of the injected fields: {NO_MESSAGE}"
    return tier


def tier_1c(ckpt: Checkpoint, node: Node) -> Tier:
    tier = Tier(key="1c", title="Metric contract", header=HEADER_1C, exact=False)
    path = ckpt.path / "metric_contract.json"
    try:
        present = path.is_file()
        head = path.open("rb").read(300).decode("utf-8", "replace") if present else ""
    except OSError:
        present, head = False, ""
    if not present:
        tier.exact = True
        tier.note = f"no metric_contract.json: {NO_MESSAGE}"
        return tier
    first = head.splitlines()[0] if head.splitlines() else ""
    tier.lines.append(TierLine(text=f"metric_contract.json: {first[:200]}", truncated=True))
    tier.note = "present; only its first line is shown (ARI renders the full contract)"
    if not node.ancestor_ids:
        tier.note += "; at the root's start the file did not exist yet"
        tier.lines.clear()
    return tier


def tier_1b(ckpt: Checkpoint, node: Node, started: float | None) -> tuple[Tier, set[str]]:
    """`result_summary` entries of the ancestors, root→parent, 120-char dedupe, 600 cap."""
    tier = Tier(key="1b", title="Ancestor conclusions", header="")
    seen: set[str] = set()
    partial = 0
    dropped: Counter[str] = Counter()
    for aid in node.ancestor_ids:
        entries = sorted(ckpt.entries_by_node.get(aid, []), key=lambda e: e.ts or 0.0)
        for entry in entries:
            if started is not None and entry.ts is not None and entry.ts >= started:
                continue  # not written yet at its start: not a drop, never there
            if entry.metadata.get("type") != "result_summary":
                continue  # the tier is the result summaries: the rest are Tier 2's to find
            text = entry.text.strip()
            if not text:
                dropped["empty"] += 1
                continue
            if text[:DEDUPE_CHARS] in seen:
                dropped["dup"] += 1
                continue
            seen.add(text[:DEDUPE_CHARS])
            partial += entry.partial
            cut = len(text) > ANCESTOR_SUMMARY_CAP
            tier.lines.append(
                TierLine(text=f"- {text[:ANCESTOR_SUMMARY_CAP]}", truncated=cut, entry_id=entry.id)
            )
    tier.header = header_1b(len(tier.lines))
    notes = []
    if started is None:
        notes.append("node start unknown: entries not filtered by time")
    if partial:
        tier.exact = False
        notes.append(f"{partial} entr{'y' if partial == 1 else 'ies'} known only by a preview")
    notes += _dropped_1b(dropped)
    if not tier.lines:
        notes.append(f"no ancestor result summaries: {NO_MESSAGE}")
    tier.note = "; ".join(notes)
    return tier, seen


def _dropped_1b(dropped: Counter[str]) -> list[str]:
    """What Tier 1b dropped of the ancestors' result summaries, and why."""
    notes = []
    if dropped["dup"]:
        summaries = plural(dropped["dup"], "result summary", "result summaries")
        notes.append(
            f"dropped {summaries}: {_its(dropped['dup'])} first {DEDUPE_CHARS} characters"
            " repeat an earlier one's (ARI keeps the first)"
        )
    if dropped["empty"]:
        empty = plural(dropped["empty"], "empty result summary", "empty result summaries")
        notes.append(f"dropped {empty}")
    return notes


def tier_2(replayed: Replay, keys_1b: set[str]) -> Tier:
    """Recorded start-up hits if logged, else the replay; deduped against 1b, 400 cap."""
    tier = Tier(key="2", title="Semantic supplement", header="")
    recorded = replayed.recorded
    hits: list[Hit]
    if recorded is not None:
        hits = recorded.hits
        unresolved = sum(1 for h in hits if not h.text)
        tier.exact = unresolved == 0
        tier.note = "from the recorded start-up search (access log)"
        if unresolved:
            tier.note += f"; {plural(unresolved, 'hit')} without text (not joined)"
    else:
        hits = replayed.hits
        tier.exact = False
        tier.note = f"approximate: replayed with {replayed.embedder} (no recorded search)"
        if replayed.query_source == "custom":
            tier.note += " for a custom query"
    dropped: Counter[str] = Counter()
    for hit in hits:
        text = hit.text.strip()
        if not text:
            dropped["empty" if hit.text or not hit.entry_id else "unjoined"] += 1
            continue
        if text[:DEDUPE_CHARS] in keys_1b:
            dropped["in 1b"] += 1
            continue
        tier.lines.append(
            TierLine(
                text=f"- {text[:SUPPLEMENT_CAP]}",
                truncated=len(text) > SUPPLEMENT_CAP,
                entry_id=hit.entry_id,
            )
        )
    tier.header = header_2(len(tier.lines))
    if dropped["in 1b"]:
        tier.note += (
            f"; dropped {plural(dropped['in 1b'], 'hit')}: {_its(dropped['in 1b'])} first"
            f" {DEDUPE_CHARS} characters are already in Tier 1b (ARI skips those)"
        )
    if dropped["empty"]:
        tier.note += f"; dropped {plural(dropped['empty'], 'empty hit')}"
    if not tier.lines:
        tier.note += f"; nothing left: {NO_MESSAGE}"
    return tier
