"""Serve the app with `ari-mem-tui serve` and drive it in Debian's Chromium, headless.

Selenium talks WebDriver to the chromedriver of Debian's `chromium-driver` package (given by
path, so Selenium never downloads a driver). Used by tests/test_browser.py and by
scripts/browser_screenshot.py (the README's picture). Every process started is stopped.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def chromium_paths() -> tuple[str | None, str | None]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/lib/chromium/chromedriver"
        if Path("/usr/lib/chromium/chromedriver").exists()
        else None
    )
    return browser, driver


def missing_reason() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    browser, driver = chromium_paths()
    if browser is None:
        return "Chromium is not installed (apt-get install chromium chromium-driver)"
    if driver is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(
    path: Path, env_dir: Path, embedder: str = "bm25", port: int | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`ari-mem-tui serve path` on `port` (default: a free loopback port); yields (url, the
    server process)."""
    port = port or free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["ARI_MEM_TUI_CONFIG_DIR"] = str(env_dir / "config")
    env["ARI_MEM_TUI_EXPORT_DIR"] = str(env_dir / "exports")
    env.pop("LETTA_BASE_URL", None)
    command = [sys.executable, "-m", "ari_mem_tui", "serve", str(path), "--port", str(port)]
    log = (env_dir / "serve.log").open("wb")
    proc = subprocess.Popen(
        [*command, "--embedder", embedder],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its app processes share the group: one kill stops all
        preexec_fn=_END_WITH_PARENT,  # noqa: PLW1509 - one C call, no lock (above)
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited {proc.returncode}: {log_text(env_dir)}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"serve did not answer on {url}: {log_text(env_dir)}")
            time.sleep(0.2)
        yield url, proc
    finally:
        stop_group(proc)
        log.close()


def _parent_death_signal() -> Callable[[], None] | None:
    """What the server's process runs before it starts: SIGTERM to it when the test process
    ends without reaching `stop_group` (a suite cut short by `timeout`); the server's own
    SIGTERM handler then stops its apps (Linux's PR_SET_PDEATHSIG; elsewhere None). Resolved
    here, so that the forked child only calls one C function (no import, no lock)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


_END_WITH_PARENT = _parent_death_signal()


def log_text(env_dir: Path) -> str:
    try:
        return (env_dir / "serve.log").read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, SIGKILL after 10 s; waits for the server."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the server is gone; its app processes may linger a moment
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        wait_for(lambda: group_gone(proc.pid), 10, 0.1)
        return


@contextmanager
def chromium(width: int = 1280, height: int = 800):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(predicate, timeout: float, step: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def wait_for_app(driver, timeout: float = 60) -> bool:
    """True once the app's first bytes reached the page's terminal."""
    return bool(
        wait_for(
            lambda: (
                "-first-byte"
                in (driver.find_element("tag name", "body").get_attribute("class") or "")
            ),
            timeout,
        )
    )


def settled_screenshot(driver, quiet: float = 1.5, timeout: float = 60) -> bytes:
    """A screenshot once the page has not changed for `quiet` seconds (the app has drawn)."""
    last, since = driver.get_screenshot_as_png(), time.monotonic()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        shot = driver.get_screenshot_as_png()
        if shot != last:
            last, since = shot, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last


def press(driver, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    # keys go to xterm.js's hidden textarea; a click would also be a mouse event for the app
    driver.execute_script(
        "const t = document.querySelector('.xterm-helper-textarea'); if (t) { t.focus(); }"
    )
    ActionChains(driver).send_keys(keys).perform()
