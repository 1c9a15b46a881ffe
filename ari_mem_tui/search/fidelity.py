"""Which ranker ranked a recording and a replay, whether the replay ranks as the run did, and
the words every view says it with.

A recording's scores, and the run's files as a whole, say which memory backend made it
(search/backends.py); settings.json (or a live agent) names the Letta embedding handle. A replay
is ranked by a Letta server (`letta:<url>`), the run's embedding model through its endpoint
(`run:<model>`), a local model (MiniLM, BM25) or ARI's in-memory backend rule (`in-memory`).

Two questions make the verdict. Is the ranker the run's own (`ranker_fidelity`): a Letta server
or the run's embedding model with the run's footer hash (or MiniLM, when the run's handle is
MiniLM's) for a Letta run, ARI's in-memory rule for an in-memory run; no embedder for an
in-memory or Letta v0.6 substring run. And did the replay reproduce what the run recorded
(`node_verdict` for one node's start-up search, `run_verdict` for every recorded search a
replay can rebuild, search/check.py): the same entries, in the same order, with the same
scores. The words, defined here once and used by every view (text, JSON, TUI, dossier, Health):
"""

from __future__ import annotations

from collections import Counter

from ari_mem_tui.model import RankerFidelity
from ari_mem_tui.search.causes import causes_said
from ari_mem_tui.search.in_memory import NAME as IN_MEMORY

EXACT = "exact"  # the run's own ranker, and the recorded search was reproduced
UNCHECKED = "run's ranker, unchecked"  # the run's own ranker, no recording to check it with
NOT_REPRODUCED = "not reproduced"  # the run's own ranker, and it differs from the recording
STAND_IN = "stand-in"  # a ranker that is not the run's own: differences are expected
UNVERIFIED = "unverified"  # the files cannot tell whether the ranker is the run's own
WORDS = (EXACT, UNCHECKED, NOT_REPRODUCED, STAND_IN, UNVERIFIED)
HASH_UNKNOWN = "footer hash unknown (the run was moved from where it ran?); --checkpoint-hash H"

BACKEND_WORDS = {
    "letta": "a Letta server's embedder (scores 1 − 0.01·rank)",
    "in_memory": "ARI's in-memory backend (keyword-overlap scores, no global ranks)",
    "letta-substring": "a Letta v0.6 substring search (every score 0.0; no ranks)",
    "unknown": "an unknown backend (no hits recorded)",
}
LOCAL_WORDS = {
    "minilm": "local MiniLM",
    "bm25": "local BM25",
    IN_MEMORY: "ARI's in-memory backend rule",
}
NO_EMBEDDER = ("in_memory", "letta-substring")  # backends that ranked without any embedder
OUR_HANDLES = "ari-mem-tui/"  # how this tool's own embedding handles begin


def local_ranker_of(handle: str | None) -> str | None:
    """The local ranker that embeds exactly as the Letta handle `handle` does, if any."""
    if not handle or not handle.startswith(OUR_HANDLES):  # (no numpy for others' handles)
        return None
    return next((name for name, known in local_handles().items() if known == handle), None)


def local_handles() -> dict[str, str]:
    """The local rankers whose vectors a Letta embedding handle can name exactly: MiniLM's
    (search/embedder.py; imported when asked: it brings numpy, which `summary` needs not)."""
    from ari_mem_tui.search import embedder as minilm  # noqa: PLC0415

    return {minilm.MODEL_NAME: minilm.LETTA_HANDLE}


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
    ranker in words. Nothing is checked here: the run's own ranker is "unchecked" until
    `node_verdict` or `run_verdict` says what a recording showed."""
    source = backend if backend != "unknown" else run
    words, own, what = _replay_ranker(ranker, used, handle, source)
    if source in NO_EMBEDDER and used != IN_MEMORY:
        own = False  # no embedder ranked this run: no embedding model, no server is its own
        what = f"{words} (the run recorded with {BACKEND_WORDS[source]})"
    chosen = getattr(ranker, "name", used)
    short_what = used
    if used != chosen:
        own = False  # what was asked for did not answer: say so, whatever stood in
        state = "unavailable" if getattr(ranker, "error", None) else "not ready yet"
        what = f"{words} in place of {LOCAL_WORDS.get(chosen, chosen)} ({state})"
        short_what = f"{used}, {chosen} {'failed' if state == 'unavailable' else 'not ready'}"
    word = {True: UNCHECKED, False: STAND_IN}.get(own, UNVERIFIED)  # type: ignore[arg-type]
    finding = getattr(ranker, "hash_finding", None) if used == chosen else None
    if finding is not None and finding.found is False:
        short_what = f"{used}, hash unknown"
    note = _note(own, used, words, finding, backend, handle, recorded)
    return RankerFidelity(
        exact=False if own is False else None,
        label=f"{word}: {what}",
        short=f"{_short_word(word)}: {short_what}",
        ranker=words,
        recorded=recorded,
        note=note,
        own=own,
        word=word,
        hash=finding,
    )


def _note(
    own: bool | None,
    used: str,
    words: str,
    finding: object,
    backend: str,
    handle: str | None,
    recorded: str,
) -> str:
    """Why the replay may differ from the recording, and what would be exact ("" when the
    ranker is the run's own)."""
    if own is None:
        return _unverified(used, words)
    if finding is not None and getattr(finding, "found", None) is False:
        return (
            f"{finding.line()}: the footers the run's model embedded carried the run's hash;"  # type: ignore[attr-defined]
            " give it with --checkpoint-hash H (the first 12 hex of sha1 of the path the run"
            " ran at)"
        )
    if not own and backend != "unknown":
        return (
            f"recorded by {recorded or BACKEND_WORDS[backend]}, replayed with {words}: different"
            f" rankers, so differences are expected{_advice(backend, handle)}"
        )
    return ""


def node_verdict(
    fidelity: RankerFidelity, verified: bool | None, cause: str = "", why: str = ""
) -> RankerFidelity:
    """`fidelity` with what one node's recorded start-up search showed: `verified` True (its
    replay gave the recording: entries, order, scores), False (it differs; `cause` is the
    likely one), None (nothing to check: `why`). Only the run's own ranker becomes "exact" or
    "not reproduced"; a stand-in stays one, and an unverified ranker says what it showed."""
    fidelity.verified = verified
    what = fidelity.label.split(": ", 1)[-1]
    if fidelity.own is True:
        if verified is True:
            _say(fidelity, EXACT, f"{what}, its recorded search reproduced", True)
        elif verified is False:
            fidelity.cause = cause
            likely = f" (likely cause: {cause})" if cause else ""
            _say(fidelity, NOT_REPRODUCED, f"{what} differs from the recording{likely}", False)
        elif why:
            _say(fidelity, UNCHECKED, f"{what} ({why})", None)
    elif fidelity.own is None and verified is not None:
        shown = "reproduced its recorded search" if verified else "differs from the recording"
        fidelity.label += f"; {shown}"
    return fidelity


def run_verdict(
    fidelity: RankerFidelity,
    checked: int,
    reproduced: int,
    cause: str = "",
    unchecked: str = "no recorded search it could rebuild",
    causes: int = 1,
) -> RankerFidelity:
    """`fidelity` of a whole run with its replay check (search/check.py): `reproduced` of the
    `checked` recorded searches a replay could rebuild; with none, `unchecked` says why ("":
    said elsewhere, the check's note); `cause`, the likely cause in words, says `causes` of
    them (search/causes.py `causes_said`)."""
    what = fidelity.label.split(": ", 1)[-1]
    if fidelity.own is not True:
        if checked:
            fidelity.label += f"; {reproduced} of {checked} recorded searches reproduced"
        return fidelity
    fidelity.verified = None if not checked else reproduced == checked
    if not checked:
        _say(fidelity, UNCHECKED, f"{what} ({unchecked})" if unchecked else what, None)
    elif reproduced == checked:
        _say(
            fidelity, EXACT, f"{what}, {reproduced} of {checked} recorded searches reproduced", True
        )
    else:
        fidelity.cause = cause
        likely = f" (likely {'causes' if causes > 1 else 'cause'}: {cause})" if cause else ""
        differs = checked - reproduced
        said = f"{what}: {differs} of {checked} recorded searches differ{likely}"
        _say(fidelity, NOT_REPRODUCED, said, False)
    return fidelity


def with_check(fidelity: RankerFidelity, check: object | None) -> RankerFidelity:
    """A run's `fidelity` with its replay check (search/check.py `ReplayCheck`), when one was
    made; without one the run's own ranker stays "unchecked", and says where to check it."""
    if check is None:
        if fidelity.own is True:
            _say(
                fidelity,
                UNCHECKED,
                f"{fidelity.label.split(': ', 1)[-1]} (summary checks it)",
                None,
            )
        return fidelity
    checked, reproduced = getattr(check, "checked", 0), getattr(check, "reproduced", 0)
    searches = getattr(check, "searches", [])
    causes = Counter(s.cause for s in searches if getattr(s, "cause", ""))
    return run_verdict(fidelity, checked, reproduced, causes_said(causes), causes=len(causes))


def _say(fidelity: RankerFidelity, word: str, what: str, exact: bool | None) -> None:
    fidelity.word, fidelity.exact = word, exact
    fidelity.label = f"{word}: {what}"
    used = fidelity.short.split(": ", 1)[-1]
    fidelity.short = f"{_short_word(word)}: {used}"


def _short_word(word: str) -> str:
    """A title's form of the word: "unchecked" for the run's ranker with nothing checked."""
    return "unchecked" if word == UNCHECKED else word


def _replay_ranker(
    ranker: object, used: str, handle: str | None, source: str
) -> tuple[str, bool | None, str]:
    """(the ranker in words, the run's own?, what it is for a label) of the ranking `used`,
    for a run of `source`."""
    if used.startswith("letta:"):
        url = used.removeprefix("letta:")
        return f"the Letta server at {url}", True, f"ranked by the Letta server ({url})"
    if used.startswith("run:"):
        return _run_model(ranker, used, handle)
    words = LOCAL_WORDS.get(used, used)
    if used == IN_MEMORY:  # the backend's own rule is exact on the runs that backend recorded
        if source == "in_memory":
            return words, True, words
        if source == "unknown":
            return words, None, f"{words} (the run's memory backend is unknown)"
        return words, False, words
    if local_ranker_of(handle) == used:
        return words, True, f"{words}, the run's embedding model ({handle})"
    return words, False, words


def _run_model(ranker: object, used: str, handle: str | None) -> tuple[str, bool | None, str]:
    """The run's embedding model through its endpoint: its own when the model is the run's
    handle's and the footers carry the run's hash (search/run_hash.py found it, or it was
    given)."""
    plan = getattr(ranker, "plan", None)
    model = used.removeprefix("run:")
    where = f" at {plan.shown_url}" if plan is not None else ""
    words = f"the embedding model {model}{where}"
    run_handle = getattr(ranker, "handle", None) or handle
    matches = plan.matches_handle if plan is not None else None
    finding = getattr(ranker, "hash_finding", None)
    if matches is None:
        return words, None, f"{model} (the run's embedding handle is unknown)"
    if not matches:
        return words, False, f"{model} (the run embedded with {run_handle})"
    if finding is not None and finding.found is False:
        return words, False, HASH_UNKNOWN
    return words, True, f"the run's embedding model ({run_handle})"


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
