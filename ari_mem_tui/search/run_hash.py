"""The run's checkpoint hash, found and checked: which candidate reproduces recorded searches.

The run's embedding model embedded each passage with ARI's footer, which carries the run's
checkpoint hash (§1.3, §3.7): rebuilt with another hash, the texts are other texts, their
vectors other vectors, and the ranking another ranking. A run copied from where it ran hashes
differently, so the hash of the folder it sits in now is only a guess, as is each path its
files name (checkpoint/origin.py gathers them). A guess is checked by reproducing a few
recorded searches with it: the earliest ones that returned something (their pools are the
smallest, so a candidate costs the vectors of a small prefix of the run), each compared with
its recording as every replay is (search/check.py). The first candidate that reproduces them
all is the run's; else the one that reproduces most, when that is more than half; else none
is, and the replay says so: a stand-in, "footer hash unknown".
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from math import isnan
from typing import Any

from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.origin import Candidate, HashFinding
from ari_mem_tui.search.check import check_search, recorded_searches
from ari_mem_tui.search.embed_client import EndpointFailed

PROBES = 5  # recorded searches reproduced per candidate
MIN_POOL = 10  # a search over fewer entries proves little (any order of three is one in six)

# makes a ranker of the run's model over `entries`, their texts rebuilt with `hash`
ProbeRanker = Callable[[str, Sequence[Any], list[str]], Any]


def probe_events(ckpt: Checkpoint, count: int = PROBES) -> tuple[list[Any], list[Any]]:
    """The recorded searches a candidate is checked on, and the entries their pools hold: the
    earliest searches that returned something and ranked at least MIN_POOL entries (else the
    earliest that returned something)."""
    found = sorted((e for e in recorded_searches(ckpt) if e.results), key=lambda e: e.ts)
    if not found:
        return [], []
    entries = ckpt.entries
    stamps = sorted(ts for ts in entries.ts if not isnan(ts))  # (NaN: no ts)
    big = [e for e in found if _pool_size(stamps, e.ts) >= MIN_POOL]
    chosen = (big or found)[:count]
    cut = max(e.ts for e in chosen)
    pool = [entry for entry in entries if entry.ts is not None and entry.ts <= cut + 1.0]
    return chosen, pool


def _pool_size(stamps: list[float], ts: float) -> int:
    return bisect_right(stamps, ts)


def find_hash(
    ckpt: Checkpoint,
    candidates: list[Candidate],
    make_ranker: ProbeRanker,
    count: int = PROBES,
) -> HashFinding:
    """The first of `candidates` (this path's first) whose footers reproduce the probes, as
    above. `make_ranker(hash, entries, queries)` builds the run's model over the probes'
    pools; its failure (the endpoint) ends the search: the caller's ranker fails alike."""
    first = candidates[0]
    events, pool = probe_events(ckpt, count)
    if not events:
        return HashFinding(
            hash=first.hash,
            source=first.source,
            path=first.path,
            tried=candidates,
            note="no recorded search returned anything to reproduce",
        )
    queries = list(dict.fromkeys(e.query for e in events))
    best: tuple[int, Candidate] | None = None
    tried: list[Candidate] = []
    for candidate in candidates:
        ranker = make_ranker(candidate.hash, pool, queries)
        if getattr(ranker, "error", None):  # the endpoint: the run's ranker fails alike
            why = getattr(ranker, "failure", "") or ranker.error
            raise EndpointFailed(why, getattr(ranker, "failure_kind", "offline"))
        reproduced = sum(1 for e in events if check_search(ckpt, ranker, e)[0] == 0)
        tried.append(candidate)
        if reproduced == len(events):
            return _found(candidate, reproduced, len(events), tried)
        if best is None or reproduced > best[0]:
            best = (reproduced, candidate)
    if best is not None and best[0] * 2 > len(events):
        return _found(best[1], best[0], len(events), tried)
    return HashFinding(
        hash=first.hash,
        source=first.source,
        path=first.path,
        found=False,
        probes=len(events),
        reproduced=best[0] if best is not None and best[1] is first else 0,
        tried=tried,
    )


def _found(
    candidate: Candidate, reproduced: int, probes: int, tried: list[Candidate]
) -> HashFinding:
    return HashFinding(
        hash=candidate.hash,
        source=candidate.source,
        path=candidate.path,
        found=True,
        reproduced=reproduced,
        probes=probes,
        tried=tried,
    )
