"""A node's audit findings where the node is shown: the read itself (tool, query, scope, time)
and the passages it returned, or the rejected write's text. As Rich text (the TUI's Hits and
Node tabs) and as Markdown lines (the dossier). Memory text is data: always cleaned."""

from __future__ import annotations

from rich.text import Text

from ari_mem_tui.audit import Finding, SecondHand
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import cut_note, plural

# the tree row's glyph for a node's findings, and the help's legend for it
GLYPHS = {
    "read": ("⚠", "bold red"),  # a leak or a scope violation by this node (it read)
    "rejected": ("⚑", "bold yellow"),  # a write this node tried was rejected (copy-on-write)
}
# a node that received another branch's memory second-hand (not a tree glyph: it read nothing
# outside its lineage itself; the leak that started it is marked where it was made)
SECOND_HAND = ("⚠", "bold magenta")
KIND_WORDS = {
    "leak": "leak",
    "scope_violation": "scope violation",
    "rejected_write": "rejected write",
    "second_hand": "second-hand leak",
}
PASSAGES_SHOWN = 8


def glyph_kinds(findings: list[Finding]) -> tuple[str, ...]:
    """The glyphs a node's tree row carries, in this order: "read" (a leak or a scope
    violation), "rejected" (a rejected write); a node with both carries both."""
    kinds = {f.kind for f in findings}
    marks = []
    if kinds & {"leak", "scope_violation"}:
        marks.append("read")
    if "rejected_write" in kinds:
        marks.append("rejected")
    return tuple(marks)


def _read_facts(f: Finding) -> list[str]:
    when = fmt_ts(f.ts) if f.ts is not None else "time unknown (trace_log)"
    facts = [f"{f.tool or 'read'} at {when} · {f.ref}"]
    if f.query is not None:
        facts.append(f"query: {preview(f.query, 300)}")
    if f.scope:
        shown = ", ".join(short_id(s) for s in f.scope[:8])
        more = f" and {len(f.scope) - 8} more" if len(f.scope) > 8 else ""
        outside = ", ".join(short_id(t) for t in f.targets) if f.kind != "leak" else ""
        facts.append(f"scope: {shown}{more}" + (f" (outside: {outside})" if outside else ""))
    return facts


def chain_lines(f: SecondHand) -> list[str]:
    """How the memory travelled, one step a line: whose it was, the leaking read that returned
    it, the entry that kept it, the read that passed it on (each with its time and record)."""
    leak_when = fmt_ts(f.leak_ts) if f.leak_ts is not None else "time unknown (trace_log)"
    leak_where = f.leak_ref or "no record of the read: only the entry shows it"
    how = f"{f.tool} at {fmt_ts(f.ts)}" if f.ts is not None else f"{f.tool} (trace_log, untimed)"
    return [
        f"origin  {', '.join(f.origin_nodes)}: their memory, outside {f.node_id}'s lineage",
        f"leak    {f.via_node}'s {f.entry_tool} at {leak_when} · {leak_where}",
        f"entry   {f.entry_id}, {f.via_node}'s own, kept at {fmt_ts(f.entry_ts)}",
        f"reader  {f.node_id}'s {how} returned it · {f.ref}",
    ]


def chain_words(f: SecondHand) -> str:
    """The chain in one line, for a table cell: origin → leak → entry kept → read, timed."""
    origins = ", ".join(short_id(o) for o in f.origin_nodes)
    return (
        f"chain: {origins} → {short_id(f.via_node)} {f.entry_tool} {fmt_ts(f.leak_ts)} → "
        f"kept {fmt_ts(f.entry_ts)} → {short_id(f.node_id)} {f.tool} {fmt_ts(f.ts)}"
    )


def _passages_text(out: Text, f: Finding, what: str) -> None:
    outside = sum(1 for p in f.passages if p.outside)
    out.append(
        f"\n  {what} {plural(len(f.passages), 'passage')}, {outside} from outside the lineage:",
        style="bold",
    )
    ordered = sorted(f.passages, key=lambda p: not p.outside)
    for passage in ordered[:PASSAGES_SHOWN]:
        mark = ("  ⚠ ", "bold red") if passage.outside else ("    ", "")
        out.append("\n" + mark[0], style=mark[1])
        out.append(short_id(passage.node_id) + " ", style="cyan")
        body = passage.text or f"(text not joined: passage {passage.letta_id or '?'})"
        out.append(preview(body, 300), style="" if passage.outside else "bright_black")
    if len(ordered) > PASSAGES_SHOWN:
        out.append(
            "\n    "
            + cut_note(PASSAGES_SHOWN, len(ordered), "passages", "`ari-mem-tui audit CKPT --json`"),
            style="bright_black",
        )


def _second_hand_text(f: SecondHand) -> Text:
    glyph, style = SECOND_HAND
    out = Text()
    out.append(f"{glyph} second-hand leak ", style=style)
    out.append(clean(f.explanation, False))
    for line in chain_lines(f):
        out.append("\n  " + clean(line, False), style="bright_black")
    _passages_text(out, f, "the entry quotes")
    return out


def finding_text(f: Finding) -> Text:
    out = Text()
    if isinstance(f, SecondHand):
        return _second_hand_text(f)
    if f.kind == "rejected_write":
        glyph, style = GLYPHS["rejected"]
        out.append(f"{glyph} rejected write ", style=style)
        out.append(clean(f.explanation, False))
        when = fmt_ts(f.ts) if f.ts is not None else "time unknown"
        out.append(f"\n  {clean(f.tool, False)} at {when} · {clean(f.ref, False)}", "bright_black")
        out.append("\n  text: ", style="bold")
        out.append(clean(f.text or "(not recorded)"))
        return out
    glyph, style = GLYPHS["read"]
    out.append(f"{glyph} {KIND_WORDS.get(f.kind, f.kind)} ", style=style)
    out.append(clean(f.explanation, False))
    for fact in _read_facts(f):
        out.append("\n  " + clean(fact, False), style="bright_black")
    if not f.passages:
        out.append("\n  returned: nothing that could be listed", style="italic")
        return out
    _passages_text(out, f, "returned")
    return out


def findings_text(findings: list[Finding]) -> Text:
    out = Text()
    if not findings:
        return out
    out.append(f"Findings ({len(findings)})\n", style="bold red")
    for i, f in enumerate(findings):
        if i:
            out.append("\n")
        out.append_text(finding_text(f))
    return out


def findings_markdown(findings: list[Finding], cell) -> list[str]:
    """The dossier's section; `cell` makes one safe Markdown line of a value."""
    out = ["", "## Findings (audit)", ""]
    if not findings:
        return out + ["No leak, scope violation, rejected write or second-hand leak by this node."]
    for f in findings:
        out.append(f"### {KIND_WORDS.get(f.kind, f.kind)}: {cell(f.explanation, 300)}")
        out.append("")
        if isinstance(f, SecondHand):
            out += [f"- {cell(line, 400)}" for line in chain_lines(f)]
            out += _passages_markdown(f, cell)
            continue
        if f.kind == "rejected_write":
            when = fmt_ts(f.ts) if f.ts is not None else "?"
            out += [f"- {cell(f.tool)} at {when} ({cell(f.ref)})", f"- reason: {cell(f.reason)}"]
            out += [f"- text: {cell(f.text, 2000)}", ""]
            continue
        out += [f"- {cell(fact, 400)}" for fact in _read_facts(f)]
        out += _passages_markdown(f, cell)
    return out


def _passages_markdown(f: Finding, cell) -> list[str]:
    out = ["", "| outside | node | passage | text |", "|---|---|---|---|"]
    for p in f.passages:
        out.append(
            f"| {'yes' if p.outside else ''} | {cell(p.node_id)} | {cell(p.letta_id or '')} "
            f"| {cell(p.text or '(not joined)', 400)} |"
        )
    return [*out, ""]
