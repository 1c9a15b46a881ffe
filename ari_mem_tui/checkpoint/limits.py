"""Every size limit on hostile input, in one place.

Each limit has a default, an environment variable (`ARI_MEM_TUI_MAX_<NAME>`, e.g.
`ARI_MEM_TUI_MAX_LINE_MIB=256`) and a CLI flag (`--max line-mib=256`, parsed in cli/, which
sets the variable so that a served TUI's child process gets it too). Readers ask `current()`
when they start a file, so a changed variable holds from the next read on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MIB = 1 << 20
ENV_PREFIX = "ARI_MEM_TUI_MAX_"


@dataclass(frozen=True)
class Limit:
    name: str  # as given to --max, e.g. "line-mib"
    default: int
    what: str

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper().replace("-", "_")


LIMITS: dict[str, Limit] = {
    limit.name: limit
    for limit in (
        Limit(
            "file-mib",
            256,
            "a JSON or text file read whole (tree.json, nodes_tree.json, idea.json, "
            "experiment.md, a v0.5 store ...): a larger one is refused unread, with a problem",
        ),
        Limit(
            "line-mib",
            64,
            "one line of a JSON Lines file (access log, backup, v0.5 store): a longer line is "
            "skipped with a problem naming file, line and size; the rest is read",
        ),
        Limit(
            "gzip-ratio",
            50,
            "decompressed bytes of memory_backup.jsonl.gz per compressed byte (at least "
            "gzip-floor-mib are always allowed): past it reading stops, with a problem",
        ),
        Limit(
            "gzip-floor-mib",
            64,
            "decompressed MiB of the backup always allowed, whatever its ratio",
        ),
        Limit(
            "gzip-mib",
            2048,
            "decompressed MiB of the backup in all, whatever its compressed size",
        ),
        Limit(
            "letta-answer-mib",
            256,
            "MiB of one answer of a Letta server: past it the call stops, with one line",
        ),
        Limit(
            "cache-mib",
            1024,
            "one file of the tool's own caches (a vector segment, a BM25 index file, the run "
            "counts, the run index): a larger one is not read; the cache is rebuilt",
        ),
        Limit(
            "config-kib",
            1024,
            "KiB of a settings file of the tool (config.json, recent.json, a demo's marker): "
            "a larger one is ignored, with one line",
        ),
        Limit(
            "sessions",
            8,
            "browser sessions `serve` runs at once (one app process each): another client is "
            "answered 503",
        ),
        Limit(
            "session-mib",
            4096,
            "MiB of data (heap) one app process of `serve` may hold: past it that session "
            "ends, the server and the other sessions go on",
        ),
        Limit(
            "embed-chars",
            32768,
            "characters of one text given to the tokenizer (MiniLM, BM25): only this prefix "
            "is ranked (MiniLM reads 256 tokens anyway)",
        ),
    )
}


@dataclass(frozen=True)
class Limits:
    file_bytes: int
    line_bytes: int
    gzip_ratio: int
    gzip_floor_bytes: int
    gzip_bytes: int
    letta_answer_bytes: int
    cache_bytes: int
    config_bytes: int
    embed_chars: int

    def gzip_allowed(self, compressed: int) -> int:
        """Decompressed bytes a backup of `compressed` bytes may give."""
        return min(self.gzip_bytes, max(self.gzip_floor_bytes, self.gzip_ratio * compressed))


def value(name: str) -> int:
    """The limit `name` as set in the environment, else its default (a bad value: the
    default, said once)."""
    limit = LIMITS[name]
    raw = os.environ.get(limit.env, "")
    if not raw.strip():
        return limit.default
    try:
        number = int(raw)
    except ValueError:
        number = 0
    if number > 0:
        return number
    said = f"{limit.env}={raw!r} is not a whole number of at least 1: {name} stays {limit.default}"
    if said not in _ignored:
        _ignored[said] = False
    return limit.default


# the variables ignored, each said once (cachefile.take_notes gives them with its own notes:
# the limits import nothing of ours); True once taken
_ignored: dict[str, bool] = {}


def take_ignored() -> list[str]:
    """What was ignored and not said yet."""
    fresh = [said for said, taken in _ignored.items() if not taken]
    _ignored.update(dict.fromkeys(fresh, True))
    return fresh


def current() -> Limits:
    return Limits(
        file_bytes=value("file-mib") * MIB,
        line_bytes=value("line-mib") * MIB,
        gzip_ratio=value("gzip-ratio"),
        gzip_floor_bytes=value("gzip-floor-mib") * MIB,
        gzip_bytes=value("gzip-mib") * MIB,
        letta_answer_bytes=value("letta-answer-mib") * MIB,
        cache_bytes=value("cache-mib") * MIB,
        config_bytes=value("config-kib") * 1024,
        embed_chars=value("embed-chars"),
    )


def parse_setting(text: str) -> tuple[str, int]:
    """`NAME=VALUE` of a `--max` flag → (name, value); ValueError with a message otherwise."""
    name, sep, raw = text.partition("=")
    name = name.strip().lower()
    if not sep or name not in LIMITS:
        raise ValueError(f"expected NAME=VALUE with NAME one of {', '.join(LIMITS)}, got {text!r}")
    try:
        number = int(raw)
    except ValueError:
        raise ValueError(f"{name}: {raw!r} is not a whole number") from None
    if number <= 0:
        raise ValueError(f"{name}: must be at least 1")
    return name, number


def apply(settings: list[tuple[str, int]]) -> None:
    """Set limits for this process and its children (the CLI's `--max`)."""
    for name, number in settings:
        os.environ[LIMITS[name].env] = str(number)


def mib(size: int) -> str:
    """A byte count for a problem line: `1,024 MiB` (or bytes, under one MiB)."""
    return f"{size / MIB:,.0f} MiB" if size >= MIB else f"{size:,} bytes"


def hint(name: str) -> str:
    return f"raise it with --max {name}=N or ${LIMITS[name].env}"
