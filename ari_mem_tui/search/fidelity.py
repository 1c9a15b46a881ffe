"""Which ranker ranked a recording and a replay, and whether the replay ranks as the run did.

A recording's scores, and the run's files as a whole, say which memory backend made it
(search/backends.py); settings.json (or a live agent) names the Letta embedding handle. A replay
is ranked by a Letta server (`letta:<url>`), the run's embedding model through its endpoint
(`run:<model>`), a local model (MiniLM, BM25) or ARI's in-memory backend rule (`in-memory`).
`ranker_fidelity` turns those into one `RankerFidelity`: exact, a stand-in, or unverified (the
files cannot tell), in words, and when it is a stand-in what to do for the exact ranking. Every
view renders that value. Exact: a Letta server or the run's embedding model (or MiniLM, when
the run's handle is MiniLM's) for a Letta run; ARI's in-memory rule for an in-memory run; no
embedder for an in-memory or Letta v0.6 substring run.
"""

from __future__ import annotations

from ari_mem_tui.model import RankerFidelity
from ari_mem_tui.search import embedder as minilm
from ari_mem_tui.search.in_memory import NAME as IN_MEMORY

BACKEND_WORDS = {
    "letta": "a Letta server's embedder (scores 1 − 0.01·rank)",
    "in_memory": "ARI's in-memory backend (keyword-overlap scores, no window ranks)",
    "letta-substring": "a Letta v0.6 substring search (every score 0.0; no ranks)",
    "unknown": "an unknown backend (no hits recorded)",
}
# the local rankers whose vectors a Letta embedding handle can name exactly (search/embedder.py)
LOCAL_HANDLES = {minilm.MODEL_NAME: minilm.LETTA_HANDLE}
LOCAL_WORDS = {
    "minilm": "local MiniLM",
    "bm25": "local BM25",
    IN_MEMORY: "ARI's in-memory backend rule",
}
NO_EMBEDDER = ("in_memory", "letta-substring")  # backends that ranked without any embedder


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
    run: str = "unknown",
) -> RankerFidelity:
    """Whether ranking `used` (what the ranking says it used; `ranker` is the one chosen)
    ranks as the run did, for a recording of `backend` ("unknown": none to compare), the run's
    embedding `handle` (settings.json) and the run's memory backend `run` as its files show it
    (search/backends.py: it decides when no recording does). `recorded` is the recording's
    ranker in words."""
    source = backend if backend != "unknown" else run
    words, exact, label = _replay_ranker(ranker, used, handle, source)
    if source in NO_EMBEDDER and used != IN_MEMORY:
        exact = False  # no embedder ranked this run: no embedding model, no server is its own
        label = f"stand-in: {words} (the run recorded with {BACKEND_WORDS[source]})"
    chosen = getattr(ranker, "name", used)
    short = f"{_kind(exact)}: {used}"
    if used != chosen:
        exact = False  # what was asked for did not answer: say so, whatever stood in
        state = "unavailable" if getattr(ranker, "error", None) else "not ready yet"
        label = f"stand-in: {words} in place of {LOCAL_WORDS.get(chosen, chosen)} ({state})"
        short = f"stand-in: {used}, {chosen} {'failed' if state == 'unavailable' else 'not ready'}"
    note = ""
    if exact is None:
        note = _unverified(used, words)
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


def _replay_ranker(
    ranker: object, used: str, handle: str | None, source: str
) -> tuple[str, bool | None, str]:
    """(the ranker in words, exact?, label) of the ranking `used`, for a run of `source`."""
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
    if used == IN_MEMORY:  # the backend's own rule is exact on the runs that backend recorded
        if source == "in_memory":
            return words, True, f"exact: {words}"
        if source == "unknown":
            return words, None, f"unverified: {words} (the run's memory backend is unknown)"
        return words, False, f"stand-in: {words}"
    if used in LOCAL_HANDLES and local_ranker_of(handle) == used:
        return words, True, f"exact: {words}, the run's embedding model ({handle})"
    return words, False, f"stand-in: {words}"


def _unverified(used: str, words: str) -> str:
    """Why the files cannot tell whether `used` ranks as the run did."""
    if used == IN_MEMORY:
        return (
            "the run's files do not show its memory backend: if it was ARI's in-memory"
            " backend, these replays are exact"
        )
    return (
        f"the run's embedding handle is unknown (settings.json names none): if {words}"
        " is the run's embedding model, these replays are exact"
    )


def _advice(backend: str, handle: str | None) -> str:
    """How to get the run's own ranking, for a recording of `backend`."""
    if backend == "in_memory":
        return f"; replay with --embedder {IN_MEMORY} (the backend's own rule) and they vanish"
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
