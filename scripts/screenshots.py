"""Make every screenshot in `screenshots/` from the current app, in one run: the SVGs of the main
views of the default demo run, a PNG of each, and `browser.png` (the demo served to Chromium,
scripts/browser_screenshot.py).

    python scripts/screenshots.py [--out screenshots] [--embedder minilm|bm25] [--no-browser]

Generates (or reuses) the cached demo checkpoint, opens the TUI headless at 120×36, waits for
the vectors and every search, and saves one SVG per main view, and beside each a PNG rendered by
headless Chromium, which keeps every space and draws wide characters (rsvg-convert drops runs of
spaces). Debian packages: chromium, fonts-firacode, fonts-noto-cjk; without Chromium only the
SVGs are written, and the script says so.
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

SIZE = (120, 36)


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


def hero(app: AriMemApp) -> str | None:
    """The first node (tree order) that both read outside its lineage and had a write
    rejected: every kind of finding on one screen."""
    from ari_mem_tui.render.opening import tree_order

    marks = app.tree_widget.findings
    ckpt = app.ckpt
    if ckpt is None:
        return None
    return next((n for n in tree_order(ckpt) if len(marks.get(n, ())) == 2), None)


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


async def shoot(path: Path, out: Path, embedder: str) -> list[Path]:
    args = RunOptions(checkpoint=path, embedder=embedder)

    def opener(_progress) -> Run:
        run = open_run(args)
        run.source_label = "files: ~/.cache/ari-mem-tui/demo-n40-s7"
        return run

    # as `ari-mem-tui CKPT` opens: on the first node with an audit finding (the hero)
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

        await settle(app, pilot)
        opened = None
        while opened != app.current_id:  # until the audit has moved it to its finding
            opened = app.current_id
            await pilot.pause(0.5)
            await settle(app, pilot)
        assert app.run_data is not None and app.current_id is not None
        target = hero(app) or app.current_id
        other = other_branch_node(app.run_data, target)

        def save(name: str) -> None:
            file = out / f"{name}.svg"
            app.save_screenshot(filename=file.name, path=str(out))
            saved.append(file)

        # compare: mark a node of another branch first, then the target
        app.jump_to(other)
        await settle(app, pilot)
        await keys("m")
        app.jump_to(target)
        await settle(app, pilot)
        for key, name in (
            ("1", "hits"),
            ("2", "saw"),
            ("3", "core"),
            ("4", "writes"),
            ("5", "node"),
            ("6", "audit"),
        ):
            await keys(key)
            save(name)
        await keys("1", "M")  # missed entries shown
        save("hits-missed")
        await keys("d", "c")  # dim what the search could not see; compare with the mark
        save("compare")
        await keys("escape", "question_mark")
        save("help")
        # the demo's one node whose recorded search a replay cannot match (a late insert)
        planted = (read_marker(path) or {}).get("recordings_differ") or []
        if planted:
            await keys("escape")
            app.jump_to(planted[0])
            await settle(app, pilot)
            await keys("1", "M")  # the missed list off again: the recording below the hits
            save("hits-marks")
    return saved


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
    for file in asyncio.run(shoot(path, args.out, args.embedder)):
        png = png_of(file)
        print(file, png or "(no PNG: Chromium not found)")
    if args.no_browser:
        return 0
    import browser_screenshot  # beside this script; needs chromium-driver

    return browser_screenshot.main()


if __name__ == "__main__":
    raise SystemExit(main())
