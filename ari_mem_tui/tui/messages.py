"""Messages the panes send to the app (the app owns the data and the workers)."""

from __future__ import annotations

from textual.message import Message


class JumpToNode(Message):
    """Select this node in the tree (from a breadcrumb, the audit list, the palette…)."""

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id


class OpenEntry(Message):
    """Show a memory entry in full."""

    def __init__(self, entry_id: str) -> None:
        super().__init__()
        self.entry_id = entry_id


class RerunSearch(Message):
    """Re-run the current node's search with another query, limit, pool or query source."""

    def __init__(
        self, query: str | None, limit: int, as_of: bool, query_from: str = "start"
    ) -> None:
        super().__init__()
        self.query = query
        self.limit = limit
        self.as_of = as_of
        self.query_from = query_from  # "start" | "now" | "custom" (then `query` is the text)
