"""screenshots/browser.png: the demo served by `ari-mem-tui serve`, as Chromium shows it, in a
browser window's frame (its address bar naming the page).

    python scripts/browser_screenshot.py          # needs Debian's chromium + chromium-driver

The cached demo (40 nodes, seed 7: what `ari-mem-tui demo` opens, so the status line names
`~/.cache/ari-mem-tui/demo-n40-s7`, no temporary folder) is served on loopback port 8000 (any
free port when 8000 is taken) with MiniLM, the ranker its recordings were made with, loaded by
headless Chromium (1280×800) and photographed once MiniLM ranks and the page has settled, on
the node the app opens on. The frame is drawn by the same Chromium from a small HTML page.
"""

from __future__ import annotations

import base64
import html
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from browser_helpers import (
    chromium,
    free_port,
    missing_reason,
    served,
    settled_screenshot,
    wait_for_app,
)

PORT = 8000  # README's `serve` line
MINILM_WAIT_S = 12.0  # the served app loads MiniLM for its queries; BM25 stands in until then
FRAME = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #e9e9ec; }}
.window {{ display: inline-block; margin: 24px; border-radius: 10px; overflow: hidden;
  box-shadow: 0 8px 28px rgba(0, 0, 0, .28); background: #dee1e6; }}
.bar {{ display: flex; align-items: center; gap: 8px; padding: 10px 14px;
  font: 14px "DejaVu Sans", sans-serif; color: #3c4043; }}
.dot {{ width: 12px; height: 12px; border-radius: 50%; }}
.tab {{ background: #fff; border-radius: 8px 8px 0 0; padding: 6px 14px; margin-left: 12px; }}
.address {{ background: #fff; margin: 0 14px 8px; border-radius: 14px; padding: 6px 14px;
  font: 14px "DejaVu Sans", sans-serif; color: #202124; }}
img {{ display: block; }}
</style></head><body><div class="window" id="window">
<div class="bar"><span class="dot" style="background:#ff5f57"></span>
<span class="dot" style="background:#febc2e"></span>
<span class="dot" style="background:#28c840"></span>
<span class="tab">ari-mem-tui</span></div>
<div class="address">{url}</div>
<img src="data:image/png;base64,{png}" width="{width}" height="{height}">
</div></body></html>"""


def main(demo: Path | None = None) -> int:
    reason = missing_reason()
    if reason:
        print(f"cannot take the screenshot: {reason}", file=sys.stderr)
        return 2
    if demo is None:
        from ari_mem_tui.demo import demo_checkpoint
        from ari_mem_tui.search.record import MiniLMRecorder

        demo = demo_checkpoint(record=MiniLMRecorder())
    tmp = Path(tempfile.mkdtemp(prefix="ari-mem-tui-browser-shot-"))
    try:
        return _shoot(demo, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _port() -> int:
    import socket

    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", PORT))
        except OSError:
            return free_port()
    return PORT


def _shoot(demo: Path, tmp: Path) -> int:
    server = served(demo, tmp, embedder="minilm", port=_port())
    with server as (url, _server), chromium(1280, 800) as driver:
        driver.get(url)
        if not wait_for_app(driver):
            print("the app never drew in the page", file=sys.stderr)
            return 1
        time.sleep(MINILM_WAIT_S)
        shot = settled_screenshot(driver, quiet=3.0)
        framed = _framed(driver, tmp, url, shot)
    out = ROOT / "screenshots" / "browser.png"
    out.write_bytes(framed)
    print(out)
    return 0


def _framed(driver, tmp: Path, url: str, shot: bytes) -> bytes:
    """`shot` inside a browser window's frame whose address bar says `url`."""
    from selenium.webdriver.common.by import By

    width, height = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    page = tmp / "frame.html"
    page.write_text(
        FRAME.format(
            url=html.escape(url),
            png=base64.b64encode(shot).decode("ascii"),
            width=width,
            height=height,
        ),
        encoding="utf-8",
    )
    driver.get(page.as_uri())
    box = driver.execute_script(
        "const r = document.getElementById('window').getBoundingClientRect();"
        "return [Math.ceil(r.right) + 24, Math.ceil(r.bottom) + 24]"
    )
    # the page's viewport itself that size (a window's size leaves its chrome out of it)
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": box[0], "height": box[1], "deviceScaleFactor": 1, "mobile": False},
    )
    time.sleep(0.5)
    return driver.find_element(By.ID, "window").screenshot_as_png


if __name__ == "__main__":
    raise SystemExit(main())
