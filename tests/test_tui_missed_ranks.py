"""Pilot: the hits pane's replay defers the missed entries' global ranks; pressing M shows them,
equal to the ranks the CLI's eager replay computes."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.search.embedded import BM25Ranker, Pool
from ari_mem_tui.search.replay import replay
from tests.tui_app_helpers import make_app, press, settle


async def test_missed_ranks_appear_when_the_list_is_shown(demo_ckpt: Path) -> None:
    ckpt = load_checkpoint(demo_ckpt)
    ranker = BM25Ranker(Pool(ckpt.entries))
    eager = {nid: replay(ckpt, nid, ranker, with_tiers=False) for nid in ckpt.nodes}
    node_id = max(eager, key=lambda nid: len(eager[nid].missed))
    expected = [str(m.global_rank) for m in eager[node_id].missed]
    assert expected and "None" not in expected
    app = make_app(demo_ckpt)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        await press(pilot, *f"jump {node_id[-8:]}")
        await pilot.pause(0.3)
        await press(pilot, "enter")
        assert app.current_id == node_id
        shown = app.main.tabs.replays[(node_id, None, 5, True, "start")]
        assert shown.ranks_pending  # the pane's replay did not pay for the ranks
        assert all(m.global_rank is None for m in shown.missed)
        await press(pilot, "2", "M")  # the hits tab, then the missed list
        table = app.query_one("#missed-table", DataTable)
        assert table.row_count == len(expected)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == expected
        assert not shown.ranks_pending
