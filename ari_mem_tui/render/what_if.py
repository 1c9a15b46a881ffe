"""`health --what-if`: the run's own memory health beside the same run under other settings,
as text and JSON; the TUI's Health view shows the same lines (`what_if_lines`) and tables.

The JSON carries both sides whole, each exactly what `health --json` prints for its settings
(`own` always, `what_if` under the run's own settings too), and what changed between them.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ari_mem_tui.model.health import WhatIf, WhatIfDepth, WhatIfNode
from ari_mem_tui.render.health import health_json, pct, titled_table
from ari_mem_tui.render.text import clean, short_id
from ari_mem_tui.render.words import plural
from ari_mem_tui.search.dropped import DROPPABLE

SHOWN_NODES = 20
DEPTH_COLUMNS = ("depth", "nodes", "starved", "reached", "other branches", "tool entries", "react")
NODE_COLUMNS = ("node", "depth", "hits", "gained", "lost", "reached", "verdict")


def settings_words(settings: dict[str, Any]) -> str:
    """`limit 10, top_k 400, ranker bm25, pool as of each start, left out: tool-auto`."""
    pool = "as of each start" if settings.get("pool") == "start" else "today's"
    words = (
        f"limit {settings.get('limit')}, top_k {settings.get('top_k')}, ranker"
        f" {clean(settings.get('ranker'), False)}, pool {pool}"
    )
    drop = settings.get("drop") or []
    if drop:
        words += ", left out: " + ", ".join(DROPPABLE.get(d, d) for d in drop)
    return words


def arrow(own: object, other: object) -> str:
    return f"{own}" if own == other else f"{own} → {other}"


def what_if_lines(w: WhatIf) -> Text:
    """The headline: both settings, starved on either side, hits gained and lost."""
    c = w.changes
    out = Text()
    out.append("what if: ", style="bold")
    out.append(settings_words(w.settings) + "\n")
    out.append("own:     ", style="bold")
    out.append(settings_words(w.own_settings) + "\n")
    style = (
        "bold green"
        if c.starved_what_if < c.starved_own
        else ("bold red" if c.starved_what_if > c.starved_own else "bold")
    )
    out.append(f"starved: {arrow(c.starved_own, c.starved_what_if)} ", style=style)
    out.append(
        f"({plural(len(c.no_longer_starved), 'node')} no longer starved,"
        f" {len(c.newly_starved)} newly starved)"
    )
    out.append(
        f" · hits: +{c.hits_gained} gained, −{c.hits_lost} lost over"
        f" {plural(c.nodes_changed, 'node')}\n"
    )
    fidelity = w.what_if.fidelity
    if fidelity is not None:
        exact = fidelity.exact is True
        out.append(f"what-if ranker {clean(fidelity.label, False)}", "green" if exact else "yellow")
    if not (w.own.complete and w.what_if.complete):
        out.append(" · INTERRUPTED", style="bold yellow")
    return out


def depth_cells(d: WhatIfDepth) -> list[Any]:
    starved = Text(arrow(d.starved_own, d.starved_what_if))
    if d.starved_what_if != d.starved_own:
        starved.stylize("green" if d.starved_what_if < d.starved_own else "red")
    return [
        d.label.removeprefix("depth "),
        str(d.nodes),
        starved,
        arrow(pct(d.reached_own), pct(d.reached_what_if)),
        arrow(pct(d.share_other_own), pct(d.share_other_what_if)),
        arrow(pct(d.share_tool_own), pct(d.share_tool_what_if)),
        arrow(pct(d.share_react_own), pct(d.share_react_what_if)),
    ]


def verdict(n: WhatIfNode) -> Text:
    if n.starved_own and not n.starved_what_if:
        return Text("no longer starved", style="bold green")
    if n.starved_what_if and not n.starved_own:
        return Text("newly starved", style="bold red")
    if n.starved_what_if:
        return Text("still starved", style="red")
    return Text("ok", style="green")


def node_cells(n: WhatIfNode) -> list[Any]:
    return [
        Text(short_id(n.node_id), style="cyan"),
        str(n.depth),
        arrow(n.hits_own, n.hits_what_if),
        Text(f"+{len(n.gained)}", style="green" if n.gained else ""),
        Text(f"−{len(n.lost)}", style="red" if n.lost else ""),
        arrow(n.reached_own, n.reached_what_if),
        verdict(n),
    ]


def render_what_if(console: Console, w: WhatIf) -> None:
    title = f"What if: memory health of {clean(w.own.run_id or '?', False)} under other settings"
    console.print(Text(title, style="bold underline"), soft_wrap=True)  # the run id whole
    console.print(what_if_lines(w))
    rows = [depth_cells(d) for d in w.changes.by_depth]
    console.print(
        titled_table(
            "By depth (run's own → what if; means over searched nodes)", DEPTH_COLUMNS, rows
        )
    )
    nodes = w.changes.nodes
    if nodes:
        cut = f", first {SHOWN_NODES}; all: --json" if len(nodes) > SHOWN_NODES else ""
        console.print(
            titled_table(
                f"Nodes whose hits changed ({len(nodes)}{cut}; no longer starved first)",
                NODE_COLUMNS,
                [node_cells(n) for n in nodes[:SHOWN_NODES]],
            )
        )
    else:
        console.print(Text("No node's hits changed.", style="bold"))
    for note in w.notes:
        console.print(Text(f"note: {clean(note, False)}", style="dim"))


def what_if_json(w: WhatIf) -> dict[str, Any]:
    """Both sides whole (each exactly what `health --json` prints for it), the settings and
    the changes. Each side is checked as `health` checks its document (its lists of a row per
    node, depth or entry by their first row); the what-if document around them with those
    lists cut to their first row, then given back whole (render/outputs.py, `Document.BULK`)."""
    from ari_mem_tui.render import outputs  # noqa: PLC0415 - its models (~30 ms) where JSON is made

    own, theirs = health_json(w.own), health_json(w.what_if)
    data = {
        "settings": w.settings,
        "own_settings": w.own_settings,
        "same": w.same,
        "changes": w.changes.as_data(),
        "notes": list(w.notes),
        "own": _first_rows(own),
        "what_if": _first_rows(theirs),
    }
    document = outputs.output(outputs.HealthWhatIfOutput, data)
    document["own"], document["what_if"] = own, theirs
    return document


def _first_rows(health: dict[str, Any]) -> dict[str, Any]:
    from ari_mem_tui.render.outputs import HealthOutput  # noqa: PLC0415 - as above

    return {k: v[:1] if k in HealthOutput.BULK and v else v for k, v in health.items()}
