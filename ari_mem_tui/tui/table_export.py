"""`x` on a table: its rows as CSV, asked first and naming the file, as `e` asks for a dossier.

The rows are the ones the table shows (its filter, its order), every column in full
(render/table.py `csv_text`: formulas and escapes defused). The file goes where dossiers go
(tui/config.py `export_dir`: never the current directory, never the checkpoint).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text

from ari_mem_tui.render.table import csv_name, csv_text, write_csv
from ari_mem_tui.render.text import short_id
from ari_mem_tui.tui import config
from ari_mem_tui.tui.screens.confirm import ConfirmScreen
from ari_mem_tui.tui.tables import VimTable

NODE_TABLES = {"hits-table", "missed-table", "recorded-table", "writes-table"}  # one node's rows


def where(app: Any, table: VimTable) -> tuple[Path, str, str]:
    """(the run's folder or the workspace, the file name's place part, the exact key hashed)."""
    ckpt = app.ckpt
    if ckpt is None:  # the run picker, no run open
        folder = Path(app.workspace or ".")
        return folder, _readable(folder.resolve().name)[:20], str(folder.resolve())
    from ari_mem_tui.render.dossier import run_short  # noqa: PLC0415 - with an export

    run = ckpt.run_id or str(Path(ckpt.path).resolve())
    node = app.current_id if table.id in NODE_TABLES else None
    whole = table.id == "writes-table" and bool(getattr(table.parent, "whole_run", False))
    if node and not whole:
        return Path(ckpt.path), f"{_readable(short_id(node))}-{run_short(ckpt)}", f"{run}\0{node}"
    return Path(ckpt.path), run_short(ckpt), run


def _readable(value: str) -> str:
    from ari_mem_tui.render.dossier import readable  # noqa: PLC0415

    return readable(value)


def ask_and_write(app: Any, table: VimTable) -> None:
    """Name the file, ask, and write it on `y` (any other key: nothing)."""
    columns, rows = table.columns_filled, list(table.shown_rows)
    what = (table.id or "table").removesuffix("-table")
    folder, place, key = where(app, table)
    out_dir = config.export_dir(folder, app.export_to)
    path = out_dir / csv_name(what, place, key, table.view)
    words = table.view_words() or f"all {len(rows):,} rows"
    question = Text.assemble((f"Write the {what} table as CSV ({words})?\n", "bold"), f"{path}")

    def answered(yes: bool | None) -> None:
        if not yes:
            app.notify("CSV export cancelled")
            return
        try:
            write_csv(path, csv_text(columns, rows))
        except OSError as exc:
            app.notify(f"CSV export failed: {exc}", severity="error")
            return
        app.last_csv = path
        app.notify(f"{path}", title=f"{len(rows):,} rows written", timeout=8)

    app.push_screen(ConfirmScreen(question), answered)
