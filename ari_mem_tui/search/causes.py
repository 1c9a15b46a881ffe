"""Why a replay by the run's own ranker may differ from what the run recorded: the likely cause.

A replay that should be exact but differs says "not reproduced" with what most likely made the
difference, from what the files and the ranker show:
- a late insert: an entry stamped before the search whose write reached the memory after it
  (its write event is logged after the search's read event), so the search could not rank it
  and the replay, which cuts the pool by the stamp, does (the demo plants one);
- the footer hash: the run's embedding model embedded each passage with the run's checkpoint
  hash in its footer; a hash that no recorded search confirmed may not be the run's;
- the endpoint or its cached vectors: another endpoint serving the same model name, or a
  cached vector it wrote, gives other vectors;
- a Letta server's memory: an agent restored with another footer hash, or changed since;
- another ranker: where the start-up searches reproduce and no other recorded search does,
  the others were ranked by something else (search/check.py judges that over the whole run).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from math import isnan

from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.words import plural

FILES = "the run's files: an entry missing from the backup, or stamped otherwise"
# start-up searches reproduce and none of the others does: not the files (both kinds rank the
# same memory), but what ranked them (the demo's LLM searches keep its keyword stand-in's)
OTHER_RANKER = "the other searches were recorded by another ranker"


def other_ranker(startup: dict[str, int], other: dict[str, int]) -> str:
    """OTHER_RANKER with the counts that show it (`by_kind` of search/check.py)."""
    return (
        f"{OTHER_RANKER}: {startup['reproduced']} of {startup['checked']} start-up searches"
        f" reproduce, none of the {other['checked']} others does"
    )


def late_inserts(ckpt: Checkpoint, as_of: float | None, searched: float | None) -> int:
    """Entries stamped before `as_of` whose write event is logged after `searched` (the
    recorded search's read event): the search could not have ranked them."""
    if as_of is None or searched is None:
        return 0
    stamps, written, longest = _writes(ckpt)
    low = bisect_left(stamps, as_of - longest)
    high = bisect_left(stamps, as_of)
    return sum(1 for i in range(low, high) if written[i] > searched)


def _writes(ckpt: Checkpoint) -> tuple[list[float], list[float], float]:
    """Each joined write's entry stamp and the time its write event was logged, by stamp, and
    the longest gap between the two (kept on the checkpoint: one pass over the writes)."""
    events, entries = ckpt.access_events, ckpt.entries
    signature = (id(events), len(events), id(entries))
    cached = ckpt.derived.get("late_inserts")
    if cached is not None and cached[0] == signature:
        return cached[1]
    pairs = []
    for row in events.rows_of_op("write"):
        target = events.joined[row]
        if target >= 0:
            stamp = entries.ts[target]
            if not isnan(stamp):  # (NaN: no ts, never in an as-of pool)
                pairs.append((stamp, events.ts[row]))
    pairs.sort()
    longest = max((max(0.0, w - s) for s, w in pairs), default=0.0)
    found = ([s for s, _ in pairs], [w for _, w in pairs], longest)
    ckpt.derived["late_inserts"] = (signature, found)
    return found


def likely_cause(
    ckpt: Checkpoint, ranker: object, used: str, as_of: float | None, searched: float | None
) -> str:
    """The likely cause, in words, of a replay ranked with `used` that differs from the
    recording made at `searched`, over the pool as of `as_of`."""
    late = late_inserts(ckpt, as_of, searched)
    if late:
        return (
            f"{plural(late, 'entry', 'entries')} stamped before the search reached the memory after it"
            " (a late insert): the search could not rank it, the replay does"
        )
    if used.startswith("run:"):
        finding = getattr(ranker, "hash_finding", None)
        if finding is not None and finding.found is not True:
            return f"the footer hash {finding.hash} ({finding.source}) is not confirmed"
        return (
            "the endpoint's vectors: another endpoint serving the model name, or a cached"
            " vector it wrote"
        )
    if used.startswith("letta:"):
        return (
            "the server's memory: an agent restored with another footer hash, or changed"
            " since the run"
        )
    return FILES


def causes_said(causes: Counter[str]) -> str:
    """The likely cause of the differing searches in words; where they have more than one,
    each with how many searches it explains, the most common first (three named at most)."""
    ranked = causes.most_common()
    if len(ranked) <= 1:
        return ranked[0][0] if ranked else ""
    said = [f"{plural(n, 'search', 'searches')}: {cause}" for cause, n in ranked[:3]]
    rest = sum(n for _, n in ranked[3:])
    if rest:
        said.append(f"{plural(rest, 'search', 'searches')}: other causes")
    return "; ".join(said)
