"""`R` in the TUI: the run's own embedding model, after a question that says what is sent and
where; nothing is sent on any answer but `y`. Against the FAKE endpoint of
tests/fake_embeddings.py."""

from __future__ import annotations

from pathlib import Path

from fake_embeddings import fake_embeddings
from textual.widgets import Static

from ari_mem_tui.run import EmbedOptions
from ari_mem_tui.tui.screens.confirm import ConfirmScreen
from ari_mem_tui.tui.widgets.hits import HitsPane
from tests.ari_like import generate_in_memory
from tests.tui_app_helpers import make_app, press, settle, wait_for
from tests.tui_helpers import IDS

TO_B1 = ("j", "j", "l", "l")  # B, expand, B1


async def test_r_asks_naming_what_goes_where_then_ranks_with_the_run_s_model(tiny: Path) -> None:
    with fake_embeddings() as fake:
        embed = EmbedOptions(url=fake.url, model="fake-model")
        app = make_app(tiny, embed=embed)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await press(pilot, *TO_B1)
            assert app.current_id == IDS["B1"]
            await press(pilot, "R")
            assert isinstance(app.screen, ConfirmScreen)
            question = app.screen.question.plain
            entries = len(app.run_data.checkpoint.entries)
            assert f"all {entries:,} memory texts" in question and "footer" in question
            assert fake.url in question and "model fake-model" in question
            await press(pilot, "enter")  # any key but y: nothing sent
            assert not isinstance(app.screen, ConfirmScreen)
            assert fake.requests == [] and app.run_data.ranker.name == "bm25"
            await press(pilot, "R", "y")
            await wait_for(pilot, lambda: app.run_data.ranker.ready, "the run's vectors")

            def shown() -> str | None:
                replay = app.main.tabs.replays.get(app.main.tabs.key)
                return replay.embedder if replay is not None else None

            await wait_for(pilot, lambda: shown() == "run:fake-model", "the run model's replay")
            assert fake.requests  # sent only now
            hits = app.query_one(HitsPane)
            assert "run:fake-model" in str(hits.border_title)
            assert "unverified" in str(hits.border_title)  # tiny names no embedding handle

            def status() -> str:
                return str(app.query_one("#status-embedder", Static).render())

            # the status bar follows the replay shown (a message the app handles next)
            await wait_for(pilot, lambda: "run:fake-model" in status(), "the status bar")
            assert "unverified" in status()
            await press(pilot, "R")  # asked already: said, not asked again
            assert not isinstance(app.screen, ConfirmScreen)


async def test_r_on_an_in_memory_run_sends_nothing_and_says_why(tmp_path: Path) -> None:
    """No embedding model ranked a run of ARI's in-memory backend: `R` asks nothing, sends
    nothing, and points at the rule that is exact (the default; the tests' app opens with BM25)."""
    generated = generate_in_memory(tmp_path / "ckpt")
    with fake_embeddings() as fake:
        app = make_app(generated.path, embed=EmbedOptions(url=fake.url, model="fake-model"))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            before = app.run_data.ranker
            await press(pilot, "R")
            assert not isinstance(app.screen, ConfirmScreen)
            toasts = [str(n.message) for n in app._notifications]
            assert any("in-memory backend recorded this run" in t for t in toasts), toasts
            assert app.run_data.ranker is before  # nothing replaced, nothing built
    assert fake.requests == []
