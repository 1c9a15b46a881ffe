"""The last crashes and catch-alls of issue 22 §3, in the TUI and the CLI.

TUI cases run the real app headless and press real keys; CLI cases run the real command in a
child process. Mode-000 files are unreadable to root only without its capabilities, so those
children run under `setpriv` (tests/hostile_helpers.py `run_cli(unprivileged=True)`).
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ari_mem_tui.tui import config
from tests.hostile_helpers import (
    ROOT,
    clean_stderr,
    fingerprint,
    one_line_error,
    run_cli,
    wait_for_page,
)
from tests.tui_app_helpers import make_app, settle
from tests.tui_helpers import IDS

# ---------------------------------------------------------------- TUI


def set_node_field(ckpt: Path, node_id: str, **fields: object) -> None:
    tree = json.loads((ckpt / "tree.json").read_text())
    for node in tree["nodes"]:
        if node["id"] == node_id:
            node.update(fields)
    (ckpt / "tree.json").write_text(json.dumps(tree))


async def test_a_date_past_year_9999_in_utc_shows_on_the_node_tab(tiny: Path) -> None:
    set_node_field(tiny, IDS["B1"], created_at="9999-12-31T23:59:59-14:00")
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(IDS["B1"])
        await settle(pilot)
        await pilot.press("5")  # was: OverflowError in the date formatter, a traceback
        await settle(pilot)
        assert app.is_running
        body = str(app.screen.query_one("#node-body").render())
        assert "9999-12-31T23:59:59-14:00" in body


async def test_a_score_past_a_floats_range_opens_the_tree_without_one(tiny: Path) -> None:
    """`_scientific_score` of 401 digits (under the 4,300-digit limit): float() of it raised
    OverflowError while the tree drew B1's row, and the app died with a traceback."""
    set_node_field(tiny, IDS["B1"], metrics={"_scientific_score": 10**400})
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(IDS["B1"])
        await settle(pilot)
        assert app.ckpt is not None and app.ckpt.nodes[IDS["B1"]].score is None
        await pilot.press("5")
        await settle(pilot)
        assert app.is_running and app.current_id == IDS["B1"]


async def test_a_node_whose_parent_is_not_in_the_tree_opens_as_a_root(tiny: Path) -> None:
    """B left out of tree.json (a save before it, a damaged copy): B1 is drawn as a root, its
    ancestor_ids still naming B. Revealing B1 walked those ids and looked B up in the tree:
    KeyError while the run was shown, the app gone with a traceback."""
    tree = json.loads((tiny / "tree.json").read_text())
    tree["nodes"] = [n for n in tree["nodes"] if n["id"] != IDS["B"]]
    (tiny / "tree.json").write_text(json.dumps(tree))
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.ckpt is not None and IDS["B1"] in app.ckpt.roots
        app.main.jump_to(IDS["B1"])
        await settle(pilot)
        assert app.current_id == IDS["B1"]
        await pilot.press("5")
        await settle(pilot)
        assert app.is_running


def write_config(folder: Path, settings: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(settings), encoding="utf-8")


async def wait_toast(pilot, text: str) -> list[str]:
    for _ in range(100):  # the notes are looked for every second
        toasts = [n.message for n in pilot.app._notifications]
        if any(text in t for t in toasts):
            return toasts
        await pilot.pause(0.05)
    return [n.message for n in pilot.app._notifications]


@pytest.mark.parametrize("remap", ["[/x]", "\ud800", "x,[/x]"])
async def test_a_remap_that_is_no_key_name_is_ignored_and_said(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remap: str
) -> None:
    folder = tmp_path / "cfg"
    write_config(folder, {"keys": {"mark": remap}})
    monkeypatch.setenv(config.CONFIG_ENV, str(folder))
    app = make_app(tiny)  # "\ud800" crashed at start, "[/x]" in the palette
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        toasts = await wait_toast(pilot, "is not a key name: ignored")
        assert any("for 'mark' is not a key name: ignored" in t for t in toasts), toasts
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        assert app.is_running
        await pilot.press("escape")
        await pilot.pause(0.1)
        mark = "x" if remap.startswith("x") else "m"  # a valid name in the list still counts
        await pilot.press(mark)
        await settle(pilot)
        assert app.main.tabs.marked_id == app.current_id


@pytest.mark.parametrize("key", ["ctrl+c", "ctrl+q"])
async def test_quit_cannot_be_remapped_away(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """GIVEN a config that binds quit to x and gives Ctrl+C and Ctrl+Q to other keys
    WHEN Ctrl+C or Ctrl+Q is pressed on the tree THEN the app quits, and a toast said why."""
    folder = tmp_path / "cfg"
    write_config(folder, {"keys": {"quit": "x", "mark": "ctrl+c", "compare": "ctrl+q"}})
    monkeypatch.setenv(config.CONFIG_ENV, str(folder))
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        toasts = await wait_toast(pilot, "Ctrl+C and Ctrl+Q quit")
        assert any("ctrl+c for 'mark' ignored" in t for t in toasts), toasts
        app.main.tree_widget.focus()
        await pilot.press(key)
        for _ in range(100):
            if not app.is_running:
                break
            await pilot.pause(0.05)
        assert not app.is_running, f"{key} did not quit"


def deep_chain(folder: Path, depth: int) -> Path:
    """A chain `depth` deep, scored, without ancestor_ids: the app opens on its deepest node."""
    folder.mkdir()
    nodes = [
        {
            "id": f"n{i}",
            "parent_id": f"n{i - 1}" if i else None,
            "depth": i,
            "status": "success",
            "metrics": {"_scientific_score": i / depth},
            "eval_summary": f"step {i}",
        }
        for i in range(depth)
    ]
    (folder / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return folder


async def test_the_tui_opens_a_20000_deep_chain_on_its_deepest_node(tmp_path: Path) -> None:
    """It sat at "loading … (5 of 6)" for minutes at 1.34 GB, q ignored: revealing the node
    folded the rest of the chain again under every member (quadratic lines)."""
    depth = 20_000
    app = make_app(deep_chain(tmp_path / "chain", depth), open_useful=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.current_id == f"n{depth - 1}"
        lines = len(app.main.tree_widget._tree_nodes)
        assert lines < depth + 100, lines  # one line per node and the chain's: linear
        await pilot.press("5")
        await settle(pilot)
        crumbs = app.screen.query(".crumb")
        assert len(crumbs) == 15  # the first 3 and the last 12 ancestors, not 20,000
        await pilot.press("q")
        for _ in range(100):
            if not app.is_running:
                break
            await pilot.pause(0.05)
        assert not app.is_running


# ---------------------------------------------------------------- CLI: markup in data


def with_markup(small_ckpt: Path, dest: Path) -> Path:
    """The small demo with `[/x]` in node 9755d4c1's direction (so in its recorded start-up
    query too) and in the run's Letta embedding handle (settings.json)."""
    shutil.copytree(small_ckpt, dest)
    nodes = json.loads((dest / "tree.json").read_text())["nodes"]
    direction = next(n for n in nodes if n["id"].endswith("9755d4c1"))["original_direction"]
    old, new = json.dumps(direction)[1:-1], json.dumps(direction + " [/x] [bold]")[1:-1]
    for name in ("tree.json", "nodes_tree.json", "memory_access.jsonl"):
        path = dest / name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    (dest / "settings.json").write_text(json.dumps({"letta_embedding_config": "x/[/x]e[bold]"}))
    return dest


def test_saw_shows_markup_in_a_recorded_query_and_a_handle_literally(
    small_ckpt: Path, tmp_path: Path
) -> None:
    ckpt = with_markup(small_ckpt, tmp_path / "run")
    proc = run_cli(
        "saw", str(ckpt), "9755", "--embedder", "bm25", "--no-letta",
        env={"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")},
    )  # fmt: skip
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert "Recorded start-up search" in flat and "[/x] [bold]" in flat
    assert "x/[/x]e[bold]" in flat


@pytest.mark.parametrize("folder", ["[/x]", "[old] runs"])
def test_runs_shows_a_path_with_brackets_as_it_is(
    small_ckpt: Path, tmp_path: Path, folder: str
) -> None:
    ws = tmp_path / folder
    shutil.copytree(small_ckpt, ws / "checkpoints" / "20260528191903_a")
    proc = run_cli("runs", str(ws), env={"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")})
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    # the heading wraps to the table's width, at a space, where a long tmp path (xdist's adds a
    # level) puts it: compared with its whitespace joined
    assert f"1 run in {ws}, newest first" in " ".join(proc.stdout.split())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_on_a_path_with_brackets_says_it_literally(small_ckpt: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "[/x] [old]"
    shutil.copytree(small_ckpt, ckpt)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ari_mem_tui", "serve", str(ckpt), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stderr.readline()
        assert banner.strip() == f"serving {ckpt} at http://127.0.0.1:{port}/ (Ctrl+C stops)"
        wait_for_page(f"http://127.0.0.1:{port}/")  # then SIGTERM meets the server's handler
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in out + err and "internal error" not in out + err


# ---------------------------------------------------------------- CLI: serve refused


def test_serve_refuses_a_busy_port_in_one_line_before_any_banner(small_ckpt: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        line = one_line_error(run_cli("serve", str(small_ckpt), "--port", str(port)))
    assert f"cannot listen on 127.0.0.1:{port} (Address already in use)" in line


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--port", "70000"), "--port 70000 is not a port (1 to 65535)"),
        (("--port", "-1"), "--port -1 is not a port (1 to 65535)"),
        (("--port", "0"), "--port 0 is not a port (1 to 65535)"),
        (("--host", "no-such-host.invalid"), "--host 'no-such-host.invalid' does not resolve"),
    ],
)
def test_serve_refuses_what_it_cannot_listen_on(
    small_ckpt: Path, args: tuple[str, ...], said: str
) -> None:
    assert said in one_line_error(run_cli("serve", str(small_ckpt), *args))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("saw", "NODE", "--limit", "0"), "'0' is not a number of hits from 1 to 200"),
        (("saw", "NODE", "--limit", "-3"), "'-3' is not a number of hits from 1 to 200"),
        (("health", "--limit", "10" * 12), "is not a number of hits from 1 to 200"),
        (("saw", "NODE", "--letta-timeout", "-1"), "'-1' is not a positive number of seconds"),
        (("saw", "NODE", "--embed-deadline", "nan"), "'nan' is not a positive number of seconds"),
        (("audit", "--letta-timeout", "inf"), "'inf' is not a positive number of seconds"),
    ],
)
def test_numbers_out_of_range_are_refused_not_silently_replaced(
    small_ckpt: Path, args: tuple[str, ...], said: str
) -> None:
    """`--limit 0` used to replay with 5 hits and `-3` with 1, without a word."""
    command, *rest = args
    rest = [a if a != "NODE" else "root" for a in rest]
    proc = run_cli(command, str(small_ckpt), *rest)
    assert proc.returncode == 2 and proc.stdout == ""
    assert said in proc.stderr and "Traceback" not in proc.stderr


def test_demo_refuses_a_negative_entry_count(tmp_path: Path) -> None:
    line = one_line_error(run_cli("demo", "--out", str(tmp_path / "d"), "--entries", "-1"))
    assert "--entries must be 0 or more" in line
    assert not (tmp_path / "d").exists()


# ---------------------------------------------------------------- CLI: no permission


@pytest.fixture
def workspace_with_locked_runs(small_ckpt: Path, tmp_path: Path):
    """Three runs: one whose backup is mode 000, one whose folder is, one sound."""
    ws = tmp_path / "ws"
    runs = ws / "checkpoints"
    for name in ("20260101000000_backup", "20260102000000_folder", "20260103000000_sound"):
        shutil.copytree(small_ckpt, runs / name)
    (runs / "20260101000000_backup" / "memory_backup.jsonl.gz").chmod(0)
    (runs / "20260102000000_folder").chmod(0)
    yield ws
    (runs / "20260102000000_folder").chmod(0o755)
    (runs / "20260101000000_backup" / "memory_backup.jsonl.gz").chmod(0o644)


def test_one_unreadable_run_does_not_end_the_listing(
    workspace_with_locked_runs: Path, tmp_path: Path
) -> None:
    ws = workspace_with_locked_runs
    env = {"ARI_MEM_TUI_CACHE": str(tmp_path / "cache")}
    proc = run_cli("runs", str(ws), "--json", env=env, unprivileged=True)
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    rows = {r["folder"]: r for r in json.loads(proc.stdout)["runs"]}
    assert sorted(rows) == [
        "20260101000000_backup",
        "20260102000000_folder",
        "20260103000000_sound",
    ]
    assert (
        rows["20260103000000_sound"]["entries"] == 398
        and not rows["20260103000000_sound"]["problems"]
    )
    backup = rows["20260101000000_backup"]
    assert backup["nodes"] == 8 and backup["entries"] is None  # the tree still counted
    assert "cannot read it (Permission denied)" in json.dumps(backup["problems"])
    assert "Permission denied" in json.dumps(rows["20260102000000_folder"]["problems"])
    text = run_cli("runs", str(ws), env=env, unprivileged=True)
    assert text.returncode == 0 and "20260103000000_sound" in text.stdout


def test_summary_of_a_folder_without_permission_is_one_line(
    workspace_with_locked_runs: Path,
) -> None:
    folder = workspace_with_locked_runs / "checkpoints" / "20260102000000_folder"
    for command in ("audit", "saw"):
        extra = ("x",) if command == "saw" else ()
        line = one_line_error(run_cli(command, str(folder), *extra, unprivileged=True))
        assert line == (
            f"ari-mem-tui: cannot read {folder}: loaded nothing (cannot list the folder:"
            " Permission denied)"
        )
    proc = run_cli("summary", str(folder), unprivileged=True)
    assert proc.returncode == 2 and "cannot list the folder: Permission denied" in proc.stdout
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_summary_of_a_run_whose_backup_has_no_permission_names_the_file(
    workspace_with_locked_runs: Path, tmp_path: Path
) -> None:
    run = workspace_with_locked_runs / "checkpoints" / "20260101000000_backup"
    before = fingerprint(run)
    proc = run_cli(
        "summary", str(run), env={"ARI_MEM_TUI_CACHE": str(tmp_path / "c")}, unprivileged=True
    )
    clean_stderr(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "memory_backup.jsonl.gz" in proc.stdout and "Permission denied" in proc.stdout
    assert fingerprint(run) == before
