"""`R`: rank with the run's own embedding model, as its Letta server did. Nothing is sent
before the question, which names what goes where (every memory text with ARI's footer, the
queries; the endpoint, the model, the key), has its `y`; as `x` asks before it writes a CSV
(tui/table_export.py)."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ari_mem_tui.render.text import preview
from ari_mem_tui.run import EmbedOptions, Run
from ari_mem_tui.search.run_model import KEY_ENV


def ask(app: Any, run: Run | None, embed: EmbedOptions) -> None:
    """Say why nothing is to be sent (still loading, ranked as the run did already, a run of
    ARI's in-memory backend, no endpoint to send to), else ask, and `switch` on `y`."""
    if run is None:
        app.notify("the run's memory is still loading", severity="warning")
        return
    name = str(getattr(run.ranker, "name", ""))
    if name.startswith(("run", "letta:")):
        app.notify(f"already ranking as the run did ({name})")
        return
    from ari_mem_tui.search.backends import run_backend  # noqa: PLC0415 - on first use

    if run_backend(run.checkpoint).in_memory:  # no embedding model ranked it: nothing to send
        app.notify(
            "ARI's in-memory backend recorded this run: no embedding model ranked it, so"
            " nothing is sent; its own rule (--embedder in-memory, the default) is exact"
        )
        return
    from ari_mem_tui.search.run_model import EmbedSetupError, plan_endpoint  # noqa: PLC0415
    from ari_mem_tui.search.vector_cache import cache_root  # noqa: PLC0415
    from ari_mem_tui.tui.screens.confirm import ask as confirm  # noqa: PLC0415

    ckpt = run.checkpoint
    try:
        plan = plan_endpoint(embed, ckpt.letta_embedding_config)
    except EmbedSetupError as exc:
        app.notify(preview(str(exc), 300), severity="warning")
        return
    question = Text.assemble(
        ("Rank with the run's embedding model?\n", "bold"),
        f"This sends all {len(ckpt.entries):,} memory texts of the run, each with ARI's"
        " footer (node id, metadata, time), and the search queries, to\n",
        (f"{plan.shown_url}", "bold"),
        f"\nmodel {plan.model} ({plan.how}; "
        + ("key from $" + KEY_ENV if plan.key_set else f"no key: ${KEY_ENV} is not set")
        + f").\nVectors are cached in {cache_root()} by model and text.",
    )
    confirm(app, question, lambda: switch(app, run, embed), lambda: app.notify("nothing sent"))


def switch(app: Any, run: Run, embed: EmbedOptions) -> None:
    """`run` ranks with its own embedding model from now on: the old ranker stopped, the
    health computed with it forgotten, the main screen's hits searched again."""
    from ari_mem_tui.run import run_model_ranker  # noqa: PLC0415 - on first use

    old = run.ranker
    run.ranker = run_model_ranker(run.checkpoint, embed)
    stop = getattr(old, "stop", None)
    if stop is not None:
        stop(0)
    app.forget_health()
    app.main.show_ranker(run.ranker)
