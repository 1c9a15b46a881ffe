"""Which ranker ranked a recording and a replay, and whether the replay ranks as the run did.

A recording's scores say which backend made it (format doc §5.2); settings.json (or a live
agent) names the Letta embedding handle. A replay is ranked by a Letta server (`letta:<url>`),
the run's embedding model through its endpoint (`run:<model>`), or a local model (MiniLM,
BM25). `ranker_fidelity` turns those into one `RankerFidelity`: exact or a stand-in, in words,
and when it is a stand-in what to do for the exact ranking. Every view renders that value.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from ari_mem_tui.model import Checkpoint, RankerFidelity
from ari_mem_tui.search import embedder as minilm

ON_GRID = 1e-6  # a Letta score is 1 - 0.01 r: within float noise of a whole hundredth
BACKEND_SAMPLE = 50  # start-up reads looked at to tell a whole run's backend

BACKEND_WORDS = {
    "letta": "a Letta server's embedder (scores 1 − 0.01·rank)",
    "in_memory": "ARI's in-memory backend (keyword-overlap scores, no window ranks)",
    "letta-substring": "a Letta v0.6 substring search (every score 0.0; no ranks)",
    "unknown": "an unknown backend (no hits recorded)",
}
# the local rankers whose vectors a Letta embedding handle can name exactly (search/embedder.py)
LOCAL_HANDLES = {minilm.MODEL_NAME: minilm.LETTA_HANDLE}
LOCAL_WORDS = {"minilm": "local MiniLM", "bm25": "local BM25"}


def recorded_backend(scores: list[float]) -> str:
    """Which backend recorded these scores, in rank order (ari-checkpoint-format.md §5.2).

    Letta gives the row at window rank r the score 1 - 0.01 r: every score on the 0.01 grid,
    and, as no two rows share a rank, strictly falling until it reaches 0. ARI's in-memory
    backend scores keyword overlap (matched query words / query words: 0.25, 0.125, 0.444…),
    which ties and leaves the grid. Both are in [0, 1]; an in-memory 0.5 is on the grid, so one
    recording is judged as a whole.
    """
    if not scores:
        return "unknown"
    positive = [s for s in scores if s > 0]
    if not positive:
        return "letta-substring"
    on_grid = all(abs(s * 100 - round(s * 100)) < ON_GRID and 0 <= s <= 1 for s in scores)
    falling = all(a > b for a, b in pairwise(positive))
    zeros_last = scores[len(positive) :] == [0.0] * (len(scores) - len(positive))
    return "letta" if on_grid and falling and zeros_last else "in_memory"


def event_scores(results: list) -> list[float]:
    """A read event's scores in rank order (a missing or odd score reads 0.0)."""
    scores = []
    for row in results:
        score = row.get("score") if isinstance(row, dict) else None
        ok = isinstance(score, (int, float)) and not isinstance(score, bool)
        scores.append(float(score) if ok else 0.0)
    return scores


def run_backend(ckpt: Checkpoint) -> str:
    """The backend most of the run's recorded start-up searches show ("unknown": none)."""
    seen: Counter[str] = Counter()
    for event in ckpt.access_events:
        if event.reader_how == "startup-search" and event.results:
            seen[recorded_backend(event_scores(event.results))] += 1
            if sum(seen.values()) >= BACKEND_SAMPLE:
                break
    seen.pop("unknown", None)
    return seen.most_common(1)[0][0] if seen else "unknown"


def local_ranker_of(handle: str | None) -> str | None:
    """The local ranker that embeds exactly as the Letta handle `handle` does, if any."""
    return next((name for name, known in LOCAL_HANDLES.items() if known == handle), None)


def recording_ranker(backend: str, handle: str | None) -> str:
    """In words, what ranked a recording: the backend its scores show, and for a Letta server
    the embedding handle settings.json names (ARI's `letta_embedding_config`), when known."""
    if backend != "letta" or not handle:
        return BACKEND_WORDS[backend]
    local = local_ranker_of(handle)
    embedder = f"this tool's {local} ({handle})" if local else handle
    return f"a Letta server embedding with {embedder} per settings.json (scores 1 − 0.01·rank)"


def ranker_fidelity(
    ranker: object,
    used: str,
    backend: str = "unknown",
    handle: str | None = None,
    recorded: str = "",
) -> RankerFidelity:
    """Whether ranking `used` (what the ranking says it used; `ranker` is the one chosen)
    ranks as the run did, for a recording of `backend` ("unknown": none) and the run's
    embedding `handle` (settings.json). `recorded` is the recording's ranker in words."""
    words, exact, label = _replay_ranker(ranker, used, handle)
    if backend in ("in_memory", "letta-substring"):
        exact = False  # no embedder ranked these recordings
        label = f"stand-in: {words} (the run recorded with {BACKEND_WORDS[backend]})"
    chosen = getattr(ranker, "name", used)
    short = f"{_kind(exact)}: {used}"
    if used != chosen:
        exact = False  # what was asked for did not answer: say so, whatever stood in
        state = "unavailable" if getattr(ranker, "error", None) else "not ready yet"
        label = f"stand-in: {words} in place of {LOCAL_WORDS.get(chosen, chosen)} ({state})"
        short = f"stand-in: {used}, {chosen} {'failed' if state == 'unavailable' else 'not ready'}"
    note = ""
    if exact is None:
        note = (
            f"the run's embedding handle is unknown (settings.json names none): if {words}"
            " is the run's embedding model, these replays are exact"
        )
    elif not exact and backend != "unknown":
        note = (
            f"recorded by {recorded or BACKEND_WORDS[backend]}, replayed with {words}: different"
            f" rankers, so differences are expected{_advice(backend, handle)}"
        )
    return RankerFidelity(
        exact=exact, label=label, short=short, ranker=words, recorded=recorded, note=note
    )


def _kind(exact: bool | None) -> str:
    return RankerFidelity(exact=exact).kind


def _replay_ranker(ranker: object, used: str, handle: str | None) -> tuple[str, bool | None, str]:
    """(the ranker in words, exact?, label) of the ranking `used`, before any recording."""
    if used.startswith("letta:"):
        url = used.removeprefix("letta:")
        return f"the Letta server at {url}", True, f"exact: ranked by the Letta server ({url})"
    if used.startswith("run:"):
        plan = getattr(ranker, "plan", None)
        model = used.removeprefix("run:")
        where = f" at {plan.shown_url}" if plan is not None else ""
        words = f"the embedding model {model}{where}"
        run_handle = getattr(ranker, "handle", None) or handle
        matches = plan.matches_handle if plan is not None else None
        if matches is None:
            return words, None, f"unverified: {model} (the run's embedding handle is unknown)"
        if not matches:
            return words, False, f"stand-in: {model} (the run embedded with {run_handle})"
        return words, True, f"exact: the run's embedding model ({run_handle})"
    words = LOCAL_WORDS.get(used, used)
    if used in LOCAL_HANDLES and local_ranker_of(handle) == used:
        return words, True, f"exact: {words}, the run's embedding model ({handle})"
    return words, False, f"stand-in: {words}"


def _advice(backend: str, handle: str | None) -> str:
    """How to get the run's own ranking, for a recording of `backend`."""
    if backend != "letta":
        return ""
    local = local_ranker_of(handle)
    if local is not None:
        return f"; replay with local {local} and they should vanish"
    if handle:
        return (
            f"; --embedder run ranks with the run's embedding model ({handle}; it sends the"
            " memory texts to its endpoint), or --letta-url on the same server, and they"
            " should vanish"
        )
    return (
        "; replay with --letta-url on the same server, or --embedder run with --embed-url and"
        " --embed-model naming the run's embedding model, and they should vanish"
    )
