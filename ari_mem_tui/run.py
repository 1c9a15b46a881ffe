"""Open a run from its checkpoint files, optionally with memory and ranking from a Letta server.

The one place the CLI and the TUI turn their options into a `Run` (Checkpoint + ranker), so both
always read the same data the same way. Options are typed; argparse stays in `cli/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ari_mem_tui.letta.options import LettaOptions
from ari_mem_tui.model import Checkpoint, Run
from ari_mem_tui.search.run_model import AgentEmbedding, EmbedOptions

__all__ = [
    "EmbedOptions",
    "LettaOptions",
    "ProgressFn",
    "Run",
    "RunOptions",
    "StepFn",
    "TreeFn",
    "open_run",
    "run_model_ranker",
]

StepFn = Callable[[int, int, str], None]  # (n, m, part): part n of m has started
ProgressFn = Callable[[int, int], None]  # (done, total) of a long part (Letta paging)
TreeFn = Callable[[Checkpoint], None]  # the tree alone, while the rest loads

# "auto": the run's own ranker where this tool has it locally (ARI's in-memory rule for a run
# that backend recorded), else MiniLM; "in-memory" forces that rule on any run; "run": the run's
# own embedding model through its endpoint (the only one that sends anything anywhere: asked
# for by name or the config file, never a default)
EMBEDDERS = ("auto", "minilm", "bm25", "in-memory", "run")
LOCAL_EMBEDDERS = EMBEDDERS[:4]
RANKER_STEP = "ranker: "  # the load step that names where the run ranker sends texts


@dataclass(frozen=True)
class RunOptions:
    checkpoint: Path
    embedder: str = "auto"  # one of EMBEDDERS
    letta: LettaOptions | None = None  # memory and ranking from this server instead
    embed: EmbedOptions = field(default_factory=EmbedOptions)  # for embedder "run"
    rank: bool = True  # False: no local ranker is built (audit, summary); Run.ranker is None
    index: bool = True  # reopen unchanged files from the persistent index (checkpoint/index.py)
    index_behind: bool = False  # leave a fresh load's index to `Run.save_index` (the TUI)
    # embed every node's start-up query ahead (the TUI, health); `saw` asks for one query only
    prefetch_queries: bool = True


def open_run(
    options: RunOptions,
    on_step: StepFn | None = None,
    on_progress: ProgressFn | None = None,
    on_tree: TreeFn | None = None,
) -> Run:
    """Load the checkpoint; with Letta options, take memory, core blocks and ranking from there.

    `on_step(n, m, part)` is called when each of the m parts starts: the checkpoint's
    `LOAD_STEPS`, then the search index (or the Letta server); `on_progress` while paging Letta;
    `on_tree(tree)` with the tree alone, as soon as it is read (not on a reopen from the index).
    """
    # lazy: the CLI imports this module for RunOptions; these cost ~0.4 s (Letta ~0.8 s more)
    from ari_mem_tui import run_summary  # noqa: PLC0415
    from ari_mem_tui.audit import AuditStore  # noqa: PLC0415
    from ari_mem_tui.checkpoint.load import (  # noqa: PLC0415
        LOAD_STEPS,
        load_checkpoint,
        sketch_first,
    )
    from ari_mem_tui.search.check_store import CheckStore  # noqa: PLC0415

    step = on_step or (lambda _n, _m, _part: None)
    total = len(LOAD_STEPS) + 1
    path = Path(options.checkpoint)
    later: list[Callable[[], bool]] = []
    # a first open's tree on screen before anything else (the keys below hash whole files)
    if on_tree is not None and sketch_first(path, on_tree, options.index):
        on_tree = None
    # (taken before the files are read: an audit is kept only if none changed meanwhile)
    store = AuditStore.before_load(path) if options.index and options.letta is None else None
    check_store = CheckStore.before_load(path) if options.index else None  # (a replay check)
    summary_key = run_summary.files_key(path) if store is not None else None
    _build_bm25_ahead(options, path)
    ckpt = load_checkpoint(
        path,
        on_step=lambda n, _m, part: step(n, total, part),
        use_index=options.index,
        on_tree=on_tree,
        defer_index=later.append if options.index_behind else None,
    )
    if options.letta is not None:
        from ari_mem_tui.letta.source import open_letta_run  # noqa: PLC0415

        step(total, total, "Letta server")
        run = open_letta_run(ckpt, options.letta, progress=on_progress)
        if options.rank and options.embedder == "run":
            from ari_mem_tui.letta.source import agent_embedding  # noqa: PLC0415

            agent = agent_embedding(run.ranker)
            run.ranker = run_model_ranker(
                ckpt, options.embed, agent, step, total, options.prefetch_queries
            )
    elif options.rank and options.embedder == "run":
        ranker = run_model_ranker(ckpt, options.embed, None, step, total, options.prefetch_queries)
        run = Run(checkpoint=ckpt, ranker=ranker, source_label=f"files: {path}")
    else:
        step(total, total, "search index")
        # summary and audit rank nothing: numpy and the rankers stay unloaded
        ranker = (
            local_ranker(ckpt, options.embedder, options.prefetch_queries) if options.rank else None
        )
        run = Run(checkpoint=ckpt, ranker=ranker, source_label=f"files: {path}")
    run.save_index = later[0] if later else None
    run.audit_store = store
    run.check_store = check_store
    if summary_key is not None and ckpt.tree_source is not None and run_summary.kept(path) is None:
        run.save_summary = run_summary.summary_maker(ckpt, summary_key, store, check_store)
    return run


def _build_bm25_ahead(options: RunOptions, path: Path) -> None:
    """On a first open (no run index: the files are read) for a ranker that ranks by a BM25
    index of the pool (MiniLM's until its vectors are in; "auto" may turn out to be the
    in-memory rule, which stops it), that index built on another core while the run loads
    (search/bm25_warm.py)."""
    # ("in-memory" ranks by its own rule; "run" by the run's model, BM25 only if that fails)
    if not options.rank or options.letta is not None or options.embedder in ("in-memory", "run"):
        return
    from ari_mem_tui.checkpoint import index  # noqa: PLC0415
    from ari_mem_tui.search import bm25_warm  # noqa: PLC0415
    from ari_mem_tui.search.vector_cache import cache_root  # noqa: PLC0415

    if not (options.index and index.exists(path)):
        bm25_warm.start(path, cache_root())


def run_model_ranker(
    ckpt: Checkpoint,
    embed: EmbedOptions,
    agent: AgentEmbedding | None = None,
    on_step: StepFn | None = None,
    total: int = 1,
    prefetch: bool = True,
) -> object:
    """The run's own embedding model as the ranker: where it sends texts is said (`on_step`)
    before the ranker exists, so before any call; a plan that cannot be made is the ranker's
    one-line error, and the local MiniLM answers in its place."""
    from ari_mem_tui.search.run_model import EmbedSetupError, plan_endpoint  # noqa: PLC0415
    from ari_mem_tui.search.run_ranker import make_run_ranker  # noqa: PLC0415

    try:
        plan, error = plan_endpoint(embed, ckpt.letta_embedding_config, agent), None
        said = f"the run's embedding model: {plan.describe()}"
    except EmbedSetupError as exc:
        plan, error = None, str(exc)
        said = error
    if on_step is not None:
        on_step(total, total, RANKER_STEP + said)
    return make_run_ranker(ckpt, embed, plan, error, prefetch=prefetch)


def local_ranker(ckpt: Checkpoint, embedder: str, prefetch: bool = True) -> object:
    """The ranker `embedder` names; "auto" takes the run's own backend rule when the files show
    it (search/in_memory.py), else MiniLM, which then says why the backend stayed unknown.
    `prefetch`: MiniLM embeds every node's start-up query ahead (not for `saw`'s one node)."""
    from ari_mem_tui.search import bm25_warm  # noqa: PLC0415
    from ari_mem_tui.search.backends import run_backend  # noqa: PLC0415
    from ari_mem_tui.search.embedded import make_ranker  # noqa: PLC0415
    from ari_mem_tui.search.in_memory import InMemoryRanker  # noqa: PLC0415

    if embedder == "auto":
        backend = run_backend(ckpt)
        if backend.in_memory:
            bm25_warm.stop(ckpt.path)  # (no BM25 index wanted: the run's own rule ranks)
            return InMemoryRanker(ckpt.entries)
        ranker = make_ranker(ckpt, "minilm", prefetch=prefetch)
        ranker.backend_note = backend.note  # type: ignore[attr-defined]
        return ranker
    if embedder == "in-memory":
        return InMemoryRanker(ckpt.entries)
    return make_ranker(ckpt, embedder, prefetch=prefetch)
