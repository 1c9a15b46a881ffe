"""A node's `trace_log` (§2.7): LLM tool calls and their results, and the rejected CoW writes.

Call lines are `"→ name(args_json)"` (args cut at 4000 characters, so the JSON may not parse);
result lines are `"  ← " + str(result)`, a Python repr of the MCP envelope, never truncated.
The repr is decoded with `ast.literal_eval`, but only below a size cap: a 50 MB repr stays raw.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ari_mem_tui.checkpoint.jsonlines import loads_record
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
# the MCP tools ari-core calls with cow_node_id: the CoW guard checks these, and only these
GUARDED_TOOLS = frozenset(
    {
        "add_memory",
        "clear_node_memory",
        "add_experiment_result",
        "add_failure_case",
        "add_procedure_memory",
        "add_reflection",
        "add_reproducibility_event",
        "consolidate_node_memory",
    }
)
_TOOL_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
# what parse_trace_line calls a "call" line, as one regex (for counting without parsing)
_CALL_LINE = re.compile(r"\s*→\s*[A-Za-z_][\w.:-]*(?:\(|\s*\Z)")
_ESCAPED_ASCII = re.compile(rb"\\u00[2-7][0-9a-fA-F]")  # JSON's \u0020 … \u007f


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
        value = loads_record(raw)
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


def result_text(raw: str) -> str | None:
    """The tool's text inside a result line's envelope (`{'result': '…'}`), or None when the
    line holds no such envelope (an error, another shape, a repr too large to read)."""
    inner = _envelope_text(raw)
    if inner is None and len(raw) <= MAX_LITERAL_CHARS:
        value = _literal(raw)
        inner = value.get("result") if isinstance(value, dict) else None
    return inner if isinstance(inner, str) else None


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
            return loads_record(inner)
        except (ValueError, RecursionError):
            return inner
    return value


def cow_refusal(tool: str, output: Any) -> str | None:
    """The CoW guard's reason when `output` (a tool's decoded result) is its refusal of a
    guarded write (§4.6): `{"ok": false, "error": <reason>}`, or `{"removed": 0, "error": …}`
    from clear_node_memory. Any other tool's output, however it mentions a CoW violation (a
    search returning the passage that logged one), is not a refusal."""
    if tool not in GUARDED_TOOLS or not isinstance(output, dict):
        return None
    error = output.get("error")
    if not isinstance(error, str) or not any(marker in error for marker in REJECTION_MARKERS):
        return None
    return error if output.get("ok") is False or output.get("removed") == 0 else None


def _write_ok(tool: str, result: Any, raw: str | None) -> bool | None:
    """Accepted or rejected, for guarded writes (None for every other tool).

    Only the call's own status counts: a read's result may quote another node's memory, and
    that memory may well mention a CoW violation (the auto `Tool add_memory` entries do).
    """
    if tool not in GUARDED_TOOLS:
        return None
    if isinstance(result, dict):
        if cow_refusal(tool, result):
            return False
        error = result.get("error")
        if isinstance(result.get("ok"), bool):
            return result["ok"]
        if error:
            return False
        if "id" in result or "removed" in result:
            return True
        return None
    # undecodable (too large, or truncated): trust the markers only for a known guarded write
    if raw and any(marker in raw for marker in REJECTION_MARKERS):
        return False
    return None


def rejection_reason(call: TraceCall) -> str | None:
    """Why the CoW guard refused this call, or None when it did not."""
    if call.tool not in GUARDED_TOOLS or call.ok is not False or not call.result_raw:
        return None
    marker = next((m for m in REJECTION_MARKERS if m in call.result_raw), None)
    if marker is None:
        return None
    reason = cow_refusal(call.tool, call.result)
    if reason is not None:
        return reason
    if marker == "CoW violation":
        return "node_id does not match current node (CoW violation)"
    return "ARI_CURRENT_NODE_ID not set"


def _decode_eagerly(tool: str, raw: str) -> bool:
    return len(raw) <= EAGER_DECODE_CHARS or "memory" in tool or tool in CONTEXT_TOOLS


_ARROW = re.compile(r"\s*([→←])")  # a line that may be a call or a result (the rest is not)


def _scan(node_id: str, lines: list[str]) -> list[dict[str, Any]]:
    """Each call line with the first result line after it, as unparsed TraceCall values."""
    found: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    arrow, tool_name = _ARROW.match, _TOOL_NAME.match
    for index, line in enumerate(lines):
        head = arrow(line) if type(line) is str else None
        if head is None:
            continue  # (parse_trace_line: "other")
        if head.group(1) == CALL_ARROW:  # parse_trace_line's "call", inlined: the hot loop
            body = line[head.end() :].lstrip()
            name = tool_name(body)
            if name is None:
                continue
            rest = body[name.end() :]
            if rest.startswith("("):
                args = rest[1:-1] if rest.endswith(")") else rest[1:]
            elif not rest.strip():
                args = ""
            else:
                continue
            current = {"node_id": node_id, "index": index, "tool": name.group(0)}
            current["args_raw"] = args
            found.append(current)
        elif current is not None and "result_raw" not in current:
            current["result_raw"] = line[head.end() :].removeprefix(" ")
    return found


def _kept(values: dict[str, Any], tools: Collection[str] | None) -> bool:
    """Whether `_build` makes a TraceCall of a call: one of `tools` (None: any), or refused."""
    raw = values.get("result_raw")
    return (
        tools is None
        or values["tool"] in tools
        or (raw is not None and any(marker in raw for marker in REJECTION_MARKERS))
    )


def _build(found: list[dict[str, Any]], tools: Collection[str] | None) -> list[TraceCall]:
    calls = []
    for values in found:
        if not _kept(values, tools):
            continue
        tool, raw = values["tool"], values.get("result_raw")
        values["args"] = parse_args(values["args_raw"])
        if raw is not None and tool not in GUARDED_TOOLS:  # ok is None: decoded when read
            calls.append(TraceCall.lazy(values, _LAZY_RESULT[_decode_eagerly(tool, raw)]))
            continue
        if raw is not None:
            decoded = decode_result(raw) if _decode_eagerly(tool, raw) else None
            values.update(result=decoded, ok=_write_ok(tool, decoded, raw))
        calls.append(TraceCall.from_data(values))
    return calls


# a call's result as `_build` would have decoded it at once (by `_decode_eagerly`'s rule)
_LAZY_RESULT = {True: decode_result, False: lambda _raw: None}


def parse_trace_log(node_id: str, lines: list[str]) -> list[TraceCall]:
    """Pair each call line with the result line that follows it."""
    return _build(_scan(node_id, lines), None)


def parse_trace_logs(nodes: dict[str, Node]) -> dict[str, list[TraceCall]]:
    """TraceCalls of every node that has a trace_log."""
    result: dict[str, list[TraceCall]] = {}
    for node_id, node in nodes.items():
        if node.trace_log:
            calls = parse_trace_log(node_id, node.trace_log)
            if calls:
                result[node_id] = calls
    return result


def _may_hold(data: bytes, needles: list[bytes]) -> bool:
    """Whether the JSON bytes of a trace_log may hold one of the ASCII `needles` once decoded.
    JSON writers leave ASCII as it is, but a JSON string may spell any character as an escape
    (`\\u0073` for `s`): bytes with an escaped printable ASCII character are always parsed."""
    return any(needle in data for needle in needles) or _ESCAPED_ASCII.search(data) is not None


def _needles(tools: Collection[str]) -> list[bytes]:
    return [name.encode() for name in (*tools, *REJECTION_MARKERS)]


def _calls_in(
    node_id: str, data: bytes | None, lines: list[str], needles: list[bytes]
) -> tuple[int, list[dict[str, Any]] | None]:
    """The number of calls in a trace_log (`data`: its JSON bytes, when undecoded; `lines`),
    and those calls unparsed (`_scan`), or None when none of `needles` can be in it."""
    if data is not None and not _may_hold(data, needles):
        # none of those calls can be in it: only count the calls, one C regex per line
        return sum(map(bool, map(_CALL_LINE.match, lines))), None
    found = _scan(node_id, lines)
    return len(found), found


@dataclass(slots=True)
class Scanned:
    """`_calls_in` of one trace_log for `tools`, taken by the tree reader while it had the
    lines decoded to check them, with only the calls `_build` keeps (the others' text is not
    held until then); the calls' node id is set when they are used."""

    tools: Collection[str]
    count: int
    found: list[dict[str, Any]] | None


def scanner(tools: Collection[str]) -> Callable[[bytes, list[str]], Scanned]:
    """What the tree reader calls with each trace_log's JSON bytes and lines, so that
    `some_trace_calls(nodes, tools)` need not decode them again (a 10k run's 70 MB)."""
    needles = _needles(tools)

    def scan(data: bytes, lines: list[str]) -> Scanned:
        count, found = _calls_in("", data, lines, needles)
        if found is not None:
            found = [values for values in found if _kept(values, tools)]
        return Scanned(tools, count, found)

    return scan


def some_trace_calls(
    nodes: dict[str, Node], tools: Collection[str]
) -> tuple[dict[str, list[TraceCall]], int]:
    """Only the calls of `tools` and the calls the CoW guard refused (what the loader's
    attribution and CoW log need), and the number of all calls; the others stay unparsed.
    Every node with a call gets a key, in the order `parse_trace_logs` gives."""
    result: dict[str, list[TraceCall]] = {}
    total = 0
    needles = _needles(tools)
    for node_id, node in nodes.items():
        scanned = node.take_trace_scan()
        if type(scanned) is Scanned and scanned.tools == tools:
            count, found = scanned.count, scanned.found
            for values in found or ():
                values["node_id"] = node_id
        else:
            raw = node.trace_raw()
            data = None if raw is None else bytes(raw)  # (a Raw has no `in`; bytes' is fast)
            count, found = _calls_in(node_id, data, node.trace_lines(), needles)
        if count:
            total += count
            result[node_id] = [] if found is None else _build(found, tools)
    return result, total


class TraceCallsByNode(Mapping[str, list[TraceCall]]):
    """`some_trace_calls(nodes, tools)`'s calls, parsed one node at a time when one node's are
    asked for (`get`), or all at once when the mapping is walked. A reopened run's CoW rows of
    one node then cost that node's trace_log, not the whole run's.

    `known`: what a load found (`known_calls`, kept in the run index): the nodes with a call,
    in order, and those of them whose calls `some_trace_calls` kept; the others' trace logs
    are not read at all (on the 10k demo, two thirds of them)."""

    def __init__(
        self,
        nodes: dict[str, Node],
        tools: Collection[str],
        known: tuple[list[str], list[str]] | None = None,
    ) -> None:
        self._nodes, self._tools = nodes, tools
        self._one: dict[str, list[TraceCall] | None] = {}
        self._all: dict[str, list[TraceCall]] | None = None
        self._keys: dict[str, bool] | None = None  # node -> whether its log is read
        if known is not None:
            keys, holding = known
            self._keys = dict.fromkeys(keys, False) | dict.fromkeys(holding, True)

    def _everything(self) -> dict[str, list[TraceCall]]:
        if self._all is None:
            if self._keys is None:
                self._all = some_trace_calls(self._nodes, self._tools)[0]
            else:
                nodes = self._nodes
                read = {node_id: nodes[node_id] for node_id, read in self._keys.items() if read}
                found = some_trace_calls(read, self._tools)[0]
                self._all = {node_id: found.get(node_id, []) for node_id in self._keys}
        return self._all

    def __getitem__(self, node_id: str) -> list[TraceCall]:
        if self._all is not None:
            return self._all[node_id]
        if self._keys is not None:
            read = self._keys.get(node_id)
            if read is None:
                raise KeyError(node_id)  # (no call in its log)
            if not read:
                return []  # calls, none of them kept
        if node_id not in self._one:
            node = self._nodes.get(node_id)
            found = some_trace_calls({node_id: node}, self._tools)[0] if node else {}
            self._one[node_id] = found.get(node_id)
        calls = self._one[node_id]
        if calls is None:
            raise KeyError(node_id)
        return calls

    def __iter__(self) -> Iterator[str]:
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())


def known_calls(calls: Mapping[str, list[TraceCall]]) -> tuple[list[str], list[str]]:
    """What `TraceCallsByNode` is told a load found: the nodes of `calls`, in order, and those
    with a call kept."""
    return list(calls), [node_id for node_id, kept in calls.items() if kept]


def trace_calls_of(nodes: dict[str, Node]) -> Callable[[], dict[str, list[TraceCall]]]:
    """The full parse, to run when someone first asks for `Checkpoint.trace_calls`."""
    return lambda: parse_trace_logs(nodes)
