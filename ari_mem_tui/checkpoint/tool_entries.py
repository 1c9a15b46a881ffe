"""ARI's automatic `Tool <name>: …` entries that keep a memory read's result, and the passages
such an entry quotes: how another branch's memory can travel on inside a node's own memory.

What ARI writes (ari-core agent/loop.py, e41c806; §3.9): after every LLM tool call, an entry of
the calling node with the text `f"Tool {name}: {rc[:1000]}"` and the metadata
`{"step": step, "tool": name}`, where `rc = json.dumps(result, ensure_ascii=False)` and
`result` is the MCP client's envelope, `{"result": <the tool's text>}` (`{"error": …}` when the
call failed). The memory skill's tools are FastMCP tools returning dicts, which FastMCP sends
as JSON text (indented by pydantic_core: `to_json(value, indent=2)`). So the entry holds the
read's answer twice encoded (JSON inside a JSON string) and cut at 1,000 characters, anywhere:
inside a row, a string, an escape.

Both layers are read as prefixes of JSON (pydantic_core's partial mode: a cut string is kept as
far as it goes, a cut key or number is dropped). A passage is *quoted* when the stored text
reaches into its row's `text` value: one character of it is enough, because from there on the
reader of the entry reads that passage's words; a row cut before its `text` carries ids only.
The rows of each tool, as ari_skill_memory returns them (keys in this order):

- `search_memory`, `search_research_memory`: `{"results": [{entry_id, node_id, text, metadata,
  score}]}`: each row names its node;
- `get_node_memory`: `{"entries": [{text, metadata, ts}]}`: one node's entries, ts ascending,
  naming neither node nor id: the node is the call's (`node_read`, which the caller knows from
  the read's record);
- `bulk_get_node_memory`: `{"by_node": {node_id: [{entry_id, text, metadata, ts}]}}`;
- `get_verified_context`: `{"claims": [{entry_id, node_id, text, …}], "limitations": [{node_id,
  text}], "usable_for_claims": [claims again]}` (the repeats add nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# the read tools whose results name memory passages, by the kind of read each logs (§4.3)
SEARCH_TOOLS = ("search_memory", "search_research_memory")
INHERIT_TOOLS = ("get_node_memory",)
BULK_TOOLS = ("bulk_get_node_memory", "get_verified_context")
STORED_READS = {
    **dict.fromkeys(SEARCH_TOOLS, "search"),
    **dict.fromkeys(INHERIT_TOOLS, "inherit"),
    **dict.fromkeys(BULK_TOOLS, "bulk"),
}
# how each tool's automatic entry begins
PREFIXES = {tool: f"Tool {tool}: " for tool in STORED_READS}


@dataclass(frozen=True)
class Quoted:
    """One passage a stored result quotes, as far as the stored text holds it."""

    index: int  # its row's place in the result (0 = first)
    node_id: str | None  # whose memory it is, where the row says (get_node_memory's do not)
    letta_id: str | None  # the passage id the row names, if any
    text: str  # the passage's text as quoted (cut where the entry was cut)


@dataclass(frozen=True)
class StoredRead:
    """An automatic entry that keeps a memory read's result."""

    tool: str
    kind: str  # "search" | "inherit" | "bulk" (STORED_READS)
    quoted: tuple[Quoted, ...]


def stored_tool(text: str, metadata: Mapping[str, Any]) -> str | None:
    """The read tool whose result `text` stores, if it is ARI's automatic entry of one: the text
    begins `Tool <name>: ` and the metadata's `tool` is that name, as the agent loop writes
    them (an LLM's own add_memory with such a text has other metadata)."""
    tool = metadata.get("tool") if isinstance(metadata, Mapping) else None
    if not isinstance(tool, str) or tool not in PREFIXES:
        return None
    return tool if text.startswith(PREFIXES[tool]) else None


def stored_texts(tool: str, output: str) -> tuple[str, str]:
    """The text of the automatic entry ARI writes for a call of `tool` whose MCP text was
    `output`: the envelope as `json.dumps(..., ensure_ascii=False)` writes it, cut at 1,000
    characters; and the same with non-ASCII escaped (json.dumps's default, which simulated
    runs use). Only the first 1,000 characters of `output` can reach the cut."""
    envelope = {"result": output[:1000]}
    head = PREFIXES.get(tool, f"Tool {tool}: ")
    return (
        head + json.dumps(envelope, ensure_ascii=False)[:1000],
        head + json.dumps(envelope)[:1000],
    )


def stored_read(
    text: str, metadata: Mapping[str, Any], node_read: str | None = None
) -> StoredRead | None:
    """What the automatic entry (`text`, `metadata`) quotes, or None when it is not one, holds
    an error instead of a result, or its text is not the JSON ARI writes. `node_read`: the node
    a `get_node_memory` read (its rows do not say)."""
    tool = stored_tool(text, metadata)
    if tool is None:
        return None
    envelope = _partial(text[len(PREFIXES[tool]) :])
    inner = envelope.get("result") if isinstance(envelope, dict) else None
    if not isinstance(inner, str):
        return None  # {"error": …}: the call failed, nothing was read
    payload = _partial(inner)
    if not isinstance(payload, dict):
        return None
    return StoredRead(tool, STORED_READS[tool], tuple(_quoted(tool, payload, node_read)))


def _partial(text: str) -> Any:
    """The JSON value whose beginning `text` is (None when it is not one)."""
    from pydantic_core import from_json  # noqa: PLC0415 - only where a stored read is read

    try:
        return from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return None


def _quoted(tool: str, payload: dict[str, Any], node_read: str | None) -> Iterator[Quoted]:
    if tool in SEARCH_TOOLS:
        yield from _rows(payload.get("results"), None)
    elif tool in INHERIT_TOOLS:
        yield from _rows(payload.get("entries"), node_read or None)
    elif tool == "get_verified_context":
        claims = payload.get("claims")
        yield from _rows(claims, None)
        start = len(claims) if isinstance(claims, list) else 0
        yield from _rows(payload.get("limitations"), None, start)
    else:
        by_node = payload.get("by_node")
        start = 0
        for node_id, rows in by_node.items() if isinstance(by_node, dict) else ():
            found = list(_rows(rows, str(node_id), start))
            start += len(rows) if isinstance(rows, list) else 0
            yield from found


def _rows(rows: Any, node_id: str | None, start: int = 0) -> Iterator[Quoted]:
    """The quoted passages among `rows` (a row whose `text` the cut left out quotes none)."""
    for index, row in enumerate(rows if isinstance(rows, list) else (), start):
        if not isinstance(row, dict):
            continue
        text = row.get("text")
        if not isinstance(text, str) or not text:
            continue
        owner = row.get("node_id", node_id)
        letta_id = row.get("entry_id")
        yield Quoted(
            index=index,
            node_id=owner if isinstance(owner, str) and owner else node_id,
            letta_id=letta_id if isinstance(letta_id, str) and letta_id else None,
            text=text,
        )
