"""Nouns of a why-not answer: why one node's start-up search did, or did not, give it an entry.

The search is taken apart in ARI's order (search/why.py): was there a search at all, was the
entry in the pool at that moment, is it of a kind the search reads, does the post-filter's scope
keep it, did the ranking reach it (the top_k window; the in-memory rule's keyword match), was it
within the limit, and did Tier 2 keep it in the context. Each step carries its numbers; the
words are render/why.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.model.records import RankerFidelity, Record

PASS, FAIL, NOT_APPLICABLE = "pass", "fail", "n/a"
# the steps in the order ARI takes them; a verdict is the first that fails, else SEEN
STEPS = ("searched", "time", "searchable", "scope", "window", "match", "limit", "context")
SEEN = "seen"


@dataclass(kw_only=True)
class WhyStep(Record):
    """One step of the search for one entry: `status` pass / fail / n/a (the step does not
    apply: a ranking step for an entry that was not in the pool, a window for a backend
    without one), `reason` a short code of what decided it, `numbers` what it was decided on."""

    key: str  # one of STEPS
    status: str
    reason: str
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class WhyAnswer(Record):
    """Why node `node_id` did (not) get entry `entry_id` from its start-up search: the JSON of
    `saw NODE --why ENTRY`. `verdict` is the first failing step's key, or "seen" (a hit that
    reached the context); `hit`, for a hit, its rank, score, global rank and the next entry out;
    `recorded`, where the node's search was logged with the same query, what the recording
    returned for the entry."""

    FLOATS = ("as_of",)

    node_id: str
    entry_id: str
    passage_id: str | None = None
    entry_node: str = ""  # the entry's writer ("" for a ReAct step of no node)
    kind: str = ""
    text: str = ""
    verdict: str
    steps: list[WhyStep] = field(default_factory=list)
    hit: dict[str, Any] | None = None
    recorded: dict[str, Any] | None = None
    query: str = ""
    query_source: str = ""
    as_of: float | None = None
    as_of_source: str | None = None
    params: dict[str, int] = field(default_factory=dict)
    embedder: str = ""
    windowless: bool = False
    fidelity: RankerFidelity = field(default_factory=RankerFidelity)
    notes: list[str] = field(default_factory=list)

    def step(self, key: str) -> WhyStep:
        return next(s for s in self.steps if s.key == key)
