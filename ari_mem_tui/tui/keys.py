"""Every key of the TUI, defined once.

The `BINDINGS` of the app, its screens and its widgets, the command palette's actions
(tui/commands.py) and the help screen's key table (tui/screens/help.py) are all made from `KEYS`
(tests/test_tui_keys.py checks that no class binds a key outside it). Each binding carries its
id, so the config file remaps it by id (tui/config.py): `{"keys": {"mark": "x"}}`, Textual key
names, several separated by commas; the views over the main screen (help, entry, compare, …)
included.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.keys import format_key

# where a key works: anywhere, over any view too (APP); anywhere on the main screen, the tree's and
# the tabs' (MAIN: tui/main_screen.py); in the tree, in the tables, in the text views over the
# app (help, entry, compare, why: VIEW), in the Hits tab, the Writes tab, the text tabs (Saw,
# Core, Node)
APP, MAIN, TREE, TABLE, VIEW = "app", "main", "tree", "table", "view"
HITS, WRITES, TEXT = "hits", "writes", "text"
QUERY = "query"  # the Hits tab's query box
EVERY_PANE = (TREE, HITS, WRITES, TEXT, TABLE)
# the views over the app, each with its own keys; over a modal one (entry, why, help, filter,
# confirm) the app's keys are not heard
ENTRY, WHY, COMPARE, HELP = "entry", "why", "compare", "help"
FILTER, CHECKLIST = "filter", "checklist"  # the tree's filter (`f`) and its lists of options
HEALTH, RUNS = "health", "runs"  # the Health view (`H`), the run picker (`W`)
TABLE_BOX = "table_box"  # a table's filter box (`/` on a table)

# the detail tabs, in order: keys 1 to 6 switch to them
TABS = ("hits", "saw", "core", "writes", "node", "audit")
TAB_HELP = {
    "hits": "Ranked ancestor-only hits",
    "saw": "Context tiers as received",
    "core": "persona / human / ari_context",
    "writes": "Copy-on-write log",
    "node": "Status, metrics, lineage",
    "audit": "Problems, leaks, scope violations",
}


@dataclass(frozen=True)
class Key:
    id: str  # what the config file names
    keys: str  # Textual key names, comma-separated; "" for a palette-only action
    action: str
    description: str  # the footer's label
    help: str  # one line, in the help screen and the palette
    title: str = ""  # the palette's name for it; "" keeps it out of the palette
    show: bool = False  # in the footer wherever it is bound (APP: always)
    scopes: tuple[str, ...] = (APP,)
    # an APP or MAIN key that belongs to a pane: it works anywhere, but the footer shows it only
    # while that pane has focus (the pane binds it too, to the app's or the screen's action)
    footer: tuple[str, ...] = ()
    # more panes whose F1 help lists it (besides its scopes and footer), not in their footer
    panes: tuple[str, ...] = ()


# fmt: off
KEYS: tuple[Key, ...] = (
    Key("down", "j", "cursor_down", "Down", "Down in the tree and tables",
        scopes=(TREE, TABLE, CHECKLIST)),
    Key("up", "k", "cursor_up", "Up", "Up in the tree and tables", scopes=(TREE, TABLE, CHECKLIST)),
    Key("collapse", "h,left", "collapse_or_parent", "Collapse", "Collapse, or up to the parent",
        scopes=(TREE,)),
    Key("expand", "l,right", "expand_or_child", "Expand", "Expand, or down to the first child",
        scopes=(TREE,)),
    Key("top", "g", "scroll_top", "Top", "First line", scopes=(TREE, TABLE)),
    Key("bottom", "G", "scroll_bottom", "Bottom", "Last line", scopes=(TREE, TABLE)),
    Key("view", "v", "view_row", "View",
        "The row under the cursor in full: every field, the whole text (Enter too)",
        scopes=(TABLE,)),
    Key("table_filter", "slash", "filter_rows", "Filter",
        "Filter the table's rows by any text in them (k9s's /; `!text`: the rows without it); "
        "the pane's title counts them, Esc clears", "Filter table rows", show=True,
        scopes=(TABLE,)),
    Key("table_clear", "escape", "clear_table_filter", "Clear filter",
        "Clear the table's filter (Esc again: back to the tree)", scopes=(TABLE,)),
    Key("table_sort", "S", "cycle_sort", "Sort",
        "Sort the table: by its first column ↑, ↓, then the next column …, then its own order "
        "again (the title says which); a click on a header sorts by that column",
        "Sort table", scopes=(TABLE,)),
    Key("table_csv", "x", "export_csv", "CSV",
        "Write the rows the table shows (filtered, in its order) as CSV, every column in full "
        "(asks first, naming the file: y writes)", "Export table as CSV",
        scopes=(TABLE,)),
    Key("scroll_down", "j", "scroll('down')", "Down",
        "Scroll down the Saw, Core and Node tabs, the help, an entry, a comparison",
        scopes=(VIEW, TEXT)),
    Key("scroll_up", "k", "scroll('up')", "Up", "Scroll them up", scopes=(VIEW, TEXT)),
    Key("focus_tree", "left_square_bracket", "focus_tree", "Tree", "Focus the tree pane",
        "Focus tree", footer=(HITS, WRITES, TEXT, TABLE), scopes=(MAIN,)),
    Key("focus_detail", "right_square_bracket", "focus_detail", "Detail",
        "Focus the detail pane (the shown tab)", "Focus detail", footer=(TREE,), scopes=(MAIN,)),
    Key("focus_query", "i", "focus_query", "Query",
        "Type a custom query in the Hits tab's query box", "Focus query box", footer=(HITS,),
        scopes=(MAIN,)),
    Key("query_older", "up", "history(-1)", "Older",
        "In the query box: the custom query typed before (↑ again: older)", scopes=(QUERY,)),
    Key("query_newer", "down", "history(1)", "Newer",
        "In the query box: the next custom query, back to what was being typed",
        scopes=(QUERY,)),
    Key("quit", "q,ctrl+c", "quit", "Quit",
        "Leave the app (at once, even while a load waits; asks first with \"confirm_quit\": "
        "true in the config file)", "Quit", show=True),
    Key("help", "question_mark", "help", "Help",
        "Concepts (ancestor scope, window, rank score, CoW), the tree's legend, keys", "Help",
        show=True),
    Key("pane_help", "f1", "pane_help", "Help here",
        "The help, the keys of the focused pane (tree, Hits, Writes, …) first",
        "Help for the focused pane"),
    Key("find", "slash", "find", "Find", "Find a node by id or text (typing fast or pasting "
        "into the tree finds too)", "Find node", footer=(TREE,), scopes=(MAIN,)),
    Key("find_next", "n", "find_next", "Next", "Next find match", "Find next", panes=(TREE,),
        scopes=(MAIN,)),
    Key("find_prev", "N", "find_prev", "Previous", "Previous find match", "Find previous",
        panes=(TREE,), scopes=(MAIN,)),
    Key("filter", "f", "filter", "Filter", "Keep nodes of some statuses / labels", "Filter tree",
        footer=(TREE,), scopes=(MAIN,)),
    Key("clear_filter", "", "clear_filter", "Clear filter", "Show every node again",
        "Clear filter", scopes=(MAIN,)),
    Key("mark", "m", "mark", "Mark", "Mark the current node for compare", "Mark node",
        footer=(TREE,), scopes=(MAIN,)),
    Key("compare", "c", "compare", "Compare", "Compare side by side with the marked node",
        "Compare with marked", panes=(TREE,), scopes=(MAIN,)),
    Key("export", "e", "export", "Export",
        "Write the node's dossier as Markdown + JSON (asks first: y writes, any other key "
        "cancels)", "Export dossier", footer=(TREE,), scopes=(MAIN,)),
    Key("follow", "F", "toggle_follow", "Follow",
        "Follow a running checkpoint: re-read changed files", "Follow"),
    Key("copy", "y", "copy", "Copy", "Copy the node id or the entry under the cursor", "Copy",
        panes=(TREE, HITS, WRITES), scopes=(MAIN,)),
    Key("why", "Y", "why", "Why",
        "Why the node did or did not see the entry under the cursor (Hits, Writes, an entry "
        "view, Health's entries): its start-up search step by step, with the numbers; the "
        "marked node is asked about when one is marked (Y there: the other)",
        "Why (not) seen", footer=(HITS, WRITES, ENTRY), panes=(TABLE,)),
    Key("reload", "r", "reload", "Reload", "Re-read the checkpoint", "Reload"),
    Key("dim", "d", "toggle_dim", "Dim unseen",
        "Dim the nodes the selection's search could not see", "Dim unseen nodes",
        panes=(TREE,), scopes=(MAIN,)),
    Key("missed", "M", "toggle_missed", "Missed",
        "Show the missed: eligible ancestor entries outside the window", "Show missed entries",
        footer=(HITS,), scopes=(MAIN,)),
    Key("as_of", "a", "toggle_as_of", "Pool",
        "Rank the pool as of the node's start (default) or today's, later writes too",
        "Pool: as of start / today", footer=(HITS,), scopes=(MAIN,)),
    Key("query_source", "s", "cycle_query", "Source",
        "Search with the eval_summary at start, the eval_summary now, or your own query",
        "Query: at start / now / custom", footer=(HITS,), scopes=(MAIN,)),
    Key("writes_scope", "w", "toggle_writes_scope", "Node / run",
        "Switch the Writes tab's scope: this node / the whole run", "Writes: node / whole run",
        footer=(WRITES,), scopes=(MAIN,)),
    Key("wide", "z", "toggle_wide", "Wide",
        "Wide / narrow tables (k9s's wide): every column and 200 characters of text, scrolling "
        "sideways, and the Hits header in full / the columns that fit the pane",
        "Tables: wide / narrow", footer=(TABLE,)),
    Key("tree", "t,ctrl+b", "toggle_tree", "Tree", "Hide or show the tree", "Toggle tree pane",
        panes=(TREE, HITS, WRITES, TEXT, TABLE), scopes=(MAIN,)),
    Key("back", "escape", "escape", "Back",
        "Back to the tree; in the tree, clear the find, else the filter (the title drops it)",
        scopes=(MAIN,)),
    Key("history_back", "b,ctrl+o", "history_back", "Back",
        "Back to the view before a jump (`o`, a find, the palette, a finding's node): its "
        "node, tab and row", "History: back", panes=EVERY_PANE, scopes=(MAIN,)),
    Key("history_forward", "B", "history_forward", "Forward",
        "Forward again to the view `b` left", "History: forward", panes=EVERY_PANE, scopes=(MAIN,)),
    Key("maximise", "plus", "maximise", "Maximise",
        "Maximise the focused pane to the whole screen, and back (lazygit's +; Esc too)",
        "Maximise pane", panes=EVERY_PANE, scopes=(MAIN,)),
    Key("health", "H", "health", "Health",
        "Memory health: starved nodes, crowded windows, entries never read", "Memory health"),
    Key("runs", "W", "runs", "Runs", "Back to the run picker of the workspace",
        "Runs of the workspace"),
    Key("run_model", "R", "run_model", "Run's model",
        "Rank with the run's own embedding model, as its Letta server did: says what it sends "
        "(every memory text with ARI's footer, the queries) and where, and asks first",
        "Rank with the run's embedding model"),
    *(
        Key(f"tab_{name}", str(i + 1), f"tab('{name}')", name.title(),
            f"{name.title()} tab: {TAB_HELP[name]} (the detail pane keeps focus if it had it)",
            f"{name.title()} tab", scopes=(MAIN,))
        for i, name in enumerate(TABS)
    ),
    # ---- the views over the main screen: each its own keys ----
    Key("close", "escape,q", "close", "Close", "Close the entry view or the why view",
        show=True, scopes=(ENTRY, WHY)),
    Key("entry_copy", "y", "copy", "Copy text", "In the entry view: copy its whole text",
        show=True, scopes=(ENTRY,)),
    Key("go_to_node", "o", "go_to_node", "Go to node",
        "In the entry view or the why view: go to its node in the tree", show=True,
        scopes=(ENTRY, WHY)),
    Key("why_switch", "Y", "switch", "The other node",
        "In the why view: ask about the other node (the marked one, or the current one)",
        show=True, scopes=(WHY,)),
    Key("help_close", "escape,q,question_mark,f1", "dismiss", "Close", "Close the help",
        show=True, scopes=(HELP,)),
    Key("compare_close", "escape,q,c", "close", "Back", "Close the comparison", show=True,
        scopes=(COMPARE,)),
    # both sides of a comparison move together (its columns take no focus: no key moves one)
    Key("compare_page_down", "pagedown,space", "scroll('page_down')", "Page down",
        "In the comparison: both sides a page down", scopes=(COMPARE,)),
    Key("compare_page_up", "pageup", "scroll('page_up')", "Page up",
        "In the comparison: both sides a page up", scopes=(COMPARE,)),
    Key("compare_top", "g,home", "scroll('home')", "Top", "In the comparison: both sides' top",
        scopes=(COMPARE,)),
    Key("compare_bottom", "G,end", "scroll('end')", "Bottom",
        "In the comparison: both sides' end", scopes=(COMPARE,)),
    Key("filter_cancel", "escape", "cancel", "Cancel", "In the tree's filter: leave it as it was",
        show=True, scopes=(FILTER,)),
    Key("filter_apply", "ctrl+s", "apply", "Apply", "In the tree's filter: apply the choices",
        show=True, scopes=(FILTER,)),
    Key("health_back", "escape", "back", "Back / interrupt",
        "In the Health view: back (while it computes: stop it)", show=True,
        scopes=(HEALTH,)),
    Key("health_numbers", "n", "toggle_numbers", "Numbers / plots / what if",
        "In the Health view: the numbers, the plots, or the what-if row", show=True,
        scopes=(HEALTH,)),
    Key("health_what_if", "w", "focus_what_if", "What if",
        "In the Health view: type other memory settings (what if)", show=True, scopes=(HEALTH,)),
    Key("health_recompute", "r", "recompute", "Recompute",
        "In the Health view: compute the run's health again", scopes=(HEALTH,)),
    Key("runs_filter", "slash", "filter", "Filter", "In the run picker: filter the runs",
        show=True, scopes=(RUNS,)),
    Key("runs_back", "escape", "back", "Back",
        "In the run picker: back to the open run (on the first list: quit)", show=True,
        scopes=(RUNS,)),
    Key("table_box_clear", "escape", "cancel", "Clear filter",
        "In a table's filter box: clear it (Enter keeps it)", show=True, scopes=(TABLE_BOX,)),
)
# fmt: on
BY_ID = {key.id: key for key in KEYS}
# the moves: right after another letter they are still commands, not typing (held down, they
# repeat; tui/typing_guard.py), and a pane's F1 help lists them after its own keys
MOVES = frozenset({"down", "up", "collapse", "expand", "top", "bottom", "scroll_down", "scroll_up"})

# Textual's own keys, listed in the help beside ours (not remappable here)
TEXTUAL_KEYS = (
    ("arrows, mouse", "Move in the tree and tables (`→` expands, `←` collapses)"),
    (
        "`PageUp` `PageDown` `Home` `End`",
        "Page a table; in the Hits tab, the pane past its tables; in compare, both sides",
    ),
    ("`Tab` `Shift+Tab`", "Next / previous focusable widget (the tab strip is not one: `1`–`6`)"),
    ("`Enter`", "Expand a node / open a table's row in full (`o` there: go to its node)"),
    ("`Ctrl+P`", "Command palette (every action, jump to node, themes)"),
)


def bindings(scope: str) -> list[Binding]:
    """The BINDINGS of the app (APP), a screen (MAIN, ENTRY, HELP, …) or a widget (TREE, TABLE,
    HITS, …): its own keys, then the app's or the main screen's keys the footer shows while it
    has focus (bound to their action)."""
    own, shown = [], []
    for k in KEYS:
        if not k.keys:
            continue
        if scope in k.scopes:
            own.append(Binding(k.keys, k.action, k.description, show=k.show, id=k.id))
        elif scope in k.footer:
            action = f"{owner(k)}.{k.action}"
            shown.append(Binding(k.keys, action, k.description, show=True, id=k.id))
    return own + shown


def owner(key: Key) -> str:
    """Where `key`'s action is: the app's (`app`) or the main screen's (`screen`: a pane's key
    is heard only on the screen that holds it)."""
    return "screen" if MAIN in key.scopes else "app"


def scroll(views: Iterable[ScrollableContainer], direction: str) -> None:
    """What a view's `scroll('down')` / `scroll('up')` does (VIEW keys), and the compare view's
    `page_down`, `page_up`, `home`, `end` (its sides move together)."""
    for view in views:
        move = getattr(view, f"scroll_{direction}")
        move(animate=False)


def keys_of(key: Key, keymap: Mapping[str, str]) -> str:
    """The keys bound to `key` once the user's remaps are applied."""
    return keymap.get(key.id) or key.keys


def display(keys: str) -> str:
    """`question_mark,f1` → `? f1`, for people."""
    return " ".join(format_key(k.strip()) for k in keys.split(",") if k.strip())


def help_rows(keymap: Mapping[str, str], pane: Collection[str] = ()) -> list[tuple[str, str, str]]:
    """(id, keys as shown, what it does) for every key with keys, in the registry's order; with
    `pane` (scopes: TREE, HITS, TABLE, …), only the keys that work in or belong to that pane,
    its own keys before the moves."""
    rows = [
        (k.id, display(keys_of(k, keymap)), k.help)
        for k in KEYS
        if keys_of(k, keymap) and (not pane or set(pane) & {*k.scopes, *k.footer, *k.panes})
    ]
    if pane:
        rows.sort(key=lambda row: row[0] in MOVES)  # stable: the registry's order otherwise
    return rows


def palette_actions(keymap: Mapping[str, str]) -> list[tuple[str, str, str, str]]:
    """(id, title, help with its keys, action) for every key the command palette offers."""
    out = []
    for k in KEYS:
        if k.title:
            keys = keys_of(k, keymap)
            # a table's own key runs on the focused table, else the shown tab's (the app's
            # `table` action): the palette itself has the focus while it is open
            action = f"table({k.action!r})" if k.scopes == (TABLE,) else k.action
            out.append((k.id, k.title, f"{k.help} ({display(keys)})" if keys else k.help, action))
    return out


# Ctrl+C and Ctrl+Q always quit: no remap takes them (a clash would leave no way out) and none
# takes them from `quit` (Ctrl+Q is also Textual's own priority binding, which has no id)
QUIT_KEYS = ("ctrl+c", "ctrl+q")
KEY_NAME = re.compile(r"[A-Za-z0-9_]{1,30}(\+[A-Za-z0-9_]{1,30}){0,3}")


def checked_keymap(table: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The remaps to give Textual, and a line for each key name left out: names that are no
    Textual key name (`[/x]` would break the palette's markup, a lone surrogate the terminal
    driver) and Ctrl+C / Ctrl+Q anywhere but `quit`, which keeps Ctrl+C whatever it is given."""
    kept: dict[str, str] = {}
    notes: list[str] = []
    for key_id, value in table.items():
        names = []
        for name in (part.strip() for part in value.split(",")):
            if not KEY_NAME.fullmatch(name):
                notes.append(f"{name!r} for {key_id!r} is not a key name: ignored")
            elif name.lower() in QUIT_KEYS and key_id != "quit":
                notes.append(f"{name} for {key_id!r} ignored: Ctrl+C and Ctrl+Q quit")
            elif name not in names:
                names.append(name)
        if key_id == "quit" and "ctrl+c" not in (n.lower() for n in names):
            names.append("ctrl+c")
        if names:
            kept[key_id] = ",".join(names)
    return kept, notes


def unknown_ids(keymap: Mapping[str, str]) -> list[str]:
    return [key_id for key_id in keymap if key_id not in BY_ID]
