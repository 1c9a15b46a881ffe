"""A run's replay check, for the commands and the TUI: kept for these files, else made and kept.

`summary` says how far the run's replays reproduce its recorded searches, and the TUI's status
bar says it too, once its background check ends. Both ask here: the check kept beside the run
index for these files and this ranker (search/check_store.py) when there is one, else the check
made now (search/check.py) with the ranker the user chose, and kept. A stand-in is not checked
(nothing it gives is expected to match), so asking costs nothing then: no ranker is built, no
vector made. Nothing here sends anything anywhere the ranker itself would not.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from ari_mem_tui.model import Run
from ari_mem_tui.model.origin import GIVEN
from ari_mem_tui.run import RANKER_STEP, RunOptions, local_ranker, run_model_ranker
from ari_mem_tui.search.fidelity import UNCHECKED

ProgressFn = Callable[[int, int], None]
# MiniLM is the run's own only where the run's handle names it (the demo): its vectors may
# take minutes to make (~140 texts/s), which `summary` does not spend unasked; the TUI checks
# in the background and keeps the result, which `summary` then reads
MINILM_UNASKED = (
    "summary --embedder minilm checks every recorded search (it makes MiniLM's vectors"
    " first, ~140 texts/s); the TUI checks in the background and keeps the result"
)


def planned_ranker(run: Run, options: RunOptions) -> str:
    """The name of the ranker `options` ask for on this run, before any is built: what
    `open_run` would make of `--embedder` (auto: ARI's in-memory rule on a run that backend
    recorded, else MiniLM)."""
    from ari_mem_tui.search.backends import run_backend  # noqa: PLC0415

    if options.letta is not None and options.embedder != "run":
        return getattr(run.ranker, "name", "letta")
    if options.embedder == "auto":
        return "in-memory" if run_backend(run.checkpoint).in_memory else "minilm"
    return options.embedder


def ranker_identity(run: Run, ranker: Any) -> str:
    """What decides a check besides the files and the code: the ranker, where it sends, the
    hash it was given; for a Letta server's memory, what the server held."""
    name = str(getattr(ranker, "name", ranker))
    finding = getattr(ranker, "hash_finding", None)
    given = finding.hash if finding is not None and finding.source == GIVEN else ""
    return identity(run, name, getattr(ranker, "plan", None), given)


def identity(run: Run, name: str, plan: Any = None, given: str = "") -> str:
    """`ranker_identity` of a ranker not built yet (its name, its endpoint plan, the hash
    given to it)."""
    from ari_mem_tui.search.check_store import memory_digest  # noqa: PLC0415

    parts = [name]
    if plan is not None:
        parts += [plan.model, plan.shown_url, str(plan.dim), plan.handle or "", given]
    if name.startswith("letta:") or run.checkpoint.checkpoint_hash:
        parts += [run.source_label, memory_digest(run.checkpoint)]
    return "\x1f".join(parts)


def kept_check(run: Run, ranker: Any) -> Any:
    """The check kept for these files and `ranker`, else None."""
    store = getattr(run, "check_store", None)
    if store is None:
        return None
    return store.load(run.checkpoint, ranker_identity(run, ranker))


def replay_check(
    run: Run,
    options: RunOptions | None = None,
    ranker: Any = None,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
    say: Callable[[str], None] | None = None,
    wait: Callable[[Any], None] | None = None,
) -> Any:
    """The run's replay check with `ranker` (else the one `options` ask for, built only when
    the check is not kept and the ranker is not a stand-in): kept, else made and kept.
    `say(line)`: where a ranker it builds sends texts (before it does) and the hash it found;
    `wait(ranker)`: until its vectors are made (the CLI's progress line)."""
    from ari_mem_tui.search.check import (  # noqa: PLC0415
        base_fidelity,
        check_run,
        stand_in_check,
        unchecked_check,
    )

    ckpt = run.checkpoint
    name = planned_ranker(run, options) if options is not None else ""
    if ranker is not None or name.startswith("letta:"):  # the ranker at hand checks
        ranker = ranker if ranker is not None else run.ranker
        key = ranker_identity(run, ranker)
        return _kept(run, key, lambda: check_run(ckpt, ranker, progress, cancelled), made=True)
    assert options is not None
    if name != "run":
        key = identity(run, name)
    else:
        key = identity(run, name, _plan(run, options), options.embed.checkpoint_hash or "")

    def make() -> Any:
        probe = SimpleNamespace(name=name)
        if name != "run" and base_fidelity(ckpt, probe).own is False:
            return stand_in_check(ckpt, probe)  # (no ranker built, no vector made)
        if name == "minilm" and options.embedder == "auto":
            return unchecked_check(ckpt, probe, MINILM_UNASKED)
        built = _build(run, options, name, say)
        try:
            if wait is not None:
                wait(built)
            finding = getattr(built, "hash_finding", None)
            if say is not None and finding is not None and finding.found is not None:
                say(finding.line())
            return check_run(ckpt, built, progress, cancelled)
        finally:
            stop = getattr(built, "stop", None)
            if stop is not None and built is not run.ranker:
                stop()

    return _kept(run, key, make, made=options.embedder != "auto")


def _plan(run: Run, options: RunOptions) -> Any:
    """The run model's endpoint plan, as `run_model_ranker` will make it (None: none)."""
    from ari_mem_tui.search.run_model import EmbedSetupError, plan_endpoint  # noqa: PLC0415

    try:
        return plan_endpoint(options.embed, run.checkpoint.letta_embedding_config)
    except EmbedSetupError:
        return None


def _kept(run: Run, key: str, make: Callable[[], Any], made: bool = False) -> Any:
    """The check kept under `key`, else `make()`'s, kept. `made`: a check left undone (MiniLM
    not asked for by `summary`) is not taken: the caller's ranker checks now (the TUI's, a
    ranker named by --embedder)."""
    store = getattr(run, "check_store", None)
    found = store.load(run.checkpoint, key) if store is not None else None
    if found is not None and not (made and _undone(found)):
        return found
    check = make()
    if not check.checked and store is not None:
        kept = store.latest(run.checkpoint)
        if kept is not None and kept.checked:
            return check  # one that compared nothing never replaces one that compared searches
    saved = store is not None and store.save(run.checkpoint, key, check)
    if saved and getattr(run, "audit_store", None) is not None:
        # (a run read from its files, whose summary `runs` shows: told of the check)
        from ari_mem_tui import run_summary  # noqa: PLC0415

        run_summary.note_check(run.checkpoint.path, check)
    return check


def _undone(check: Any) -> bool:
    return check.word == UNCHECKED and not check.checked and check.note.startswith("not checked")


def _build(run: Run, options: RunOptions, name: str, say: Callable[[str], None] | None) -> Any:
    """The ranker `name` over the run (`run.ranker` when the run was opened with it)."""
    if run.ranker is not None and getattr(run.ranker, "name", "").startswith(name):
        return run.ranker
    if name == "run":

        def announce(_n: int, _m: int, part: str) -> None:
            if say is not None and part.startswith(RANKER_STEP):  # before anything is sent
                say(part.removeprefix(RANKER_STEP))

        return run_model_ranker(run.checkpoint, options.embed, on_step=announce)
    return local_ranker(run.checkpoint, name, prefetch=True)
