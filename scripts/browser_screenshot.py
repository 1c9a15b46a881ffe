"""screenshots/browser.png: the demo served by `ari-mem-tui serve`, as Chromium shows it.

    python scripts/browser_screenshot.py          # needs Debian's chromium + chromium-driver

The demo (40 nodes, seed 7) is written to a temporary folder, served on a free loopback port,
loaded by headless Chromium (1280×800), and photographed once the app has drawn and settled.
The folder's name is always the same (the status bar shows it), so that an unchanged screen
gives an unchanged picture.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser_helpers import (
    chromium,
    missing_reason,
    press,
    served,
    settled_screenshot,
    wait_for_app,
)


def main() -> int:
    reason = missing_reason()
    if reason:
        print(f"cannot take the screenshot: {reason}", file=sys.stderr)
        return 2
    tmp = Path(tempfile.gettempdir()) / "ari-mem-tui-browser-shot"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        return _shoot(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _shoot(tmp: Path) -> int:
    demo = tmp / "20260528180541_demo"
    subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "demo", "--out", str(demo)],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=ROOT,
    )
    with served(demo, tmp) as (url, _server), chromium(1280, 800) as driver:
        driver.get(url)
        if not wait_for_app(driver):
            print("the app never drew in the page", file=sys.stderr)
            return 1
        settled_screenshot(driver, quiet=3.0)
        press(driver, "jj")  # a node below the root: its hits fill the right side
        shot = settled_screenshot(driver, quiet=3.0)
    out = ROOT / "screenshots" / "browser.png"
    out.write_bytes(shot)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
