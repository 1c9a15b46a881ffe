"""Which memory backend recorded a run: read off its recorded scores and its other files.

A recording's scores show its backend (docs/ari-format.md §5.2): Letta gives the row at
window rank r `1 − 0.01·r`; ARI's in-memory backend keyword overlap. One recording can fit both
(a 4-word query's 1.0, 0.75, 0.5), so the run is judged as a whole, from three signals where
its files hold them: the core seed (InMemory's context carries `seeded_at`; Letta's does not,
and its top-level `seeded_at` is 0.0), the entry ids of the access log's writes (uuid4 strings
vs Letta's `passage-…`), and every recorded search's scores (one that only keyword overlap
explains settles it). Signals that disagree decide nothing: the run is then "unknown", and the
reason is kept for the replay to say. settings.json's embedding handle is no signal: ARI's
dashboard writes it whatever the backend.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice, pairwise

from ari_mem_tui.checkpoint.values import as_float
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.columns import INHERIT

ON_GRID = 1e-6  # a Letta score is 1 - 0.01 r: within float noise of a whole hundredth
# events looked at per signal: a run has one backend, and a big run's 200k events would make
# the first replay wait for the verdict
SAMPLE = 5000
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def recorded_backend(scores: list[float]) -> str:
    """Which backend recorded these scores, in rank order, judged on this recording alone.

    Letta gives the row at window rank r the score 1 - 0.01 r: every score on the 0.01 grid,
    and, as no two rows share a rank, strictly falling until it reaches 0. ARI's in-memory
    backend scores keyword overlap (matched query words / query words: 0.25, 0.125, 0.444…),
    which ties and leaves the grid. Both are in [0, 1]; an in-memory 0.5 is on the grid: see
    `run_backend` for the run as a whole.
    """
    if not scores:
        return "unknown"
    positive = [s for s in scores if s > 0]
    if not positive:
        return "letta-substring"
    # the range first: a recorded 1e308 is a finite float whose hundredths are not (round(inf))
    on_grid = all(0 <= s <= 1 and abs(s * 100 - round(s * 100)) < ON_GRID for s in scores)
    falling = all(a > b for a, b in pairwise(positive))
    zeros_last = scores[len(positive) :] == [0.0] * (len(scores) - len(positive))
    return "letta" if on_grid and falling and zeros_last else "in_memory"


def event_scores(results: list) -> list[float]:
    """A read event's scores in rank order (a missing or odd score reads 0.0: no number, a
    bool, NaN, an infinity, an integer past a float's range)."""
    scores = []
    for row in results:
        score = row.get("score") if isinstance(row, dict) else None
        value = as_float(score)
        scores.append(0.0 if value is None else value)
    return scores


@dataclass
class RunBackend:
    """Which memory backend recorded a run, and what says so."""

    name: str = "unknown"  # "in_memory" | "letta" | "unknown"
    signals: dict[str, str] = field(default_factory=dict)  # signal -> what it says
    note: str = ""  # why it is unknown when signals disagree

    @property
    def in_memory(self) -> bool:
        return self.name == "in_memory"


def _seed_signal(ckpt: Checkpoint) -> str | None:
    core = ckpt.core
    if core.source != "memory_backup.jsonl.gz" or not core.ari_context:
        return None
    if "seeded_at" in core.ari_context:
        return "in_memory"
    return "letta" if not core.seeded_at else None


def _id_signal(ckpt: Checkpoint) -> str | None:
    kinds = Counter()
    events = ckpt.access_events
    strings, eid = events.strings, events.eid
    for row in islice(events.rows_of_op("write"), SAMPLE):
        entry_id = strings[eid[row]]
        if entry_id:
            if entry_id.startswith("passage-"):
                kinds["letta"] += 1
            elif UUID4.match(entry_id):
                kinds["in_memory"] += 1
            else:
                kinds["other"] += 1
    if not kinds or kinds["other"] or len(kinds) > 1:
        return None
    return next(iter(kinds))


def _score_signal(ckpt: Checkpoint) -> str | None:
    """Judged over the recorded node-scope searches (the first SAMPLE): one that only in-memory scores explain
    (ties, off the 0.01 grid) settles it; a 4-word query's 1.0, 0.75, 0.5 fits both."""
    kinds = set()
    events = ckpt.access_events
    strings, coll, query = events.strings, events.coll, events.query
    react = strings.find("react_step")
    reads = list(events.rows_of_op("read"))
    # each distinct query read once (30k reads of a 10k-node run ask a few thousand)
    inherit = {
        code
        for code in set(map(query.__getitem__, reads))
        if (strings[code] or "").startswith(INHERIT)
    }
    searches = (row for row in reads if coll[row] != react and query[row] not in inherit)
    for row in islice(searches, SAMPLE):
        numbers = [as_float(s) for s in events.scores_at(row)]
        if numbers and None not in numbers:
            kinds.add(recorded_backend(numbers))  # type: ignore[arg-type]  # (no None in it)
    if "in_memory" in kinds:
        return "in_memory"
    return "letta" if "letta" in kinds else None


SIGNALS = {
    "core seed": _seed_signal,
    "entry ids": _id_signal,
    "recorded scores": _score_signal,
}


def run_backend(ckpt: Checkpoint) -> RunBackend:
    """The backend the run's files show (cached on the checkpoint: it reads every event)."""
    signature = (id(ckpt.access_events), len(ckpt.access_events), id(ckpt.core))
    cached = ckpt.derived.get("run_backend")
    if cached is not None and cached[0] == signature:
        return cached[1]
    signals = {name: said for name, judge in SIGNALS.items() if (said := judge(ckpt))}
    verdicts = set(signals.values())
    found = RunBackend(signals=signals)
    if len(verdicts) == 1:
        found.name = verdicts.pop()
    elif verdicts:
        shown = ", ".join(f"{name}: {said}" for name, said in signals.items())
        found.note = f"the run's files disagree on its memory backend ({shown})"
    ckpt.derived["run_backend"] = (signature, found)
    return found
