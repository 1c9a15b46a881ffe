"""The key registry (tui/keys.py) is the one source of the TUI's keys: the BINDINGS, the command
palette and the help's key table are made from it, and the config file remaps keys by id."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest
from textual.binding import Binding

from ari_mem_tui import tui
from ari_mem_tui.tui import config, keys
from ari_mem_tui.tui.app import AriMemApp
from ari_mem_tui.tui.commands import ACTIONS
from ari_mem_tui.tui.main_screen import MainScreen
from ari_mem_tui.tui.screens.help import HelpScreen, keys_table
from tests.tui_app_helpers import make_app, press, settle
from tests.tui_helpers import IDS


def bound_classes() -> dict[str, list]:
    """Every class of the TUI (app, screens, widgets) that declares its own BINDINGS: its
    qualified name → them."""
    found: dict[str, list] = {}
    for info in pkgutil.walk_packages(tui.__path__, "ari_mem_tui.tui."):
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            own = inspect.isclass(cls) and cls.__module__ == module.__name__
            if own and "BINDINGS" in vars(cls):
                found[f"{module.__name__}.{name}"] = list(vars(cls)["BINDINGS"])
    return found


def test_no_class_binds_a_key_outside_the_registry() -> None:
    """GIVEN every class of the TUI that binds keys (the app, the main screen's widgets, every
    view over it: help, entry, why, compare, filter, health, runs) THEN each binding is a
    registry entry's, as `keys.bindings` makes it (its keys, action, label, footer flag, id),
    and no module but tui/keys.py constructs a Binding."""
    found = bound_classes()
    # the screens and widgets that have keys: a class that stopped binding would pass unseen
    for name in (
        "AriMemApp",
        "MainScreen",
        "RunTree",
        "VimTable",
        "TableFilter",
        "HelpScreen",
        "EntryScreen",
        "WhyScreen",
        "CompareScreen",
        "FilterScreen",
        "CheckList",
        "HealthScreen",
        "RunPickerScreen",
        "QueryInput",
        "HitsTab",
        "WritesTab",
        "TextTab",
    ):
        assert any(q.endswith(f".{name}") for q in found), name
    for owner, bindings in found.items():
        for binding in bindings:
            assert isinstance(binding, Binding) and binding.id in keys.BY_ID, (owner, binding)
            key = keys.BY_ID[binding.id]
            # a pane shows an app or main-screen key in the footer by binding it to its action
            action = (
                key.action if binding.action == key.action else f"{keys.owner(key)}.{key.action}"
            )
            show = key.show or action != key.action
            assert (binding.key, binding.action, binding.description, binding.show) == (
                key.keys,
                action,
                key.description,
                show,
            ), owner
    package = Path(tui.__file__).parent
    constructs = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if "Binding(" in path.read_text(encoding="utf-8")
    ]
    assert constructs == ["keys.py"]


def test_bindings_palette_and_help_list_the_same_ids() -> None:
    """GIVEN the registry WHEN every class is bound, the palette lists its actions and the help
    its keys THEN all of them are the registry's entries, nothing else."""
    with_keys = {k.id for k in keys.KEYS if k.keys}
    bound = [b for bindings in bound_classes().values() for b in bindings]
    assert {b.id for b in bound} == with_keys
    assert [row[0] for row in keys.help_rows({})] == [k.id for k in keys.KEYS if k.keys]
    palette = keys.palette_actions({})
    assert {row[0] for row in palette} == {k.id for k in keys.KEYS if k.title}
    assert ACTIONS == [row[1:] for row in palette]
    app_ids = {b.id for b in [*AriMemApp.BINDINGS, *MainScreen.BINDINGS]}
    assert app_ids - {"back"} <= {row[0] for row in palette}  # every app key is in the palette
    table = keys_table({})
    for key in keys.KEYS:
        if key.keys:
            assert key.help in table, key.id


def test_the_keymap_reads_only_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    (tmp_path / "config.json").write_text(
        json.dumps({"keys": {"mark": "x", "copy": 3, "reload": ""}}), encoding="utf-8"
    )
    assert config.keymap(config.load_settings()) == {"mark": "x"}
    assert config.keymap(config.Settings()) == {}


async def test_a_remapped_key_works_and_the_old_one_no_longer_fires(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN `mark` remapped to x and the tree's `down` to ctrl+n in the config file
    WHEN the keys are pressed THEN the new keys act, the old ones do nothing, and the help and
    the palette show the new keys."""
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    remaps = {"mark": "x", "down": "ctrl+n", "nonsense": "z"}
    (config_dir / "config.json").write_text(json.dumps({"keys": remaps}), encoding="utf-8")
    monkeypatch.setenv(config.CONFIG_ENV, str(config_dir))
    monkeypatch.setenv(config.EXPORT_ENV, str(tmp_path / "exports"))
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        # said as the app mounts; read before the load, which on a busy machine can take
        # longer than the toast stays (5 s)
        assert any("no key called nonsense" in n.message for n in app._notifications)
        await settle(pilot)
        assert app.current_id == IDS["R"]
        await press(pilot, "m")
        assert app.main.tabs.marked_id is None  # m no longer marks: bound to nothing, it is text
        assert app.query_one("#find-input").value == "m"
        await press(pilot, "escape", "escape", "j")
        assert app.current_id == IDS["R"]  # j no longer moves the tree's cursor
        await press(pilot, "escape", "escape", "x")
        assert app.main.tabs.marked_id == IDS["R"]
        await press(pilot, "ctrl+n")
        assert app.current_id == IDS["A"]
        palette = {title: help_text for _, title, help_text, _ in keys.palette_actions(app.keymap)}
        assert palette["Mark node"].endswith("(x)")
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        source = app.screen.source
        assert "| `x` | Mark the current node for compare |" in source
        assert "| `m` |" not in source
