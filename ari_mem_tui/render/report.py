"""Headless output: `ari-mem-tui saw` (what one node saw) and `ari-mem-tui audit` (a whole run).

Both print JSON with `--json` and Rich tables otherwise. Memory text is data: it only ever
reaches the terminal through `rich.text.Text` after control characters were made visible.
The TUI calls the same `replay()` / `audit()` functions, so both always agree.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ari_mem_tui.audit import AuditReport, Finding, SecondHand
from ari_mem_tui.model import CowWrite, Hit, Replay
from ari_mem_tui.render.findings import chain_words
from ari_mem_tui.render.text import clean, fmt_ts, preview, short_id
from ari_mem_tui.render.words import (
    MARKS_LEGEND,
    cut_note,
    differences_words,
    fmt_global,
    fmt_score,
    mark_long,
    plural,
    pool_parts,
    pool_words,
    query_words,
    tier_badge,
)
from ari_mem_tui.search.fidelity import NOT_REPRODUCED

TEXT_WIDTH = 90

MISSED_SHOWN = 15  # rows of the missed table in text output; --json has them all
WRITES_SHOWN = 20  # rows of the writes table, beyond the rejected ones
AUDIT_ROWS = 200  # rows of each audit section's table (the text: --json lists every one)
SECOND_HAND_TITLE = (
    "Second-hand leaks (another branch's memory, received in an entry that kept a leaking "
    "read's result; not in the exit code)"
)


# ---------------------------------------------------------------- saw


def saw_json(result: Replay) -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    return outputs.output(outputs.SawOutput, result.as_data())


def fidelity_line(r: Replay) -> Text:
    """`ranker exact: the run's embedding model (…), its recorded search reproduced`: green
    only when exact, red when the run's own ranker did not reproduce the recording."""
    style = "green" if r.fidelity.exact is True else "yellow"
    if r.fidelity.word == NOT_REPRODUCED:
        style = "bold red"
    return Text.assemble(("ranker ", "bold"), (clean(r.fidelity.label or r.embedder, False), style))


def render_saw(console: Console, r: Replay, source_label: str = "") -> None:
    head = Text()
    head.append("node ", style="bold").append(clean(r.node_id), style="bold cyan")
    if source_label:
        head.append(f"   ({clean(source_label)})", style="dim")
    console.print(head, soft_wrap=True)  # a long path stays on the node's line
    line = Text("query ", style="bold")
    line.append(preview(r.query, 200)).append(f"  [{query_words(r)}]", style="dim")
    console.print(line)
    console.print(Text(pool_words(r), style="bold yellow" if r.as_of is None else "bold"))
    p = r.params
    window = "" if r.windowless else f"  top_k {p['top_k']} (overfetch {p['overfetch']})"
    info = f"limit {p['limit']}{window}  ranker {r.embedder}"
    console.print(Text(clean(info, False), style="dim"))
    console.print(fidelity_line(r))
    if r.fidelity.hash is not None:
        console.print(Text(clean(r.fidelity.hash.line(), False), style="dim"))
    if r.fidelity.note:
        console.print(Text(clean(r.fidelity.note, False), style="yellow"))
    console.print(_hits_table(f"Hits (replayed with {clean(r.embedder, False)})", r.hits, "replay"))
    _render_diagnostics(console, r)
    if r.recorded is not None:
        rec = r.recorded
        title = (
            f"Recorded start-up search (access log, query {preview(rec.query, 40)!s}; "
            f"ranked by {rec.ranker})"
        )
        console.print(_hits_table(title, rec.hits, "recorded"))
        verdict = differences_words(r) + (f"; {MARKS_LEGEND}" if rec.differences else "")
        console.print(Text(verdict, style="yellow" if rec.differences else "green"))
    else:
        console.print(Text("recorded: not in the access log", style="dim"))
    if [h.entry_id for h in r.exact_scope] != [h.entry_id for h in r.hits]:
        title = "Exact scope (what a pre-filtered search would have returned)"
        console.print(_hits_table(title, r.exact_scope))
    elif r.exact_scope:
        console.print(Text("exact scope: the same entries as the hits", style="dim"))
    _render_tiers(console, r)
    _render_writes(console, r)
    for note in r.notes:
        console.print(Text(f"note: {clean(note, multiline=False)}", style="yellow"))


def _hits_table(title: str, hits: list[Hit], other_side: str = "") -> Table:
    table = Table(title=Text(clean(title, False)), title_justify="left", expand=True)
    marks = any(h.mark for h in hits)
    table.add_column("#", justify="right")
    table.add_column("global", justify="right")
    table.add_column("score", justify="right")
    table.add_column("node", no_wrap=True)
    if marks:
        table.add_column("mark", overflow="fold", max_width=21)
    table.add_column("text", overflow="fold", ratio=1, min_width=24)
    mark_style = {
        "replay-only": "magenta",
        "recorded-only": "red",
        "moved": "yellow",
        "changed": "yellow",
    }
    for h in hits:
        cells: list[Any] = [
            str(h.rank),
            fmt_global(h),
            fmt_score(h.score),
            Text(short(h.node_id), style="cyan"),
        ]
        if marks:
            cells.append(Text(mark_long(h, other_side), style=mark_style.get(h.mark, "")))
        cells.append(Text(preview(h.text, TEXT_WIDTH) if h.text else "(text unknown)"))
        table.add_row(*cells)
    if not hits:
        table.add_row("", "", "", "", *([""] if marks else []), Text("(none)", style="dim"))
    return table


def short(node_id: str) -> str:
    """A node id short enough for a table column: whole when short, else as the TUI names it
    (`short_id`: the last 8 characters, "root" for ARI's long root id)."""
    node_id = clean(node_id, multiline=False)
    return node_id if len(node_id) <= 14 else short_id(node_id)


def _render_diagnostics(console: Console, r: Replay) -> None:
    pool = r.pool
    text = Text()
    text.append("pool ", style="bold").append(f"{pool['size']} entries ({pool_parts(pool)})")
    window = pool.get("window")
    if window:
        text.append("\nwindow ", style="bold").append(
            f"{window['size']} rows: {window['lineage']} from the lineage, "
            f"{window['other_branches']} from other branches, {window['self']} own, "
            f"{window['react_step']} react"
        )
    text.append("\neligible ", style="bold").append(f"{r.eligible} ancestor entries; ")
    if r.windowless:
        text.append("the backend scores every one of them: none is missed", style="green")
    else:
        text.append(f"{len(r.missed)} outside the window", style="red" if r.missed else "green")
    console.print(text)
    if r.missed:
        table = Table(title="Missed (eligible, ranked outside the window)", title_justify="left")
        table.add_column("global", justify="right")
        table.add_column("node")
        table.add_column("text", overflow="fold")
        for m in r.missed[:MISSED_SHOWN]:
            table.add_row(
                "?" if m.global_rank is None else str(m.global_rank),
                Text(short(m.node_id), style="cyan"),
                Text(preview(m.text, TEXT_WIDTH)),
            )
        if len(r.missed) > MISSED_SHOWN:
            table.add_row(
                "",
                "",
                Text(
                    cut_note(MISSED_SHOWN, len(r.missed), "", "`saw CKPT NODE --json`"),
                    style="dim",
                ),
            )
        console.print(table)


def _render_tiers(console: Console, r: Replay) -> None:
    for tier in r.tiers:
        label = Text()
        label.append(f"Tier {tier.key} {tier.title} ", style="bold")
        label.append(tier_badge(tier), style="green" if tier.exact else "yellow")
        if tier.note:
            label.append(f"  ({clean(tier.note, False)})", style="dim")
        console.print(label)
        if tier.lines:
            console.print(Text(clean(tier.header, False), style="bold dim"))
        for line in tier.lines:
            body = Text(clean(line.text))
            if line.truncated:
                body.append("  ✂", style="yellow")
            console.print(body)


def _render_writes(console: Console, r: Replay) -> None:
    if not r.writes:
        console.print(Text("writes: none recorded", style="dim"))
        return
    shown = writes_shown(r.writes)
    # the text takes what the short columns leave; a target column only when a write aimed
    # at another node's memory (the rejected ones ARI's copy-on-write rule is about); where a
    # write was read from only when there is room for it (--json always has it)
    elsewhere = any(w.target_node != r.node_id for w in shown)
    sources = console.width >= 100
    table = Table(title="Writes (copy-on-write log)", title_justify="left", expand=True)
    table.add_column("time", max_width=12)  # (date above time)
    table.add_column("tool", no_wrap=True, max_width=14)
    if elsewhere:
        table.add_column("target", no_wrap=True)
    table.add_column("ok", no_wrap=True)
    if sources:
        table.add_column("source", no_wrap=True)
    table.add_column("text / reason", overflow="fold", ratio=1, min_width=24)
    for w in shown:
        cells = [
            Text(fmt_ts(w.ts) if w.ts else "?"),
            Text(clean(w.tool, False)),
            *([Text(short(w.target_node), style="cyan")] if elsewhere else []),
            Text("yes", style="green") if w.accepted else Text("REJECTED", style="bold red"),
            *([Text(clean(w.source, False), style="dim")] if sources else []),
            _write_text(w),
        ]
        table.add_row(*cells)
    console.print(table)
    if len(shown) < len(r.writes):
        rest = cut_note(len(shown), len(r.writes), "writes", "`saw CKPT NODE --json`")
        console.print(Text(f"{rest} (every rejected one is shown)", style="dim"))


def _write_text(w: CowWrite) -> Text:
    """An accepted write's text on its row's lines (cut: `--json` and the TUI have it whole,
    and a list of writes is read by scanning); a rejected one's reason in full, folded."""
    if not w.accepted:
        return Text(preview(w.reason or w.text, TEXT_WIDTH))
    return Text(preview(w.text, TEXT_WIDTH), no_wrap=True, overflow="ellipsis")


def writes_shown(writes: list[CowWrite]) -> list[CowWrite]:
    """The writes a text report lists: every rejected one, and accepted ones in time order up
    to WRITES_SHOWN rows in all (a busy node writes a hundred; --json has them all)."""
    room = WRITES_SHOWN - sum(1 for w in writes if not w.accepted)
    shown = []
    for w in writes:
        if not w.accepted:
            shown.append(w)
        elif room > 0:
            shown.append(w)
            room -= 1
    return shown


# ---------------------------------------------------------------- audit


def audit_json(report: AuditReport, source: str) -> dict[str, Any]:
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    return outputs.output(outputs.AuditOutput, {**report.as_data(), "memory_source": source})


def render_audit(console: Console, report: AuditReport, source: str = "") -> None:
    if source:
        console.print(Text(f"memory from {clean(source, False)}", style="dim"), soft_wrap=True)
    sections = (
        ("Leaks (memory read from outside the reader's lineage)", report.leaks),
        ("Scope violations (search scope not the reader's lineage)", report.scope_violations),
        (SECOND_HAND_TITLE, report.second_hand),
        ("Rejected writes (copy-on-write)", report.rejected_writes),
        (
            "Unattributed reads (no reader could be established; judged on nobody)",
            report.unattributed,
        ),
        ("Problems while loading", report.problems),
    )
    for title, findings in sections:
        _findings_table(console, title, findings)
    console.print(audit_verdict(report))


def audit_verdict(report: AuditReport) -> Text:
    """The closing line: every kind of finding counted (leaks and scope violations make the
    exit code 1; second-hand leaks follow from a leak, rejected writes are ARI's guard
    working: both counted beside them)."""
    leaks, scopes = len(report.leaks), len(report.scope_violations)
    reads = (
        f"{plural(leaks, 'leak')}, {plural(scopes, 'scope violation')}"
        if report.has_findings
        else "no leaks, no scope violations"
    )
    verdict = Text(reads, style="bold red" if report.has_findings else "bold green")
    second = len(report.second_hand)
    if second:  # (said only when there are some: they follow from a leak, counted already)
        verdict.append(f", {plural(second, 'second-hand leak')}", style="magenta")
    rejected = len(report.rejected_writes)
    verdict.append(
        f", {plural(rejected, 'rejected write')}" if rejected else ", no rejected writes",
        style="yellow" if rejected else "green",
    )
    if report.problems:
        verdict.append(f"; {plural(len(report.problems), 'problem')} while loading", style="dim")
    return verdict


def _findings_table(console: Console, title: str, findings: list[Finding]) -> None:
    """A section's findings as a table, the first AUDIT_ROWS of them: a table row costs Rich
    ~0.5 ms to lay out, and a 20,000-deep chain's 20,000 unattributed reads took the text
    audit ten times the --json one; the rest are counted, and --json lists them all."""
    if not findings:
        console.print(Text(f"{title}: none", style="dim"))
        return
    table = Table(title=f"{title}: {len(findings)}", title_justify="left")
    table.add_column("severity")
    table.add_column("node")
    table.add_column("what", overflow="fold")
    table.add_column("where", overflow="fold")
    styles = {"error": "bold red", "warning": "yellow", "info": "dim"}
    for f in findings[:AUDIT_ROWS]:
        what = clean(f.explanation, False)
        if isinstance(f, SecondHand):
            what += " · " + clean(chain_words(f), False)
        table.add_row(
            Text(f.severity, style=styles.get(f.severity, "")),
            Text(short(f.node_id), style="cyan"),
            Text(what),
            Text(clean(f.ref, False), style="dim"),
        )
    console.print(table)
    if len(findings) > AUDIT_ROWS:
        rest = "`ari-mem-tui audit CKPT --json`"
        console.print(Text(cut_note(AUDIT_ROWS, len(findings), "", rest), style="dim"))
