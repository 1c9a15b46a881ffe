"""Make every screenshot in `screenshots/` from the current app, in one run: the SVGs of the main
views of the default demo run, a PNG of each, and `browser.png` (the demo served to Chromium,
in a browser's frame: scripts/browser_screenshot.py).

    python scripts/screenshots.py [--out screenshots] [--embedder minilm|bm25] [--no-browser]

Generates (or reuses) the cached demo checkpoint, as `ari-mem-tui demo` does, opens the TUI
headless at 120×36 (hits.png 120×64, its findings whole) where `ari-mem-tui CKPT` opens it (the first node with an audit finding),
waits for the vectors and every search, and saves one SVG per view, each showing what its
name says (checked here: the script stops when a view lacks it), and beside each a PNG drawn by
headless Chromium, which keeps every space and draws wide characters (rsvg-convert drops runs
of spaces). Fira Code, the SVG's font, draws ✓ as √: the SVGs take ✓ and ✗ from DejaVu Sans
Mono. Debian packages: chromium, chromium-driver, fonts-firacode, fonts-noto-cjk,
fonts-dejavu-core; without Chromium only the SVGs are written, and the script says so.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# this checkout's code, not an installed copy (`python scripts/…` puts scripts/ first)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ari_mem_tui.demo import read_marker
from ari_mem_tui.run import Run, RunOptions, open_run
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.screens.why import WhyScreen
from ari_mem_tui.tui.tables import TableFilter, VimTable

SIZE = (120, 36)
TALL = (120, 64)  # hits.png: the opening node's hits, findings and preview, none under another
SOURCE = "files: ~/.cache/ari-mem-tui/demo-n40-s7"  # as the status line says it on any machine
# ✓ and ✗ from DejaVu Sans Mono: Fira Code's ✓ reads as a square root (√)
MARKS_FONT = """
    @font-face {
        font-family: "ari-marks";
        src: local("DejaVu Sans Mono"), local("DejaVuSansMono");
        unicode-range: U+2713, U+2717;
    }
"""


def other_branch_node(run: Run, target: str) -> str:
    """A deep node of another branch than `target`'s, with hits, to compare it with."""
    from ari_mem_tui.search.replay import replay

    ckpt = run.checkpoint

    def branch(node_id: str) -> str:
        lineage = ckpt.lineage(node_id)
        return lineage[1] if len(lineage) > 1 else lineage[0]

    candidates = []
    for node in ckpt.nodes.values():
        if branch(node.id) == branch(target) or (node.depth or 0) < 2:
            continue
        hits = len(replay(ckpt, node.id, run.ranker, with_tiers=False).hits)
        candidates.append((hits, min(node.depth or 0, 4), node.id))
    return max(candidates)[2] if candidates else target


async def settle(app: AriMemApp, pilot) -> None:
    """Until loaded, vectors ready (MiniLM, not its BM25 stand-in) and no worker runs."""
    while True:
        busy = any(w.is_running for w in app.workers)
        ranker = app.run_data.ranker if app.run_data else None
        ready = ranker is not None and getattr(ranker, "ready", True)
        if app.loaded_count and ready and not busy:
            break
        await pilot.pause(0.1)
    await pilot.pause(0.2)
    app.clear_notifications()
    await pilot.pause()


def check(ok: bool, what: str) -> None:
    """A picture must show what its name says: stop, naming what is missing."""
    if not ok:
        raise SystemExit(f"screenshots: {what}")


def readable_row(table: VimTable) -> int:
    """The first row whose text is prose, not a tool's JSON (the preview below shows it)."""
    for index, (_, cells) in enumerate(table.shown_rows):
        text = str(cells[-1] or "")
        if "{" not in text[:80]:
            return index
    return 0


async def shoot(path: Path, out: Path, embedder: str) -> list[Path]:
    args = RunOptions(checkpoint=path, embedder=embedder)

    def opener(_progress) -> Run:
        run = open_run(args)
        run.source_label = SOURCE
        return run

    # as `ari-mem-tui CKPT` opens: on the first node with an audit finding
    app = AriMemApp(
        opener, theme="textual-dark", remember_theme=False, blink=False, open_useful=True
    )
    saved: list[Path] = []
    async with app.run_test(size=SIZE) as pilot:

        async def keys(*names: str) -> None:
            for name in names:  # one at a time, as a person presses commands (tui/typing_guard.py)
                app.typing_guard.typeahead.forget()
                await pilot.press(name)
                await pilot.pause(0.1)
            await settle(app, pilot)

        def save(name: str) -> None:
            file = out / f"{name}.svg"
            app.save_screenshot(filename=file.name, path=str(out))
            saved.append(file)

        await settle(app, pilot)
        opened = None
        while opened != app.current_id:  # until the audit has moved it to its finding
            opened = app.current_id
            await pilot.pause(0.5)
            await settle(app, pilot)
        assert app.run_data is not None and app.current_id is not None
        target = app.current_id  # where the app opens
        other = other_branch_node(app.run_data, target)
        hits = app.query_one("#hits-pane")

        # compare: mark a node of another branch first, then come back to the target
        app.main.jump_to(other)
        await settle(app, pilot)
        await keys("m")
        app.main.jump_to(target)
        await settle(app, pilot)
        check(bool(app.main.tabs.findings.get(target)), f"{target} opened on has no finding")
        await keys("1")
        await pilot.resize_terminal(*TALL)  # the findings (the read, what it returned) whole
        await settle(app, pilot)
        findings = app.query_one("#hits-findings")
        hits.scroll_home(animate=False)
        await settle(app, pilot)
        preview = app.query_one("#hits-preview")
        check(
            hits.scroll_y == 0 and findings.region.bottom <= preview.region.y,
            f"the hits' findings are cut: {findings.region}, the preview at {preview.region}",
        )
        save("hits")
        await pilot.resize_terminal(*SIZE)
        await settle(app, pilot)
        for key, name in (
            ("2", "saw"),
            ("3", "core"),
            ("4", "writes"),
            ("5", "node"),
            ("6", "audit"),
        ):
            await keys(key)
            save(name)
        # a table questioned: the whole run's writes, `/` ✗ (the rejected ones and their logs),
        # `S S` (by time, newest first); the title counts and names both
        await keys("4", "w", "right_square_bracket", "slash")
        app.query_one(TableFilter).insert_text_at_cursor("✗")  # (typed: no key name for it)
        await keys("enter", "S", "S")
        writes = app.query_one("#writes-table", VimTable)
        check(0 < writes.row_count < writes.total_rows, "the writes' filter kept no row or all")
        save("writes-filter")
        await keys("escape", "w", "left_square_bracket")
        await keys("1", "M")  # missed entries shown, the list in sight
        missed = app.query_one("#missed-table", VimTable)
        check(missed.row_count > 0, f"{target} has no missed entry to show")
        missed.focus()
        hits.scroll_to_widget(app.query_one("#missed-title"), animate=False, top=True)
        await settle(app, pilot)
        save("hits-missed")
        # why the node missed the entry under the cursor, its search step by step: `Y` asks
        # about the marked node (of another branch) first, `Y` again about this one
        await keys("Y")
        why = app.screen
        check(isinstance(why, WhyScreen), f"Y opened {type(why).__name__}, not the why view")
        while why.answer is None or why.answer.node_id != target:
            if why.answer is not None:
                await keys("Y")
            await pilot.pause(0.2)
        await settle(app, pilot)
        check(why.answer.verdict == "window", f"a missed entry's verdict: {why.answer.verdict}")
        save("why")
        await keys("escape")
        await keys("M", "left_square_bracket")
        await keys("d", "c")  # dim what the search could not see; compare with the mark
        save("compare")
        await keys("escape", "question_mark")
        save("help")
        await keys("escape")
        # the demo's one node whose recorded search a replay cannot match (a late insert):
        # wide (`z`), so the diff column says what moved in words, on a row of prose
        planted = (read_marker(path) or {}).get("recordings_differ") or []
        check(bool(planted), "the demo plants no node whose recording differs")
        app.main.jump_to(planted[0])
        await settle(app, pilot)
        await keys("1", "z")
        table = app.query_one("#hits-table", VimTable)
        table.focus()
        table.move_cursor(row=readable_row(table))
        await settle(app, pilot)
        hits.scroll_home(animate=False)  # the query and pool above the table, in sight
        await settle(app, pilot)
        diffs = [table.get_row_at(i)[5].plain for i in range(table.row_count)]
        check(any("→" in d and "…" not in d for d in diffs), f"no diff in words: {diffs}")
        save("hits-marks")
        await keys("z")
    return saved


async def shoot_runs(demo: Path, out: Path) -> Path:
    """runs.svg: the run picker on a workspace of three demo runs (the default one and two of
    other seeds), as first opens leave them: the default one summarized with its replay check
    (`summary --embedder minilm`), one summarized unchecked, one not yet; its legend says what
    the replay column's counts are and which ranker made them."""
    import argparse as _argparse

    from ari_mem_tui.cli.commands import run_openers
    from ari_mem_tui.tui.screens.runs import RunPickerScreen

    ws = Path(tempfile.gettempdir()) / "ari-mem-tui-workspace"
    shutil.rmtree(ws, ignore_errors=True)
    runs = ws / "checkpoints"
    shutil.copytree(demo, runs / "20260528210232_demo")
    env = {**os.environ, "ARI_MEM_TUI_DETACH": "0"}  # (each summary kept before the picker reads)

    def cli(*argv: str) -> None:
        subprocess.run([sys.executable, "-m", "ari_mem_tui", *argv], env=env, check=True,
                       capture_output=True)  # fmt: skip

    for seed, stamp in ((11, "20260601090000"), (12, "20260603140000")):
        cli("demo", "--out", str(runs / f"{stamp}_seed{seed}"), "--nodes", "30", "--seed",
            str(seed), "--recordings", "keywords")  # fmt: skip
    cli("summary", str(runs / "20260528210232_demo"), "--embedder", "minilm")
    cli("summary", str(runs / "20260601090000_seed11"), "--embedder", "bm25")
    opener = run_openers(_argparse.Namespace(checkpoint=ws, embedder="bm25"))
    app = AriMemApp(None, workspace=ws, run_factory=opener, theme="textual-dark",
                    remember_theme=False, blink=False)  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        while not (isinstance(app.screen, RunPickerScreen) and app.screen.counted):
            await pilot.pause(0.1)
        await pilot.pause(0.3)
        legend = str(app.screen.query_one("#runs-legend").render())
        check("replayed by minilm (1 run)" in legend, f"no ranker in the legend: {legend}")
        file = out / "runs.svg"
        app.save_screenshot(filename=file.name, path=str(out))
    return file


def with_marks_font(svg: Path) -> None:
    """The SVG's ✓ and ✗ drawn from DejaVu Sans Mono (Fira Code first for everything else)."""
    text = svg.read_text(encoding="utf-8")
    if "ari-marks" in text:
        return
    text = text.replace("<style>", "<style>" + MARKS_FONT, 1)
    text = re.sub(
        r"font-family: Fira Code, monospace;",
        'font-family: "ari-marks", Fira Code, monospace;',
        text,
    )
    svg.write_text(text, encoding="utf-8")


def png_of(svg: Path) -> Path | None:
    """The SVG as a PNG of its own size, drawn by headless Chromium; None without Chromium."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        return None
    match = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg.read_text(encoding="utf-8"))
    width, height = (math.ceil(float(v)) for v in match.groups()) if match else (1482, 929)
    png = svg.with_suffix(".png")
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            svg.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return png


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent.parent / "screenshots"
    )
    parser.add_argument("--embedder", choices=["minilm", "bm25"], default="minilm")
    parser.add_argument("--no-browser", action="store_true", help="leave browser.png as it is")
    args = parser.parse_args()
    os.environ.setdefault("ARI_MEM_TUI_CONFIG_DIR", tempfile.mkdtemp(prefix="ari-mem-tui-cfg-"))
    from ari_mem_tui.demo import demo_checkpoint
    from ari_mem_tui.search.record import MiniLMRecorder

    path = demo_checkpoint(record=MiniLMRecorder())  # as `ari-mem-tui demo` makes it
    args.out.mkdir(parents=True, exist_ok=True)
    shots = asyncio.run(shoot(path, args.out, args.embedder))
    shots.append(asyncio.run(shoot_runs(path, args.out)))
    for file in shots:
        with_marks_font(file)
        png = png_of(file)
        print(file, png or "(no PNG: Chromium not found)")
    if args.no_browser:
        return 0
    import browser_screenshot  # beside this script; needs chromium-driver

    return browser_screenshot.main(path)


if __name__ == "__main__":
    raise SystemExit(main())
