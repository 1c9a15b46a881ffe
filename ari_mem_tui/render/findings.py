"""A node's audit findings where the node is shown: the read itself (tool, query, scope, time)
and the passages it returned, or the rejected write's text. As Rich text (the TUI's Hits and
Node tabs) and as Markdown lines (the dossier). Memory text is data: always cleaned."""

from __future__ import annotations

from rich.text import Text

from ari_mem_tui.audit import Finding
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import cut_note, plural

# the tree row's glyph for a node's findings, and the help's legend for it
GLYPHS = {
    "read": ("⚠", "bold red"),  # a leak or a scope violation by this node (it read)
    "rejected": ("⚑", "bold yellow"),  # a write this node tried was rejected (copy-on-write)
}
KIND_WORDS = {
    "leak": "leak",
    "scope_violation": "scope violation",
    "rejected_write": "rejected write",
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


def finding_text(f: Finding) -> Text:
    out = Text()
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
    outside = sum(1 for p in f.passages if p.outside)
    if not f.passages:
        out.append("\n  returned: nothing that could be listed", style="italic")
        return out
    out.append(
        f"\n  returned {plural(len(f.passages), 'passage')}, {outside} from outside the lineage:",
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
        return out + ["No leak, scope violation or rejected write by this node."]
    for f in findings:
        out.append(f"### {KIND_WORDS.get(f.kind, f.kind)}: {cell(f.explanation, 300)}")
        out.append("")
        if f.kind == "rejected_write":
            when = fmt_ts(f.ts) if f.ts is not None else "?"
            out += [f"- {cell(f.tool)} at {when} ({cell(f.ref)})", f"- reason: {cell(f.reason)}"]
            out += [f"- text: {cell(f.text, 2000)}", ""]
            continue
        out += [f"- {cell(fact, 400)}" for fact in _read_facts(f)]
        out += ["", "| outside | node | passage | text |", "|---|---|---|---|"]
        for p in f.passages:
            out.append(
                f"| {'yes' if p.outside else ''} | {cell(p.node_id)} | {cell(p.letta_id or '')} "
                f"| {cell(p.text or '(not joined)', 400)} |"
            )
        out.append("")
    return out
