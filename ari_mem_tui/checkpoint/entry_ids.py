"""Our own stable ids for memory entries (backups carry none, §3.6).

An id depends on what the entry is (kind, owner, ts, text), not where it sits in the file, so
the same entry keeps its id across loads and across backups that list entries in another order.
Exact duplicates get `-2`, `-3` … in the order they are met.
"""

from __future__ import annotations

import hashlib


def content_id(kind: str, node_id: str, ts: float | None, text: str) -> str:
    key = f"{kind}|{node_id}|{ts!r}|{text}"
    return "e" + hashlib.sha1(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


class EntryIds:
    """Hands out content ids, suffixing repeats; one instance per loaded checkpoint."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def make(self, kind: str, node_id: str, ts: float | None, text: str) -> str:
        base = content_id(kind, node_id, ts, text)
        count = self._seen.get(base, 0) + 1
        self._seen[base] = count
        return base if count == 1 else f"{base}-{count}"
