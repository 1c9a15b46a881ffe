"""Turning run data into `rich.text.Text` that is safe to put on a terminal.

Memory text, node names and metrics come from files and servers we do not control. They are
never parsed as Rich markup (every builder here returns `Text`), and control characters are
replaced by visible stand-ins, so an entry holding `\\x1b[2J` shows as `␛[2J` instead of
clearing the screen.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from ari_mem_tui.model import Node
from ari_mem_tui.model.secrets import mask
from ari_mem_tui.render.indented import indented

# bidi overrides, isolates and marks can reorder what the user reads; lone surrogates cannot be
# encoded at all; show them all as visible code points instead
_INVISIBLE = (
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x200E,
    0x200F,
    0x061C,
    *range(0xD800, 0xE000),
)
_BIDI = {cp: f"<U+{cp:04X}>" for cp in _INVISIBLE}


def _build_table(keep_newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {cp: chr(0x2400 + cp) for cp in range(0x20)}  # ␀ … ␟
    table[0x7F] = "␡"
    table.update({cp: f"<{cp:02X}>" for cp in range(0x80, 0xA0)})  # C1 controls (CSI = 0x9B)
    table.update(_BIDI)
    table[0x09] = "    " if keep_newlines else " "
    if keep_newlines:
        table[0x0A] = "\n"
        table[0x0D] = ""
    else:
        table[0x0A] = " ⏎ "
        table[0x0D] = ""
    for cp in (0x2028, 0x2029):  # line / paragraph separators: a line break, like \n
        table[cp] = table[0x0A]
    return table


_MULTILINE = _build_table(keep_newlines=True)
_ONE_LINE = _build_table(keep_newlines=False)


def clean(text: object, multiline: bool = True) -> str:
    """`text` as a string whose control characters are harmless visible symbols."""
    return str(text if text is not None else "").translate(_MULTILINE if multiline else _ONE_LINE)


_PASTE = {**_MULTILINE, 0x09: "\t"}  # a pasted text keeps its tabs and line breaks


def paste_safe(text: str) -> tuple[str, int]:
    """`text` as it may go to the clipboard, and how many characters were replaced: a paste
    runs whatever escapes it holds (ESC, OSC, C1 such as CSI U+009B), bidi controls reorder
    what is read, a lone surrogate cannot be encoded at all; each becomes its visible
    stand-in, as on screen (`clean`)."""
    safe = text.translate(_PASTE)
    changed = 0 if safe == text else sum(1 for ch in text if ord(ch) in _PASTE and ch not in "\t\n")
    return safe, changed


# inside JSON strings (the only place they can be: JSON's own syntax is ASCII), every character
# `clean` would replace is written as a \uXXXX escape: the data stays exact, the terminal safe
_JSON_UNSAFE = re.compile(
    r"[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def json_text(value: Any) -> str:
    """`value` as indented JSON that is safe to print: C0 (by json itself), C1, bidi controls and
    lone surrogates escaped as \\uXXXX, everything else as the UTF-8 text it is."""
    text = indented(value, default=str)  # (json.dumps(indent=2, default=str), faster)
    if text.isascii() and "\x7f" not in text:  # (C checks: the scan below is the slow part)
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def say(message: object, stream: Any = None) -> None:
    """One line of a message on stderr (or `stream`), made terminal-safe: messages quote paths,
    node ids and server text, any of which may hold escapes."""
    text = mask(clean(message, multiline=False))  # no credential the tool was given, in any form
    print(f"ari-mem-tui: {text}", file=stream or sys.stderr)


def preview(text: object, width: int = 80) -> str:
    """One line of at most `width` terminal cells (CJK counts double), for table cells. Only
    the start of a long text is cleaned: a table of 2,000 memory texts is filled at a key."""
    raw = str(text if text is not None else "").lstrip()
    cut = len(raw) > width + 1
    line = clean(raw[: width + 1], multiline=False).strip()
    if not cut and (len(line) <= width // 2 or cell_len(line) <= width):
        return line
    return set_cell_size(line[: width + 1], max(0, width - 1)).rstrip() + "…"


def safe_text(text: object, style: str = "", multiline: bool = True) -> Text:
    """A `Text` that shows `text` literally: no markup, no escapes."""
    return Text(clean(text, multiline=multiline), style=style)


STATUS_GLYPHS: dict[str, tuple[str, str]] = {
    "success": ("✓", "green"),
    "failed": ("✗", "red"),
    "running": ("●", "yellow"),  # not ▶: the tree draws ▶ before a closed line
    "pending": ("○", "bright_black"),
    "abandoned": ("⊘", "bright_black"),
}
LABEL_COLOURS: dict[str, str] = {
    "draft": "dodger_blue1",
    "improve": "medium_purple1",
    "debug": "red3",
    "ablation": "dark_orange",
    "validation": "green3",
}


UNKNOWN_STATUS = ("?", "magenta")


def status_glyph(status: str | None) -> tuple[str, str]:
    return STATUS_GLYPHS.get(status or "", UNKNOWN_STATUS)


def label_style(label: str | None) -> str:
    return LABEL_COLOURS.get(label or "", "")


def score_text(score: float | None) -> Text:
    """The score with a colour scale: low red, middle yellow, high green."""
    if score is None:
        return Text("  – ", style="bright_black")
    colour = "green" if score >= 0.66 else "yellow" if score >= 0.33 else "red"
    return Text(f"{score:.2f}", style=colour)


def metric_text(value: float | None, rank: float) -> Text:
    """A metric in a score's place: its shortest form in at most 6 cells, coloured by `rank`
    (0.0 the run's worst, 1.0 its best) on the score's scale."""
    if value is None:
        return Text("  – ", style="bright_black")
    shown = f"{value:.3g}"
    if len(shown) > 6:
        shown = f"{value:.0e}"
    colour = "green" if rank >= 0.66 else "yellow" if rank >= 0.33 else "red"
    return Text(f"{shown:>4}", style=colour)


def short_id(node_id: str) -> str:
    """The last 8 characters (as ARI's dashboard shows), "root" for `node_<run>_root`."""
    if node_id.endswith("_root"):
        return "root"
    return clean(node_id[-8:], multiline=False)


LABEL_SHORT = {"ablation": "ablate", "validation": "valid"}
LABEL_TINY = {
    "draft": "drf",
    "improve": "imp",
    "debug": "dbg",
    "ablation": "abl",
    "validation": "val",
}


def node_label(
    node: Node, writes: int, width: int | None = None, tiny: bool = False, value: Text | None = None
) -> Text:
    """The tree label of a node: glyph, short id, label, score (or `value`, the run's main
    metric where the run has no score: render/opening.py), memory write count; in `width`
    cells when given. A narrow tree never cuts a number (`0.5` for 0.52, `✎6` for ✎68 would
    read as other values): the label is shortened (`improve` → `imp`; `tiny`: always, so a
    narrow tree's rows read alike), then the write count, the label and the score are left
    out, in that order, and only then is the id cut, with a `…` where it is cut."""
    glyph, colour = status_glyph(node.status)
    name = node.label or "?"
    head = Text.assemble((glyph, colour), " ", (short_id(node.id), "bold"))
    score = Text.assemble(" ", value if value is not None else score_text(node.score))
    count = Text(f" ✎{writes}", style="cyan") if writes else Text("")
    style = label_style(node.label)
    full = Text.assemble(" ", (f"{preview(LABEL_SHORT.get(name, name), 7):<7}", style))
    short = Text.assemble(" ", (f"{preview(LABEL_TINY.get(name, name), 3):<3}", style))
    label = short if tiny else full
    for parts in ((label, score, count), (short, score, count), (short, score), (score,), ()):
        text = Text.assemble(head, *parts)
        if width is None or text.cell_len <= width:
            return text
    if width <= 1:
        return Text("…")
    head.truncate(width - 1)
    return head.append("…", style="bright_black")


TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"  # the one way a time is shown, its zone named


def fmt_ts(ts: float | None) -> str:
    """Epoch seconds as `2026-05-28 21:52:06 UTC`: one format, in UTC, everywhere a time is
    shown (a fixed zone: what one person reads out, another can find; screenshots do not
    depend on TZ). A time no calendar can hold (ts 1e20 in a hostile log) is the number."""
    if ts is None:
        return "–"
    try:
        return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime(TIME_FORMAT)
    except (OverflowError, OSError, ValueError):
        return str(ts)


def fmt_iso(value: str | None) -> str:
    """An ISO-8601 string from tree.json in the same format as `fmt_ts` (a naive one is UTC, as
    ARI writes it); one that is no time is shown as it is (never "Invalid Date")."""
    if not value:
        return "–"
    try:
        parsed = _dt.datetime.fromisoformat(value)
        if parsed.tzinfo is not None:  # (9999-12-31T23:59:59-14:00 is past year 9999 in UTC)
            parsed = parsed.astimezone(_dt.UTC)
    except (ValueError, OverflowError):
        return preview(value, 40)
    return parsed.strftime(TIME_FORMAT)  # a naive one is UTC, as ARI writes it


def metric_number(value: float) -> str:
    """A metric as the run wrote it (13.34, 1e-07: its shortest exact form), cut to 6
    significant digits only when that is long (a computed 0.30000000000000004). A fixed
    number of decimals showed 13.3400 and turned 1e-07 into 0.0000."""
    exact = repr(value)
    return exact if len(exact) <= 12 else f"{value:.6g}"


def pretty_json(value: Any) -> str:
    """JSON with indentation; json escapes control characters itself."""
    try:
        return indented(value, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)
