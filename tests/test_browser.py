"""The TUI in a real browser: `ari-mem-tui serve` loaded by Debian's Chromium, headless.

Skipped, with the reason, only where Chromium, its driver or selenium is missing (.ci/run
installs Chromium from Debian's packages). Keys pressed in the page must reach the app: `e`
writes the node's dossier (a file appears), `H` opens the Health view (the page changes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import (
    chromium,
    group_gone,
    missing_reason,
    press,
    served,
    settled_screenshot,
    wait_for,
    wait_for_app,
)

REASON = missing_reason()


def dossiers(folder):
    """The dossiers written, not the hidden temp file one is written into before its rename
    (`*.md` matches it too, and it is gone by the time it would be read)."""
    return sorted(p for p in folder.glob("*.md") if not p.name.startswith("."))


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_served_app_answers_keys_in_chromium_and_every_process_stops(small_ckpt, tmp_path):
    exports = tmp_path / "exports"
    with served(small_ckpt, tmp_path) as (url, server), chromium() as driver:
        driver.get(url)
        assert wait_for_app(driver), "the app never drew in the page"
        before = settled_screenshot(driver)
        press(driver, "e")  # export the selected node's dossier: it asks first, y writes
        settled_screenshot(driver)
        press(driver, "y")
        written = wait_for(lambda: dossiers(exports), timeout=60)
        assert written, "pressing e in the page wrote no dossier"
        text = written[0].read_text(encoding="utf-8")
        node_short = written[0].name.split("-")[0]  # <node short id>-<run short>-<hash>.md
        assert node_short in text  # the node the served app opened on: a useful one
        press(driver, "H")
        after = settled_screenshot(driver)
        assert after != before, "pressing H changed nothing on the page"
        (tmp_path / "health.png").write_bytes(after)
    assert group_gone(server.pid)  # the server and the app processes it started are gone
    assert server.returncode is not None


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_served_workspace_opens_on_the_picker_and_enter_opens_a_run(tmp_path):
    from workspace_helpers import RUNS, make_workspace

    root = make_workspace(tmp_path / "ws")
    exports = tmp_path / "exports"
    with served(root, tmp_path) as (url, server), chromium() as driver:
        driver.get(url)
        from selenium.webdriver.common.keys import Keys

        assert wait_for_app(driver), "the run picker never drew in the page"
        picker = settled_screenshot(driver)
        press(driver, Keys.ENTER)  # the newest run, first row, opens in the same page
        assert settled_screenshot(driver) != picker, "Enter on the picker changed nothing"
        press(driver, "e")  # it asks first, y writes
        settled_screenshot(driver)
        press(driver, "y")
        written = wait_for(lambda: dossiers(exports), timeout=60)
        assert written, "Enter on the picker opened no run (e wrote no dossier)"
        assert RUNS[2] in written[0].read_text(encoding="utf-8")  # the newest run, first row
    assert group_gone(server.pid)


def test_serve_refuses_a_folder_that_is_no_run(tmp_path, capsys):
    from ari_mem_tui.cli import main

    (tmp_path / "plain").mkdir()
    assert main(["serve", str(tmp_path / "plain")]) == 2
    assert "neither an ARI run" in capsys.readouterr().err


def test_a_non_loopback_bind_is_warned_about():
    from ari_mem_tui.tui.serve import app_command, exposure_warning

    assert exposure_warning("127.0.0.1", 8000) is None
    assert exposure_warning("localhost", 8000) is None
    assert exposure_warning("::1", 8000) is None
    warning = exposure_warning("0.0.0.0", 8000)
    assert warning and "anyone who can reach" in warning and "memory" in warning
    command = app_command(Path("/tmp/some run"), "bm25")
    assert "'/tmp/some run'" in command and command.endswith("--embedder bm25")
