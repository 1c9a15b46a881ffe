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
# Results of memory tools are always decoded (audit and attribution read them); other tools'
# results only when short: big run_code / run_bash outputs dominate a trace, and evaluating every
# one of them would be most of the load time. `decode_result(call.result_raw)` decodes on demand.
EAGER_DECODE_CHARS = 4000
CONTEXT_TOOLS = frozenset({"get_experiment_context", "get_verified_context"})
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
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


# The usual result line is `{'result': '<str repr>'}`. Its string literal is decoded with the C
# `unicode_escape` codec and accepted only if repr() of the decoded text gives back the literal
# exactly, which makes it equal to what ast.literal_eval would return, at a fraction of the cost.
_ENVELOPE_HEAD = "{'result': "


def _envelope_text(raw: str) -> str | None:
    """The inner text of a `{'result': '...'}` repr, or None when the line is not exactly that."""
    if not (raw.startswith(_ENVELOPE_HEAD) and raw.endswith("}")):
        return None
    literal = raw[len(_ENVELOPE_HEAD) : -1]
    if len(literal) < 2 or literal[0] != literal[-1] or literal[0] not in "'\"":
        return None
    body = literal[1:-1]
    if "\\" in body:
        try:
            body = body.encode("ascii", "backslashreplace").decode("unicode_escape")
        except Exception:  # noqa: BLE001 - bad escapes (or warnings turned into errors)
            return None
    return body if repr(body) == literal else None


def _literal(raw: str) -> Any:
    try:
        return ast.literal_eval(raw)
    except (Exception, MemoryError):  # noqa: BLE001 - hostile text can raise many kinds
        return None


def decode_result(raw: str) -> Any:
    """The tool's output: the envelope's inner JSON where it parses, else what could be read.

    Returns None when the repr is too large or not a Python literal (the raw text is kept
    separately by the caller).
    """
    if len(raw) > MAX_LITERAL_CHARS:
        return None
    inner = _envelope_text(raw)
    value = {"result": inner} if inner is not None else _literal(raw)
    if isinstance(value, dict) and isinstance(value.get("result"), str):
        inner = value["result"]
        try:
            return json.loads(inner)
        except (ValueError, RecursionError):
            return inner
    return value


def _write_ok(tool: str, result: Any, raw: str | None) -> bool | None:
    """Accepted or rejected, for guarded writes and anything the CoW guard refused.

    Only the call's own status counts: a read's result may quote another node's memory, and
    that memory may well mention a CoW violation (the auto `Tool add_memory` entries do).
    """
    if isinstance(result, dict):
        error = result.get("error")
        if isinstance(error, str) and any(marker in error for marker in REJECTION_MARKERS):
            return False
        if tool not in GUARDED_TOOLS:
            return None
        if isinstance(result.get("ok"), bool):
            return result["ok"]
        if error:
            return False
        if "id" in result or "removed" in result:
            return True
        return None
    # undecodable (too large, or truncated): trust the markers only for a known guarded write
    if tool in GUARDED_TOOLS and raw and any(marker in raw for marker in REJECTION_MARKERS):
        return False
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


def _decode_eagerly(tool: str, raw: str) -> bool:
    return len(raw) <= EAGER_DECODE_CHARS or "memory" in tool or tool in CONTEXT_TOOLS


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
            decoded = (
                decode_result(parsed.text) if _decode_eagerly(current.tool, parsed.text) else None
            )
            # straight into the instance dict: pydantic's __setattr__ is a hot spot here
            current.__dict__.update(
                result_raw=parsed.text,
                result=decoded,
                ok=_write_ok(current.tool, decoded, parsed.text),
            )
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
