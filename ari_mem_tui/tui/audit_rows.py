"""The Audit tab's rows, from `ari_mem_tui.audit.audit` (the same report `ari-mem-tui audit`
prints): one row per finding, problems first."""

from __future__ import annotations

from ari_mem_tui.audit import SecondHand, audit
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.findings import chain_words
from ari_mem_tui.tui.rows import AuditRow

SECTIONS = (
    ("problems", "problem"),
    ("leaks", "leak"),
    ("scope_violations", "violation"),
    ("second_hand", "second-hand"),
    ("rejected_writes", "rejected"),
    ("unattributed", "unattributed"),
)


def audit_rows(ckpt: Checkpoint, report=None) -> tuple[list[AuditRow], str]:
    """(rows, verdict) for the whole run (of `report`, when it was computed already). The rows
    carry every count (the Audit title counts them); the verdict says only what they cannot:
    that there was no leak and no scope violation ("" when there was one)."""
    report = report if report is not None else audit(ckpt)
    rows: list[AuditRow] = []
    for attr, kind in SECTIONS:
        for finding in getattr(report, attr, []):
            node_id = finding.node_id if finding.node_id in ckpt.nodes else None
            text = finding.explanation
            if isinstance(finding, SecondHand):  # how it travelled, with its times
                text += " · " + chain_words(finding)
            text += f"  [{finding.ref}]" if finding.ref else ""
            rows.append(AuditRow(finding.severity, kind, node_id, text))
    clean = not report.leaks and not report.scope_violations
    return rows, "no leaks or scope violations" if clean else ""
