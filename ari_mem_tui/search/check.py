"""The run's replay check: every recorded search a replay can rebuild, replayed and compared.

The access log records each node-scope `search_memory` ARI ran: its query, its scope
(`ancestor_ids`), its limit, its time and its results in rank order (§4.2). A replay rebuilds
the pool as of that time and ranks the query (search/replay.py's post-filter), so each such
search can be compared with what was recorded, as the marks compare them: entries, order,
global ranks and scores. That comparison is what turns "the run's ranker" into "exact" (or
"not reproduced"): a node's start-up search for its own views (replay.py), every search of the
run here, for the run's views (summary, the status bar, Health).

A stand-in ranker is not checked: it is not expected to reproduce anything, and checking a run
costs one ranking per recorded search. Where the result is kept for a reopen: search/check
_store.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ari_mem_tui.checkpoint.attribution import BULK, INHERIT
from ari_mem_tui.checkpoint.origin import hash_candidates
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.origin import AGENT, HashFinding
from ari_mem_tui.model.records import Record
from ari_mem_tui.model.words import plural
from ari_mem_tui.search.backends import run_backend
from ari_mem_tui.search.causes import FILES, likely_cause, other_ranker
from ari_mem_tui.search.fidelity import (
    STAND_IN,
    UNVERIFIED,
    ranker_fidelity,
    recording_ranker,
    run_verdict,
    with_check,
)
from ari_mem_tui.search.replay import (
    checkpoint_hash,
    mark_differences,
    post_filter,
    recorded_search,
    top_k_for,
)

ProgressFn = Callable[[int, int], None]
STARTUP = "start-up"
OTHER = "other"


@dataclass(kw_only=True)
class SearchCheck(Record):
    """One recorded search, replayed and compared."""

    FLOATS = ("ts",)
    node_id: str  # its reader ("" when the files cannot tell whose it was)
    kind: str  # "start-up" (a node's start-up search) or "other" (an LLM's, the pipeline's)
    ts: float
    query: str
    reproduced: bool
    differences: int = 0  # entries that differ (as `mark_differences` counts them)
    cause: str = ""  # the likely cause, when it differs


@dataclass(kw_only=True)
class ReplayCheck(Record):
    """What replaying the run's recorded searches showed (see the module doc)."""

    ranker: str = ""  # the ranker checked: "in-memory", "run:<model>", "letta:<url>" …
    word: str = ""  # the run's verdict: search/fidelity.py's words
    label: str = ""  # it in one line
    checked: int = 0  # recorded searches compared
    reproduced: int = 0  # of them, reproduced
    differs: list[str] = field(default_factory=list)  # readers whose recorded search differs
    # per kind of search ("start-up", "other"): {"checked": n, "reproduced": m}
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    searches: list[SearchCheck] = field(default_factory=list)
    hash: HashFinding | None = None  # the run's embedding model: the footer hash and its check
    note: str = ""  # why nothing was checked, or what is left out
    complete: bool = True  # False: interrupted

    def line(self) -> str:
        """`exact: …, 19 of 19 recorded searches reproduced` and the nodes that differ."""
        differs = ""
        if self.differs:
            shown = ", ".join(self.differs[:6]) + (" …" if len(self.differs) > 6 else "")
            differs = f"; differs on {plural(len(self.differs), 'node')}: {shown}"
        kinds = ""
        if len(self.by_kind) > 1:  # start-up searches and others: each said
            kinds = (
                " ("
                + ", ".join(
                    f"{kind} {n['reproduced']} of {n['checked']}"
                    for kind, n in self.by_kind.items()
                )
                + ")"
            )
        return self.label + kinds + differs + ("" if self.complete else " (interrupted)")


def recorded_searches(ckpt: Checkpoint) -> Iterator[Any]:
    """The read events a replay can rebuild: node-scope searches with a query and a scope
    (inheritance reads list, they do not rank; react searches rank another store)."""
    events = ckpt.access_events
    for row in events.rows_of_op("read"):
        event = events[row]
        if event.collection == "react_step" or event.query in (INHERIT, BULK):
            continue
        if not event.ancestor_ids or event.query is None or event.ts is None:
            continue
        yield event


def check_search(ckpt: Checkpoint, ranker: Any, event: Any) -> tuple[int, str]:
    """(entries that differ, what ranked it) between the recorded search `event` and its
    replay: its query over the pool as of its time, its scope, its limit."""
    limit = event.limit if isinstance(event.limit, int) and event.limit > 0 else 5
    ranking = ranker.rank(event.query, top_k_for(limit), before_ts=event.ts)
    scope = set(event.ancestor_ids)
    hits = post_filter(ranking.window, scope, checkpoint_hash(ckpt), limit, ranking.scores)
    recorded, _unresolved = recorded_search(ckpt, event)
    same_scores = ranking.windowless and recorded.backend == "in_memory"
    used = ranking.used or getattr(ranker, "name", "")
    return mark_differences(hits, recorded.hits, same_scores), used


def base_fidelity(ckpt: Checkpoint, ranker: Any, used: str | None = None) -> Any:
    """Whether `ranker` is the run's own, before anything is checked (search/fidelity.py)."""
    backend = run_backend(ckpt).name
    handle = ckpt.letta_embedding_config
    recorded = recording_ranker(backend, handle)
    used = used or getattr(ranker, "name", "")
    return ranker_fidelity(ranker, used, backend, handle, recorded, backend)


def check_run(
    ckpt: Checkpoint,
    ranker: Any,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ReplayCheck:
    """Replay every recorded search (`recorded_searches`) with `ranker` and compare; a
    stand-in is not checked (its `note` says why). Waits for the ranker's vectors first."""
    fidelity = base_fidelity(ckpt, ranker)
    plan = getattr(ranker, "plan", None)
    the_runs_model = plan is not None and plan.matches_handle is not False
    if fidelity.own is False and not the_runs_model:
        return stand_in_check(ckpt, ranker, fidelity)  # (not waited for: nothing to check)
    wait = getattr(ranker, "wait", None)
    if wait is not None:
        wait()
    fidelity = base_fidelity(ckpt, ranker)  # (the run model's footer hash is known now)
    finding = fidelity.hash
    if fidelity.own is False and not (finding is not None and finding.found is False):
        return stand_in_check(ckpt, ranker, fidelity)  # (the footer hash unknown: checked)
    name = getattr(ranker, "name", "")
    check = ReplayCheck(ranker=name, hash=fidelity.hash or _no_footers(ckpt))
    events = list(recorded_searches(ckpt))
    for done, event in enumerate(events):
        if cancelled is not None and cancelled():
            check.complete = False
            break
        differences, used = check_search(ckpt, ranker, event)
        if used != check.ranker:  # a ranker stood in (vectors not ready, endpoint failed)
            check.complete = False
            check.note = f"stopped: {used} answered in place of {check.ranker}"
            break
        check.searches.append(_result(ckpt, ranker, event, differences, used))
        if progress is not None:
            progress(done + 1, len(events))
    _sum_up(check, fidelity)
    return check


def stand_in_check(ckpt: Checkpoint, ranker: Any, fidelity: Any = None) -> ReplayCheck:
    """The check of a stand-in: none, and why (its fidelity's note says what would be
    exact)."""
    fidelity = fidelity or base_fidelity(ckpt, ranker)
    note = "not checked: a stand-in ranks otherwise than the run did"
    return ReplayCheck(
        ranker=getattr(ranker, "name", ""),
        word=STAND_IN,
        label=fidelity.label,
        hash=fidelity.hash or _no_footers(ckpt),
        note=note + (f" ({fidelity.note})" if fidelity.note else ""),
    )


def unchecked_check(ckpt: Checkpoint, ranker: Any, why: str) -> ReplayCheck:
    """The check of the run's own ranker not made (why: `why`, its note): "run's ranker,
    unchecked", not "no recorded search it could rebuild" (none was tried)."""
    fidelity = run_verdict(base_fidelity(ckpt, ranker), 0, 0, unchecked="")
    return ReplayCheck(
        ranker=getattr(ranker, "name", ""),
        word=fidelity.word,
        label=fidelity.label,
        hash=fidelity.hash or _no_footers(ckpt),
        note=f"not checked: {why}",
    )


def _no_footers(ckpt: Checkpoint) -> HashFinding:
    """The checkpoint hash where no ranker here rebuilds the footers: this path's, with the
    paths the run's files name, unchecked."""
    if ckpt.checkpoint_hash:  # a Letta server's memory: the agent's hash, its footers'
        return HashFinding(hash=ckpt.checkpoint_hash, source=AGENT)
    candidates = hash_candidates(ckpt)
    first = candidates[0]
    if run_backend(ckpt).in_memory:
        why = "ARI's in-memory backend writes no footers: no ranking depends on it"
    else:
        why = "only a replay with the run's embedding model (--embedder run) checks it"
    return HashFinding(
        hash=first.hash, source=first.source, path=first.path, tried=candidates, note=why
    )


def _result(ckpt: Checkpoint, ranker: Any, event: Any, differences: int, used: str) -> SearchCheck:
    kind = STARTUP if event.reader_how == "startup-search" else OTHER
    reader = event.reader if event.reader and event.reader in ckpt.nodes else ""
    cause = ""
    if differences:
        cause = likely_cause(ckpt, ranker, used, event.ts, event.ts)
    return SearchCheck(
        node_id=reader,
        kind=kind,
        ts=event.ts,
        query=event.query or "",
        reproduced=differences == 0,
        differences=differences,
        cause=cause,
    )


def _other_ranker(check: ReplayCheck) -> None:
    """Where start-up searches reproduce and not one other recorded search does, the others'
    cause is what ranked them, not the files the start-up searches were ranked over alike."""
    startup, other = check.by_kind.get(STARTUP), check.by_kind.get(OTHER)
    if not startup or not other or not startup["reproduced"] or other["reproduced"]:
        return
    said = other_ranker(startup, other)
    for search in check.searches:
        if search.kind == OTHER and search.cause == FILES:
            search.cause = said


def _sum_up(check: ReplayCheck, fidelity: Any) -> None:
    check.checked = len(check.searches)
    check.reproduced = sum(1 for s in check.searches if s.reproduced)
    for kind in (STARTUP, OTHER):
        mine = [s for s in check.searches if s.kind == kind]
        if mine:
            done = sum(1 for s in mine if s.reproduced)
            check.by_kind[kind] = {"checked": len(mine), "reproduced": done}
    differing = [s.node_id or "unattributed" for s in check.searches if not s.reproduced]
    check.differs = list(dict.fromkeys(differing))
    _other_ranker(check)
    verdict = with_check(fidelity, check)  # (the words a kept check is shown with, too)
    check.word, check.label = verdict.word, verdict.label
    if verdict.word == UNVERIFIED and not check.note:
        check.note = verdict.note
