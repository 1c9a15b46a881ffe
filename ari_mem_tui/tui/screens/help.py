"""`?`: the concepts behind what the panes show, and the keys; F1: the same, the focused
pane's keys first.

The help is one Rich Markdown renderable in one Static: Textual's Markdown widget made a widget
of every paragraph, list item and table cell, and styling them took seconds on a shared machine
(issue 21 §4). Each help is built once and the same screen shown again (`show_help`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import ClassVar

from rich.markdown import Markdown
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from ari_mem_tui.render.findings import GLYPHS
from ari_mem_tui.render.text import STATUS_GLYPHS, UNKNOWN_STATUS
from ari_mem_tui.tui import keys
from ari_mem_tui.tui.key_bar import KeyBar
from ari_mem_tui.tui.keys import TEXTUAL_KEYS, help_rows

HELP_TEXT = """\
# ari-mem-tui

Browse the memory of an ARI run: what each node **saw**, and why.

## Concepts

- **Ancestor scope.** A node may read only memory its *ancestors* wrote (root → parent, itself
  excluded): ARI passes the node's `ancestor_ids` as the read scope. Ancestors of the selected
  node are bold and underlined in the tree; `d` dims every node its search could not see.
- **Pool.** Every memory entry ARI's search ranks: all branches' node memory and the ReAct
  steps (`pool 120 (100 node-scope, 20 react)` in the Hits tab), as of the node's start by default.
- **Window.** ARI asks the memory server for the `top_k = max(overfetch, limit × 40)` best
  passages of the *whole pool*, then keeps those from the ancestors. The Hits line says what
  filled the window: *lineage* (the node's ancestors: what it may read), *self* (its own
  entries: normally none as of its start), *other branches* (node memory outside its lineage)
  and *react* (ReAct steps); only the lineage rows can become hits.
- **Eligible.** The ancestor entries ARI's post-filter would keep, wherever they rank: the most
  the search could return. Eligible entries ranked below the window are silently lost: the
  Hits tab counts them as **missed** (`M` lists them, with their global rank).
- **Rank score.** The score ARI reports is not a similarity: it is
  `score = max(0, 1 − 0.01 × glob)`. *glob* (global rank) is the entry's 0-based place in the
  window of the whole pool, other branches and ReAct steps included; *#* is the rank among the
  node's hits. So a hit at glob 3 scores 0.97, and from glob 100 on every score reads **0.00**:
  the window is wider than 100 rows (limit 5: top_k 200), so hits that deep all tie at 0.
- **As of start.** By default a node's search is replayed over the pool *as of its start*
  (only entries written before it): what it saw. `a` switches to today's pool, where later
  writes take window ranks and shift every score; the Hits header always says which.
- **Query.** ARI searched with the node's `eval_summary` *at start* (its direction); after
  evaluation the `eval_summary` holds the verdict. `s` cycles: eval_summary at start (ARI's
  query), eval_summary now (what the verdict retrieves from its ancestors), a custom query.
- **Replay vs recording.** Hits are a *replay* with the ranker named in the header. The access
  log's record of the real search is shown below, compared on entry, rank, global rank and
  score; the *diff* column marks `+replay` (only in the replay), `-record` (only in the
  recording), `~rank`, `~glob`, `~score` (what differs, read recorded→replayed). A recording
  made by a Letta server's embedder differs from a local MiniLM/BM25 replay by design, unless
  the run's `settings.json` names the local MiniLM as that embedder (as the demo's does);
  ARI's in-memory backend records keyword-overlap scores, which encode no global rank (`?`).
  The header says which: `exact:` (the run's own ranking), `stand-in:` or `unverified:`.
  `R` ranks with the run's own embedding model through its endpoint, as its Letta server
  did: it says first what it sends (every memory text, the queries) and where, and asks.
- **Saw.** The working context the node got at start: tier 1a experiment core, 1b ancestor
  conclusions, 2 semantic supplement, with ARI's caps (`✂` marks a cut) and dedupe.
- **CoW (copy-on-write).** A node may write only its own memory. Writes aimed at another node
  are rejected; the Writes tab shows accepted and rejected ones with the reason.
"""

TREE_LEGEND_HEAD = """
## The tree, glyph by glyph

A row reads `▶ ⚠ ✓ a0000001 improve 0.37 ✎3`, left to right:

| mark | meaning |
|---|---|
| `▶` `▼` | the line has children: closed / open (`l` `→` open, `h` `←` close) |
| `┄4 a1000001→a1z00001` | a chain of 4 single-child nodes folded into one line (open it to list them) |
"""

TREE_LEGEND_TAIL = """| `a0000001` | the node id's last 8 characters, as ARI's dashboard shows them (`root` for the root) |
| `improve` | its label, coloured: draft, improve, debug, ablate (ablation), valid (validation) |
| `0.37` | its scientific score (`_scientific_score`): green ≥ 0.66, yellow ≥ 0.33, red below; `–` none |
| `✎3` | it wrote 3 memory entries (its own memory, copy-on-write) |
| **bold underlined** | an ancestor of the selected node: what its search may read |
| dim | after `d`: the selected node's search could not see it |
| dim italic | kept by the filter (`f`) only as an ancestor of a match |
| reversed | a find match (`/`, then `n` `N`) |

Focus: the focused pane has the bright border and the footer lists its keys; `[` focuses the
tree, `]` the detail pane (the shown tab), `i` the Hits query box, `Esc` goes back to the tree.
`F1` opens this help on the keys of the focused pane.

Tables are narrow: the columns that fit, the text taking the rest of the width (below 110
columns the Hits header is one line; the pool and ranker are in the border title). `z` makes
them wide, as k9s does: every column (the Hits kind, entry and diff in words; the Writes tool,
reason and source), 200 characters of text, scrolling sideways (`←` `→`), and the whole Hits
header. Below a table the preview shows the row under the cursor: its fields, its whole text,
wrapped; Enter shows the row in full either way. Each pane's title names the node it shows.
Times read `2026-05-28 21:52:06 UTC`, one way everywhere.

Typing safety: every letter is a command, and a single key runs at once. A phrase typed into
the wrong window goes to the find box instead: a key bound to nothing here (`x`, `o`, `7`) starts
a phrase, and so do two different letters within 0.3 s of each other, unless the second is a move
(`j k h l g G`) or the same letter again (`n n`); digits and brackets chain as commands (`2 ]`).
Typing runs faster than that (120 ms a key), so at most a phrase's first letter runs, and the
find box holds the whole phrase, in place of the old find; pasted text goes there too. Text
boxes (find, query, limit) keep their letters. `e` asks before it writes a dossier: `y` writes,
any other key cancels. `q` quits at once; with `"confirm_quit": true` in the config file it
asks first (`y` quits). `Esc` goes back to the tree, and there clears the find, then the filter.

## Keys
"""


def tree_legend() -> str:
    """The tree legend, its glyphs taken from where the tree draws them."""
    rows = [
        f"| `{glyph}` | {words} |"
        for kind, words in (
            ("read", "red: it made a leak or a scope violation (read outside its lineage)"),
            ("rejected", "yellow: a write it tried was rejected (copy-on-write)"),
        )
        for glyph in (GLYPHS[kind][0],)
    ]
    rows.append(
        "| "
        + " ".join(f"`{glyph}` {status}" for status, (glyph, _) in STATUS_GLYPHS.items())
        + f" `{UNKNOWN_STATUS[0]}` other | its status |"
    )
    return TREE_LEGEND_HEAD + "\n".join(rows) + "\n" + TREE_LEGEND_TAIL


def keys_table(keymap: Mapping[str, str], pane: Collection[str] = ()) -> str:
    """The help's key table, from the key registry with the user's remaps applied; with `pane`
    (its scopes), the keys of that pane only (F1)."""
    rows = [
        (" ".join(f"`{k}`" for k in shown.split()), text)
        for _, shown, text in help_rows(keymap, pane)
    ]
    if not pane:
        rows += TEXTUAL_KEYS
    return "| key | action |\n|---|---|\n" + "".join(f"| {k} | {t} |\n" for k, t in rows)


class HelpScreen(ModalScreen[None]):
    """The whole help; opened with F1 from a pane (Posting's context help), that pane's keys
    come first: `pane` is (its name, its scopes in tui/keys.py)."""

    BINDINGS: ClassVar[list[BindingType]] = [*keys.bindings(keys.HELP), *keys.bindings(keys.VIEW)]

    def __init__(
        self, keymap: Mapping[str, str], pane: tuple[str, Collection[str]] | None = None
    ) -> None:
        super().__init__()
        self.pane = pane
        first = ""
        if pane is not None:
            name, scopes = pane
            first = f"# Keys of {name}\n\n{keys_table(keymap, scopes)}\n(the whole help below)\n\n"
        self.source = first + HELP_TEXT + tree_legend() + "\n" + keys_table(keymap)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(Markdown(self.source), id="help-text")
        yield KeyBar()  # its own keys (Esc closes), not the tree's under it

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("#help-body").results(VerticalScroll), direction)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


def pane_of(focused: Widget | None) -> tuple[str, tuple[str, ...]] | None:
    """F1's pane: the first widget from `focused` up that names its key scopes (the tree pane,
    a tab: `HELP_SCOPES`), as (its name, those scopes); None when none does."""
    for node in focused.ancestors_with_self if focused is not None else ():
        scopes = getattr(node, "HELP_SCOPES", ())
        if scopes:
            return getattr(node, "help_name", "this pane"), scopes
    return None


def show_help(
    app: App, keymap: Mapping[str, str], pane: tuple[str, Collection[str]] | None
) -> None:
    """The help (on `pane`'s keys first): each built once and shown again after (building it
    is a Markdown layout of the whole text)."""
    if isinstance(app.screen, HelpScreen):
        return
    name = "help" if pane is None else f"help-{pane[0]}"
    if not app.is_screen_installed(name):
        app.install_screen(HelpScreen(keymap, pane), name)
    app.push_screen(name)
