"""Words the TUI shows: proper plurals, nothing said twice."""

from __future__ import annotations

from ari_mem_tui.audit import AuditReport, Finding
from ari_mem_tui.model import Tier
from ari_mem_tui.render.dossier import dossier_markdown
from ari_mem_tui.render.words import plural
from ari_mem_tui.tui.audit_rows import audit_rows
from ari_mem_tui.tui.widgets.detail import kind_count, tiers_text
from tests.test_tui_units import big_checkpoint, sample_replay


def _finding(kind: str) -> Finding:
    return Finding(severity="warning", kind=kind, explanation="x", ref="")


def test_counts_read_as_english() -> None:
    """GIVEN counts of 1 and 2 WHEN they are put in words THEN singular and plural are right."""
    assert plural(1, "leak") == "1 leak" and plural(2, "leak") == "2 leaks"
    assert plural(1, "match", "matches") == "1 match"
    assert kind_count("leak", 2) == "2 leaks" and kind_count("violation", 1) == "1 scope violation"
    assert kind_count("rejected", 2) == "2 rejected writes"
    ckpt = big_checkpoint(2)
    one = AuditReport(scope_violations=[_finding("scope_violation")])
    assert audit_rows(ckpt, one)[1] == "0 leaks, 1 scope violation"
    two = AuditReport(leaks=[_finding("leak"), _finding("leak")])
    assert audit_rows(ckpt, two)[1] == "2 leaks, 0 scope violations"


def test_an_empty_tier_says_no_message_once() -> None:
    """GIVEN an empty tier whose note already says "no message emitted" WHEN the Saw tab and the
    dossier show it THEN the words appear once, not twice."""
    tier = Tier(key="1c", title="Metric contract", header="H", note="no file: no message emitted")
    replay = sample_replay().model_copy(update={"tiers": [tier]})
    for text in (tiers_text(replay).plain, dossier_markdown(replay, big_checkpoint(3))):
        assert text.count("no message emitted") == 1, text
