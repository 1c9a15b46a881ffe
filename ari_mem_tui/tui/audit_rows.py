"""The Audit tab's rows, from `ari_mem_tui.audit.audit` (the same report `ari-mem-tui audit`
prints): one row per finding, problems first."""

from __future__ import annotations

from ari_mem_tui.audit import audit
from ari_mem_tui.checkpoint import Checkpoint
from ari_mem_tui.render.words import plural
from ari_mem_tui.tui.widgets.detail import AuditRow

SECTIONS = (
    ("problems", "problem"),
    ("leaks", "leak"),
    ("scope_violations", "violation"),
    ("rejected_writes", "rejected"),
)


def audit_rows(ckpt: Checkpoint, report=None) -> tuple[list[AuditRow], str]:
    """(rows, one-line summary) for the whole run (of `report`, when it was computed already)."""
    report = report if report is not None else audit(ckpt)
    rows: list[AuditRow] = []
    for attr, kind in SECTIONS:
        for finding in getattr(report, attr, []):
            node_id = finding.node_id if finding.node_id in ckpt.nodes else None
            text = finding.explanation + (f"  [{finding.ref}]" if finding.ref else "")
            rows.append(AuditRow(finding.severity, kind, node_id, text))
    leaks, violations = len(report.leaks), len(report.scope_violations)
    if not leaks and not violations:
        summary = "no leaks or scope violations"
    else:
        summary = f"{plural(leaks, 'leak')}, {plural(violations, 'scope violation')}"
    return rows, summary
