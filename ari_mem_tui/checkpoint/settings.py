"""`settings.json`: the run's settings as ARI's dashboard saved them, read through a pydantic
model (`RunSettings`); and the field-by-field reading every settings file of the tool shares.

ARI's dashboard saves its whole settings form into the checkpoint's `settings.json`
(ari-core/ari/viz/api_settings.py `_api_save_settings`, `json.dumps(data, indent=2)`) and hands
it to the run it launches. Its Memory (Letta) card's `letta_embedding_config` is the embedding
handle ("<provider>/<model>", default `letta-default`) the run's Letta agent was created with,
which passes it on as `LETTA_EMBEDDING_CONFIG`: the embedder that ranked every recorded search.
It is evidence, not proof (the file may have been edited after the agent was created, and a run
launched from the command line has no such file), so it only names the recording's ranker.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from ari_mem_tui.checkpoint.jsonfile import read_json, usable_file
from ari_mem_tui.checkpoint.values import short
from ari_mem_tui.model import Problem

SETTINGS_FILE = "settings.json"
HANDLE_CHARS = 200  # a handle is a short "<provider>/<model>"; a longer value is cut

Settings = TypeVar("Settings", bound=BaseModel)


def checked_fields(
    model: type[Settings], data: Mapping[str, Any]
) -> tuple[Settings, list[tuple[str, str]]]:
    """`data` (a settings file's object) as `model`, each field checked on its own: a field
    not of its type, or an entry of a table field that is not (`keys.copy`), is left out and
    named, with why (one line each for the caller); every other field is read."""
    data = {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}
    bad: list[tuple[str, str]] = []
    while True:
        try:
            return model.model_validate(data), bad
        except ValidationError as exc:
            errors = exc.errors()
        dropped = False
        for error in errors:
            *path, last = error["loc"] or ("",)
            holder: Any = data
            for part in path:
                holder = holder.get(part) if isinstance(holder, dict) else None
            if isinstance(holder, dict) and last in holder:
                del holder[last]
                dropped = True
                field = ".".join(map(str, error["loc"]))
                got = short(repr(error["input"]), 40)
                bad.append((field, f"{error['msg'][:1].lower()}{error['msg'][1:]}, not {got}"))
        if not dropped:  # (an error no field names: nothing of the file is used)
            return model.model_validate({}), bad


class RunSettings(BaseModel):
    """The fields of ARI's settings.json this tool reads; the others are not looked at."""

    model_config = ConfigDict(extra="ignore")

    letta_embedding_config: StrictStr | None = None
    """The Letta embedding handle the run's agent was made with ("<provider>/<model>")."""


def letta_embedding_config(path: Path, problems: list[Problem]) -> str | None:
    """The `letta_embedding_config` of `path`/settings.json, or None (no file, key or string;
    a value of another type is a problem naming the field)."""
    if not usable_file(path / SETTINGS_FILE, SETTINGS_FILE, problems):
        return None
    document = read_json(path / SETTINGS_FILE, SETTINGS_FILE, problems, retry=False)
    if not isinstance(document, dict):
        return None
    settings, bad = checked_fields(RunSettings, document)
    for field, why in bad:
        problems.append(Problem(file=SETTINGS_FILE, where=field, what="ignored the field", why=why))
    value = (settings.letta_embedding_config or "").strip()
    if not value:
        return None
    return value if len(value) <= HANDLE_CHARS else value[: HANDLE_CHARS - 1] + "…"
