"""The TUI's small settings file (the theme, remapped keys, export folder, whether `q` asks
first), kept under the XDG config dir.

`ARI_MEM_TUI_CONFIG_DIR` overrides the location, so tests never touch the user's real config.
A broken or unwritable file is ignored: settings are a convenience, never a reason to fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from platformdirs import user_config_path, user_data_path

CONFIG_ENV = "ARI_MEM_TUI_CONFIG_DIR"
EXPORT_ENV = "ARI_MEM_TUI_EXPORT_DIR"


def config_dir() -> Path:
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override)
    return user_config_path("ari-mem-tui")


def config_path() -> Path:
    return config_dir() / "config.json"


def load_settings() -> dict[str, Any]:
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def keymap(settings: dict[str, Any]) -> dict[str, str]:
    """The `keys` table, {key id: Textual key names}: `{"keys": {"mark": "x"}}` binds `mark`
    (tui/keys.py) to x instead of m. Entries that are not a string are ignored."""
    table = settings.get("keys")
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, str) and v}


def flag(settings: dict[str, Any], name: str) -> bool:
    """A yes/no setting: on only when the file says `true` (a typo or a string leaves it off)."""
    return settings.get(name) is True


def save_setting(key: str, value: Any) -> bool:
    """Store one setting; False when the file could not be written."""
    settings = load_settings()
    settings[key] = value
    path = config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(settings, indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        return False
    return True


def export_dir(checkpoint: Path, requested: Path | None = None) -> Path:
    """Where dossiers go: `--export-dir`, else $ARI_MEM_TUI_EXPORT_DIR, else the config file's
    `export_dir`, else the user's data dir (never the current directory: that may be a git
    work tree). Never inside the checkpoint (read-only principle): the data dir instead."""
    setting = load_settings().get("export_dir")
    chosen = (
        requested or os.environ.get(EXPORT_ENV) or (setting if isinstance(setting, str) else "")
    )
    candidate = Path(chosen).expanduser().resolve() if chosen else default_export_dir()
    if _inside(candidate, checkpoint):
        candidate = default_export_dir()
    return candidate


def default_export_dir() -> Path:
    return user_data_path("ari-mem-tui") / "dossiers"


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(Path(root).resolve())
    except ValueError:
        return False
    return True
