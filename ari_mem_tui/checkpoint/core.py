"""Core memory blocks (§3.5, §5.6): the backup's core_seed, or an approximation from run files.

The approximation rebuilds `ari_context` from `idea.json`, `evaluation_criteria.json` and
`experiment.md` the way the root's agent loop seeds it; `hardware_spec` cannot be known offline
and is left out rather than guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ari_mem_tui.checkpoint.jsonfile import read_json
from ari_mem_tui.model import CoreBlocks, Problem

IDEA_DESCRIPTION_CAP = 400  # selected_idea = "<title>: <description[:400]>"


def core_from_seed(record: dict[str, Any], source: str) -> CoreBlocks:
    return CoreBlocks(
        persona=record.get("persona") or "",
        human=record.get("human") or "",
        ari_context=record.get("context") or {},
        seeded_at=record.get("seeded_at"),
        source=source,
    )


def _first_idea(idea: Any) -> dict[str, Any]:
    ideas = idea.get("ideas") if isinstance(idea, dict) else None
    if isinstance(ideas, list) and ideas and isinstance(ideas[0], dict):
        return ideas[0]
    return {}


def _pick(key: str, *documents: Any) -> Any:
    for document in documents:
        if isinstance(document, dict) and document.get(key) not in (None, ""):
            return document[key]
    return None


def approximate_core(ckpt: Path, goal: str, problems: list[Problem]) -> CoreBlocks:
    """ari_context as the root would have seeded it, from the files that survive on disk."""
    used: list[str] = []
    idea = criteria = None
    if (ckpt / "idea.json").is_file():
        idea = read_json(ckpt / "idea.json", "idea.json", problems, retry=False)
        used += ["idea.json"] if idea is not None else []
    if (ckpt / "evaluation_criteria.json").is_file():
        criteria = read_json(
            ckpt / "evaluation_criteria.json", "evaluation_criteria.json", problems, retry=False
        )
        used += ["evaluation_criteria.json"] if criteria is not None else []
    first = _first_idea(idea)
    context: dict[str, Any] = {}
    if goal and (ckpt / "experiment.md").is_file():
        context["experiment_goal"] = goal
        used.append("experiment.md")
    metric = _pick("primary_metric", idea, first, criteria)
    if isinstance(metric, str):
        context["primary_metric"] = metric
        better = _pick("higher_is_better", idea, first, criteria)
        context["higher_is_better"] = better if isinstance(better, bool) else True
    rationale = _pick("metric_rationale", idea, first, criteria)
    if isinstance(rationale, str):
        context["metric_rationale"] = rationale
    title = first.get("title")
    if isinstance(title, str) and title:
        description = first.get("description")
        description = description if isinstance(description, str) else ""
        context["selected_idea"] = f"{title}: {description[:IDEA_DESCRIPTION_CAP]}"
    if not context:
        return CoreBlocks()
    return CoreBlocks(ari_context=context, source=" + ".join(used), approximate=True)
