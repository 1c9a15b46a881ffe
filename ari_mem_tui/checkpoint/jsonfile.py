"""Reading whole JSON documents that ARI may be rewriting while we read them (§2.5)."""

from __future__ import annotations

import codecs
import json
import stat
import time
from pathlib import Path
from typing import Any

import msgspec

from ari_mem_tui.checkpoint.limits import current, hint, mib
from ari_mem_tui.model import Problem

RETRY_DELAY_S = 0.15  # ARI's own loader waits this long before its single retry
# ARI's records nest a few levels; far deeper values (a hostile `[[[[…`) would break
# serialisation downstream (pydantic's depth limit), so they are cut at the reader
MAX_DEPTH = 100
TOO_DEEP = f"<nested deeper than {MAX_DEPTH} levels: dropped>"


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests containers more than `limit` levels deep (iterative: no recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        depth += 1
        # only containers are stacked: a tree's hundreds of thousands of strings cost one test
        stack.extend((v, depth) for v in item if isinstance(v, (dict, list)))
    return False


def prune_deep(value: Any, limit: int = MAX_DEPTH) -> Any:
    """`value` with every container deeper than `limit` replaced by the TOO_DEEP marker."""
    if limit <= 0:
        return TOO_DEEP if isinstance(value, (dict, list)) else value
    if isinstance(value, dict):
        return {k: prune_deep(v, limit - 1) for k, v in value.items()}
    if isinstance(value, list):
        return [prune_deep(v, limit - 1) for v in value]
    return value


def usable_file(path: Path, name: str, problems: list[Problem]) -> bool:
    """Whether `path` is a regular file to read. Something else in its place (a directory, a
    FIFO that would block a reader forever, a device like /dev/zero, a symlink loop) is a
    named problem, never opened."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except (OSError, RuntimeError) as exc:  # ELOOP, EACCES ...
        problems.append(Problem(file=name, what="skipped it", why=f"cannot stat it ({exc})"))
        return False
    if stat.S_ISREG(mode):
        return True
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    problems.append(Problem(file=name, what="skipped it, unread", why=f"it is {kind}"))
    return False


def oversize(path: Path) -> str | None:
    """Why `path` is too big to read whole (over the file-mib limit), or None when it is not."""
    try:
        size = path.stat().st_size
    except (OSError, RuntimeError):
        return None  # the read itself will say what is wrong
    limit = current().file_bytes
    if size <= limit:
        return None
    return (
        f"refused unread: it is {mib(size)}, over the {mib(limit)} limit for a file read whole"
        f" ({hint('file-mib')})"
    )


def read_whole(path: Path) -> bytes:
    """The bytes of `path`, or OSError (EFBIG) when it is over the file-mib limit."""
    why = oversize(path)
    if why is not None:
        raise OSError(27, why)
    return path.read_bytes()


def decode_utf8(data: bytes, name: str, problems: list[Problem]) -> str:
    """UTF-8 text (a leading byte-order mark dropped); undecodable bytes become U+FFFD and a
    problem says where the first one was."""
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem(
                file=name,
                where=f"byte {exc.start}",
                what="replaced undecodable bytes with U+FFFD",
                why="invalid UTF-8",
            )
        )
        return data.decode("utf-8", errors="replace")


def _parse(path: Path, name: str, problems: list[Problem]) -> tuple[bool, Any, str]:
    """(ok, value, error text) for one read of the file."""
    why = oversize(path)
    if why is not None:
        return False, None, why
    try:
        data = path.read_bytes()
    except OSError as exc:
        return False, None, f"cannot read ({exc.__class__.__name__}: {exc.strerror or exc})"
    try:  # msgspec decodes the bytes in C; what it refuses takes json's path, for its messages
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    else:
        return True, _depth_checked(value, data, name, problems), ""
    text = decode_utf8(data, name, problems)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return False, None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:  # an integer over Python's digit limit (4,300) is not JSONDecodeError
        return False, None, f"invalid JSON: {json_error(exc)}"
    except RecursionError:
        return False, None, "JSON nested too deeply"
    return True, _depth_checked(value, text, name, problems), ""


def _depth_checked(value: Any, source: bytes | str, name: str, problems: list[Problem]) -> Any:
    """`value`, with containers deeper than MAX_DEPTH replaced by a marker (and a problem)."""
    opening = (b"[", b"{") if isinstance(source, bytes) else ("[", "{")
    if source.count(opening[0]) + source.count(opening[1]) > MAX_DEPTH and depth_exceeds(value):
        problems.append(
            Problem(
                file=name,
                what=f"replaced values nested deeper than {MAX_DEPTH} levels by a marker",
                why="nested too deeply to show",
            )
        )
        value = prune_deep(value)
    return value


def read_json(path: Path, name: str, problems: list[Problem], retry: bool = True) -> Any:
    """The parsed document, or None with an error problem.

    ARI writes these files in place (not atomically), so a half-written read is retried once.
    """
    scratch: list[Problem] = []
    ok, value, error = _parse(path, name, scratch)
    if not ok and retry and error.startswith("invalid JSON"):
        time.sleep(RETRY_DELAY_S)
        scratch = []
        ok, value, error = _parse(path, name, scratch)
        if not ok:
            error += " (also after one retry)"
    problems.extend(scratch)
    if not ok:
        problems.append(
            Problem(file=name, what="skipped the whole file", why=error, severity="error")
        )
        return None
    return value


def salvage_list(path: Path, key: str) -> list[Any]:
    """The complete items at the start of the array under `key` in a JSON file cut short (ARI
    writes tree.json in place, so a crash leaves its first nodes intact): item by item until the
    first one that does not parse."""
    try:
        text = decode_utf8(read_whole(path), path.name, [])
    except OSError:
        return []
    start = text.find(f'"{key}"')
    start = text.find("[", start) if start >= 0 else -1
    if start < 0:
        return []
    items: list[Any] = []
    pos = start + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            item, pos = _RAW_DECODE(text, pos)
        except (ValueError, RecursionError):
            return items
        items.append(item)


def read_text(path: Path, name: str, problems: list[Problem]) -> str:
    """A whole UTF-8 text file ("" with a problem when it cannot be read)."""
    try:
        return decode_utf8(read_whole(path), name, problems)
    except OSError as exc:
        why = exc.strerror if exc.errno == 27 and exc.strerror else str(exc)
        problems.append(Problem(file=name, what="skipped the file", why=why))
        return ""


def json_error(exc: Exception) -> str:
    """Why json could not decode: its own message, a number too long to read, or nesting."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a number too long to read (over 4,300 digits)" if "digits" in str(exc) else str(exc)


_RAW_DECODE = json.JSONDecoder().raw_decode
