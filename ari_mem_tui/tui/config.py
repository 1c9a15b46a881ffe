"""The TUI's small settings file (the theme, remapped keys, export folder, whether `q` asks
first, the ranker), kept under the XDG config dir, read through a pydantic model (`Settings`).

`ARI_MEM_TUI_CONFIG_DIR` overrides the location, so tests never touch the user's real config.
A broken or unwritable file is ignored, and a field of the wrong type is left out (the rest is
read), each said once: settings are a convenience, never a reason to fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_path
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.settings import checked_fields
from ari_mem_tui.run import EMBEDDERS
from ari_mem_tui.workspace import CONFIG_ENV, config_dir

EXPORT_ENV = "ARI_MEM_TUI_EXPORT_DIR"
__all__ = ["CONFIG_ENV", "config_dir"]  # the settings live beside the recent runs


def config_path() -> Path:
    return config_dir() / "config.json"


class Unreadable(Exception):
    """The settings file exists but cannot be used (why in the message)."""


def _read_settings() -> dict[str, Any]:
    """The settings file as a dict ({} when there is none); Unreadable when it is there but is
    no regular file, over `config-kib`, not JSON, nested too deep or not an object."""
    path = config_path()
    try:
        data = cachefile.decode_json(cachefile.read_config(path))
    except FileNotFoundError:
        return {}
    except cachefile.CacheMiss as exc:
        raise Unreadable(str(exc)) from None
    if not isinstance(data, dict):
        raise Unreadable(f"a JSON {type(data).__name__}, not an object")
    return data


class Settings(BaseModel):
    """What `config.json` may hold (README: In the TUI, Exact rankings); every field may be
    missing, and then its default holds."""

    model_config = ConfigDict(extra="ignore")  # (keys of other versions: kept on a save)

    theme: StrictStr | None = None
    keys: dict[str, StrictStr] = Field(default_factory=dict)
    """Remaps: {key id: Textual key names}, `{"mark": "x"}` (tui/keys.py)."""
    export_dir: StrictStr | None = None
    confirm_quit: StrictBool = False
    """`q` asks first (only `true` turns it on)."""
    embedder: Literal[EMBEDDERS] | None = None  # type: ignore[valid-type]
    embed_url: StrictStr | None = None
    embed_model: StrictStr | None = None


def load_settings() -> Settings:
    """The settings; a file that cannot be used is ignored (the defaults hold), and a field
    of the wrong type is left out (the others are read), each said once."""
    try:
        data = _read_settings()
    except Unreadable as exc:
        cachefile.tell(f"settings file {config_path()} ignored ({exc}): defaults used")
        return Settings()
    settings, bad = checked_fields(Settings, data)
    for field, why in bad:
        cachefile.tell(f"settings file {config_path()}: {field} ignored ({why}); the rest is used")
    return settings


def keymap(settings: Settings) -> dict[str, str]:
    """The `keys` table, {key id: Textual key names}: `{"keys": {"mark": "x"}}` binds `mark`
    (tui/keys.py) to x instead of m. An empty name is ignored; key names that are not key
    names, and Ctrl+C / Ctrl+Q anywhere but `quit`, too, said once (`keys.checked_keymap`)."""
    strings = {k: v for k, v in settings.keys.items() if v}
    if not strings:
        return {}
    from ari_mem_tui.tui import keys  # noqa: PLC0415 - Textual's: the CLI reads settings without it

    kept, notes = keys.checked_keymap(strings)
    for note in notes:
        cachefile.tell(f"keys in {config_path()}: {note}")
    return kept


def save_setting(key: str, value: Any) -> bool:
    """Store one setting; False when the file could not be written, or could not be read (a
    file the user broke by hand is not overwritten with this one setting)."""
    try:
        settings = _read_settings()
    except Unreadable:
        return False
    settings[key] = value
    data, cost = json.dumps(settings, indent=2).encode(), "a setting lasts until the TUI quits"
    return cachefile.write_optional(config_path(), data, "settings", cost, "saved")


def export_dir(checkpoint: Path, requested: Path | None = None) -> Path:
    """Where dossiers go: `--export-dir`, else $ARI_MEM_TUI_EXPORT_DIR, else the config file's
    `export_dir`, else the user's data dir (never the current directory: that may be a git
    work tree). Never inside the checkpoint (read-only principle): the data dir instead."""
    chosen = requested or os.environ.get(EXPORT_ENV) or load_settings().export_dir
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
