"""`?` / F1: the concepts behind what the panes show, and the keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from ari_mem_tui.tui import keys
from ari_mem_tui.tui.keys import TEXTUAL_KEYS, help_rows

HELP_TEXT = """\
# ari-mem-tui

Browse the memory of an ARI run: what each node **saw**, and why.

## Concepts

- **Ancestor scope.** A node may read only memory its *ancestors* wrote (root → parent, itself
  excluded): ARI passes the node's `ancestor_ids` as the read scope. Ancestors of the selected
  node are bold and underlined in the tree; `d` dims every node its search could not see.
- **Window.** ARI asks the memory server for the `top_k = max(overfetch, limit × 40)` best
  passages of the *whole run* (every branch, node and ReAct entries), then keeps those from the
  ancestors. Eligible ancestor entries ranked below the window are silently lost: the Hits tab
  counts them as **missed** (`M` lists them).
- **Rank score.** The score ARI reports is not a similarity: it is `1 − 0.01 × global rank` in
  that window (never below 0). *glob* is that global rank, *#* the rank among the node's hits.
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
  made by a Letta server's embedder differs from a local MiniLM/BM25 replay by design;
  ARI's in-memory backend records keyword-overlap scores, which encode no global rank (`?`).
- **Saw.** The working context the node got at start: tier 1a experiment core, 1b ancestor
  conclusions, 2 semantic supplement, with ARI's caps (`✂` marks a cut) and dedupe.
- **Findings on the tree.** `⚠` (red) after a node: it made a leak or a scope violation (a
  read outside its lineage); `⚑` (yellow): a write it tried was rejected. Its Hits and Node
  tabs show the read itself (query, scope, time) and the passages it returned, or the
  rejected text; the Audit tab lists the whole run's.
- **CoW (copy-on-write).** A node may write only its own memory. Writes aimed at another node
  are rejected; the Writes tab shows accepted and rejected ones with the reason.

## Keys
"""


def keys_table(keymap: Mapping[str, str]) -> str:
    """The help's key table, from the key registry with the user's remaps applied."""
    rows = [
        (" ".join(f"`{k}`" for k in shown.split()), text) for _, shown, text in help_rows(keymap)
    ]
    rows += TEXTUAL_KEYS
    return "| key | action |\n|---|---|\n" + "".join(f"| {k} | {t} |\n" for k, t in rows)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close"),
        *keys.bindings(keys.VIEW),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(HELP_TEXT + "\n" + keys_table(getattr(self.app, "keymap", {})))

    def action_scroll(self, direction: str) -> None:
        keys.scroll(self.query("#help-body").results(VerticalScroll), direction)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
