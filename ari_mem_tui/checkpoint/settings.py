"""`settings.json`: the run's settings as ARI's dashboard saved them; one key is read here.

ARI's dashboard saves its whole settings form into the checkpoint's `settings.json`
(ari-core/ari/viz/api_settings.py `_api_save_settings`, `json.dumps(data, indent=2)`) and hands
it to the run it launches. Its Memory (Letta) card's `letta_embedding_config` is the embedding
handle ("<provider>/<model>", default `letta-default`) the run's Letta agent was created with,
which passes it on as `LETTA_EMBEDDING_CONFIG`: the embedder that ranked every recorded search.
It is evidence, not proof (the file may have been edited after the agent was created, and a run
launched from the command line has no such file), so it only names the recording's ranker.
"""

from __future__ import annotations

from pathlib import Path

from ari_mem_tui.checkpoint.jsonfile import read_json, usable_file
from ari_mem_tui.model import Problem

SETTINGS_FILE = "settings.json"
HANDLE_CHARS = 200  # a handle is a short "<provider>/<model>"; a longer value is cut


def letta_embedding_config(path: Path, problems: list[Problem]) -> str | None:
    """The `letta_embedding_config` of `path`/settings.json, or None (no file, key or string)."""
    if not usable_file(path / SETTINGS_FILE, SETTINGS_FILE, problems):
        return None
    document = read_json(path / SETTINGS_FILE, SETTINGS_FILE, problems, retry=False)
    value = document.get("letta_embedding_config") if isinstance(document, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    return value if len(value) <= HANDLE_CHARS else value[: HANDLE_CHARS - 1] + "…"
