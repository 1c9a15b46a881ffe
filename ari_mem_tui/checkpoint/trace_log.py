"""A node's `trace_log` (§2.7): LLM tool calls and their results, and the rejected CoW writes.

Call lines are `"→ name(args_json)"` (args cut at 4000 characters, so the JSON may not parse);
result lines are `"  ← " + str(result)`, a Python repr of the MCP envelope, never truncated.
The repr is decoded with `ast.literal_eval`, but only below a size cap: a 50 MB repr stays raw.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from ari_mem_tui.checkpoint.fast_model import build
from ari_mem_tui.model import Node, TraceCall

CALL_ARROW = "→"
RESULT_ARROW = "←"
MAX_LITERAL_CHARS = 1_000_000  # larger reprs are kept as raw text, never evaluated
REJECTION_MARKERS = ("CoW violation", "ARI_CURRENT_NODE_ID not set")
GUARDED_TOOLS = frozenset({"add_memory", "clear_node_memory", "consolidate_node_memory"})
_TOOL_NAME = re.compile(r"[A-Za-z_][\w.:-]*")


@dataclass
class TraceLine:
    kind: str  # "call" | "result" | "other"
    tool: str = ""
    text: str = ""  # args JSON for calls, repr for results, the line for others


def parse_trace_line(line: str) -> TraceLine:
    """Classify one trace_log string. Never raises."""
    if not isinstance(line, str):
        return TraceLine("other", text=repr(line))
    stripped = line.lstrip()
    if stripped.startswith(CALL_ARROW):
        body = stripped[len(CALL_ARROW) :].lstrip()
        match = _TOOL_NAME.match(body)
        if match:
            rest = body[match.end() :]
            if rest.startswith("("):
                args = rest[1:-1] if rest.endswith(")") else rest[1:]
                return TraceLine("call", tool=match.group(0), text=args)
            if not rest.strip():
                return TraceLine("call", tool=match.group(0), text="")
        return TraceLine("other", text=line)
    if stripped.startswith(RESULT_ARROW):
        body = stripped[len(RESULT_ARROW) :]
        return TraceLine("result", text=body.removeprefix(" "))
    return TraceLine("other", text=line)


def parse_args(raw: str) -> dict[str, Any] | None:
    if not raw or len(raw) > MAX_LITERAL_CHARS:
        return None
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def decode_result(raw: str) -> Any:
    """The tool's output: the envelope's inner JSON where it parses, else what could be read.

    Returns None when the repr is too large or not a Python literal (the raw text is kept
    separately by the caller).
    """
    if len(raw) > MAX_LITERAL_CHARS:
        return None
    try:
        value = ast.literal_eval(raw)
    except (Exception, MemoryError):  # noqa: BLE001 - hostile text can raise many kinds
        return None
    if isinstance(value, dict) and isinstance(value.get("result"), str):
        inner = value["result"]
        try:
            return json.loads(inner)
        except (json.JSONDecodeError, RecursionError):
            return inner
    return value


def _write_ok(tool: str, result: Any, raw: str | None) -> bool | None:
    """Accepted or rejected, for guarded writes and anything the CoW guard refused."""
    if raw and any(marker in raw for marker in REJECTION_MARKERS):
        return False
    if tool not in GUARDED_TOOLS:
        return None
    if isinstance(result, dict):
        if isinstance(result.get("ok"), bool):
            return result["ok"]
        if result.get("error"):
            return False
        if "id" in result or "removed" in result:
            return True
    return None


def rejection_reason(call: TraceCall) -> str | None:
    """Why the CoW guard refused this call, or None when it did not."""
    if call.ok is not False or not call.result_raw:
        return None
    marker = next((m for m in REJECTION_MARKERS if m in call.result_raw), None)
    if marker is None:
        return None
    result = call.result
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, str) and marker in error:
        return error
    if marker == "CoW violation":
        return "node_id does not match current node (CoW violation)"
    return "ARI_CURRENT_NODE_ID not set"


def parse_trace_log(node_id: str, lines: list[str]) -> list[TraceCall]:
    """Pair each call line with the result line that follows it."""
    calls: list[TraceCall] = []
    current: TraceCall | None = None
    for index, line in enumerate(lines):
        parsed = parse_trace_line(line)
        if parsed.kind == "call":
            values = {"node_id": node_id, "index": index, "tool": parsed.tool}
            values.update(args_raw=parsed.text, args=parse_args(parsed.text))
            current = build(TraceCall, values)
            calls.append(current)
        elif parsed.kind == "result" and current is not None and current.result_raw is None:
            current.result_raw = parsed.text
            current.result = decode_result(parsed.text)
            current.ok = _write_ok(current.tool, current.result, parsed.text)
    return calls


def parse_trace_logs(nodes: dict[str, Node]) -> dict[str, list[TraceCall]]:
    """TraceCalls of every node that has a trace_log."""
    result: dict[str, list[TraceCall]] = {}
    for node_id, node in nodes.items():
        if node.trace_log:
            calls = parse_trace_log(node_id, node.trace_log)
            if calls:
                result[node_id] = calls
    return result
