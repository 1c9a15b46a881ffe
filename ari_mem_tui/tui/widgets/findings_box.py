"""A node's audit findings as the Hits and Node tabs show them, under their tables."""

from __future__ import annotations

from textual.widgets import Static

from ari_mem_tui.render.findings import findings_text


class FindingsBox(Static):
    """Leaks, scope violations and rejected writes of one node, wrapped (no sideways scroll);
    hidden when there are none."""

    def show(self, findings: list) -> None:
        text = findings_text(findings)
        if self.content != text:  # most nodes have none: no layout of the screen on each move
            self.update(text)
        self.display = bool(findings)
