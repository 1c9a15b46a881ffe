"""Words the TUI shows: proper plurals, nothing said twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from ari_mem_tui.audit import AuditReport, Finding
from ari_mem_tui.model import Tier
from ari_mem_tui.render.dossier import dossier_markdown
from ari_mem_tui.render.words import plural
from ari_mem_tui.tui.audit_rows import audit_rows
from ari_mem_tui.tui.rows import AuditRow
from ari_mem_tui.tui.widgets.detail import kind_count, tiers_text
from tests.test_tui_units import big_checkpoint, sample_replay
from tests.tui_app_helpers import make_app, press, settle


def _finding(kind: str) -> Finding:
    return Finding(severity="warning", kind=kind, explanation="x", ref="")


def test_counts_read_as_english() -> None:
    """GIVEN counts of 1 and 2 WHEN they are put in words THEN singular and plural are right."""
    assert plural(1, "leak") == "1 leak" and plural(2, "leak") == "2 leaks"
    assert plural(1, "match", "matches") == "1 match"
    assert kind_count("leak", 2) == "2 leaks" and kind_count("violation", 1) == "1 scope violation"
    assert kind_count("rejected", 2) == "2 rejected writes"


def test_the_audit_verdict_says_only_what_its_rows_cannot() -> None:
    """GIVEN audits with and without a leak or scope violation WHEN their rows are made THEN
    the verdict is "" when a row counts one, and says "no leaks or scope violations" when none
    does (the Audit title counts the rows; the verdict must not count them again)."""
    ckpt = big_checkpoint(2)
    one = AuditReport(scope_violations=[_finding("scope_violation")])
    assert audit_rows(ckpt, one)[1] == ""
    two = AuditReport(leaks=[_finding("leak"), _finding("leak")])
    assert audit_rows(ckpt, two)[1] == ""
    only_writes = AuditReport(rejected_writes=[_finding("rejected_write")])
    rows, verdict = audit_rows(ckpt, only_writes)
    assert [r.kind for r in rows] == ["rejected"] and verdict == "no leaks or scope violations"


def test_an_empty_tier_says_no_message_once() -> None:
    """GIVEN an empty tier whose note already says "no message emitted" WHEN the Saw tab and the
    dossier show it THEN the words appear once, not twice."""
    tier = Tier(key="1c", title="Metric contract", header="H", note="no file: no message emitted")
    replay = sample_replay().replaced(tiers=[tier])
    for text in (tiers_text(replay).plain, dossier_markdown(replay, big_checkpoint(3))):
        assert text.count("no message emitted") == 1, text


def audit_title(app) -> Static:
    return app.query_one("#audit-title", Static)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_audit_title_says_each_count_once_on_one_line(small_ckpt: Path, size) -> None:
    """GIVEN the demo's small run (leaks, a scope violation, second-hand leaks, rejected writes)
    WHEN the Audit tab is shown from the tree (at 80 columns the tree keeps its place, the
    narrowest Audit pane) THEN its title names each count once, in one line, and not the pane's
    name again."""
    app = make_app(small_ckpt)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press(pilot, "6")
        assert app.focused is app.main.tree_widget and app.main.tabs.active == "audit"
        title = audit_title(app)
        text = str(title.content)
        kinds = [r.kind for r in app.main.audit_pane.rows]
        assert {"leak", "violation", "second-hand", "rejected"} <= set(kinds)
        full = ", ".join(kind_count(k, kinds.count(k)) for k in dict.fromkeys(kinds))
        short = ", ".join(kind_count(k, kinds.count(k), True) for k in dict.fromkeys(kinds))
        assert text == (full if size[0] >= 120 else short)  # 80 columns: too narrow for `full`
        nouns = ("leak", "scope violation", "second-hand leak", "rejected write")
        if size[0] < 120:
            nouns = ("leak", "violation", "2nd-hand", "rejected")
        said = [part.split(" ", 1)[1].removesuffix("s") for part in text.split(", ")]
        for noun in nouns:
            assert said.count(noun) == 1, text
        assert "Audit" not in text  # the border says it
        assert title.size.height == 1, text


async def test_the_audit_title_gives_the_verdict_where_the_rows_cannot(tiny: Path) -> None:
    """GIVEN an audit that found only a rejected write, and then a search error WHEN the Audit
    tab shows them THEN the title counts each kind once and says there was no leak or scope
    violation; a problem added after the audit keeps that verdict."""
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "6")
        only_writes = AuditReport(rejected_writes=[_finding("rejected_write")])
        app.main.audit_pane.set_audit(*audit_rows(app.ckpt, only_writes))
        await pilot.pause()
        assert str(audit_title(app).content) == "1 rejected write · no leaks or scope violations"
        app.main.audit_pane.add_problem(AuditRow("error", "search", None, "search failed"))
        await pilot.pause()
        text = str(audit_title(app).content)
        assert text == "1 search error, 1 rejected write · no leaks or scope violations"
