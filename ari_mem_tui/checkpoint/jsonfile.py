"""Reading whole JSON documents that ARI may be rewriting while we read them (§2.5)."""

from __future__ import annotations

import codecs
import errno
import json
import math
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ari_mem_tui.checkpoint.limits import current, hint, mib
from ari_mem_tui.checkpoint.values import nonfinite, nonfinite_why
from ari_mem_tui.model import Problem
from ari_mem_tui.model.words import plural

RETRY_DELAY_S = 0.15  # ARI's own loader waits this long before its single retry
# ARI's records nest a few levels; far deeper values (a hostile `[[[[…`) would break
# serialisation downstream (the encoders' recursion limits), so they are cut at the reader
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


def file_kind(mode: int) -> str:
    """What a file that is not regular is, for a message: "a FIFO", "a device" ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


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
    why = f"it is {file_kind(mode)}"
    problems.append(Problem(file=name, what="skipped it, unread", why=why))
    return False


def too_big(size: int, limit: int, name: str = "file-mib") -> str:
    return (
        f"refused unread: it is {mib(size)}, over the {mib(limit)} limit for a file read whole"
        f" ({hint(name)})"
    )


def read_regular(
    path: Path | str,
    limit: int,
    name: str = "file-mib",
    check: Callable[[os.stat_result], None] | None = None,
) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes (the limit
    `name`), else OSError saying why: EFBIG for the size, EINVAL for a FIFO, a device or a
    directory, which is never opened (a FIFO would block the read forever, /dev/zero never end).
    `check` is given the opened file's stat before a byte is read (the tool's caches: whose).

    Stat'ed before it is opened, then opened without blocking and checked again (something
    swapped in between is caught), and never read past the limit, even while it grows."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"it is {file_kind(mode)}, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb", buffering=0) as handle:  # closes fd
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"it is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise OSError(errno.EFBIG, too_big(info.st_size, limit, name))
        if check is not None:
            check(info)
        data = _read_upto(handle, info.st_size + 1)
        if len(data) > info.st_size:  # it grew while read: on, as far as the limit allows
            data += _read_upto(handle, limit + 1 - len(data))
            if len(data) > limit:
                raise OSError(errno.EFBIG, too_big(len(data), limit, name))
    return data


def _read_upto(handle: Any, size: int) -> bytes:
    """Up to `size` bytes, fewer only at the end of the file (one read() may return less than
    asked: Linux gives at most ~2 GiB a call)."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        chunk = handle.read(size - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_whole(path: Path) -> bytes:
    """The bytes of `path`, or OSError (EFBIG) when it is over the file-mib limit."""
    return read_regular(path, current().file_bytes)


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
    try:
        data = read_whole(path)
    except OSError as exc:
        if exc.errno == errno.EFBIG and exc.strerror:
            return False, None, exc.strerror
        return False, None, f"cannot read ({exc.__class__.__name__}: {exc.strerror or exc})"
    try:  # msgspec decodes the bytes in C; what it refuses takes json's path, for its messages
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    else:
        return True, _depth_checked(value, data, name, problems), ""
    text = decode_utf8(data, name, problems)
    long_ints: list[int] = []
    odd: list[str] = []  # NaN, Infinity, 1e400: json reads them (as floats), msgspec does not
    try:
        value = json.loads(
            text,
            parse_int=lambda digits: _bounded_int(digits, long_ints),
            parse_float=lambda digits: _noted_float(digits, odd),
            parse_constant=lambda word: _noted_float(word, odd),
        )
    except json.JSONDecodeError as exc:
        return False, None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return False, None, f"invalid JSON: {json_error(exc)}"
    except RecursionError:
        return False, None, "JSON nested too deeply"
    if long_ints:
        problems.append(
            Problem(
                file=name,
                what=f"read {plural(len(long_ints), 'integer')} as null (the first has "
                f"{long_ints[0]:,} digits); the rest of the file as written",
                why=f"integers over {sys.get_int_max_str_digits():,} digits cannot be read",
            )
        )
    if odd:  # named where they are: a JSON output writes null in their place
        problems.append(
            Problem(file=name, what="kept the numbers as read", why=nonfinite_why(nonfinite(value)))
        )
    return True, _depth_checked(value, text, name, problems), ""


def _noted_float(digits: str, odd: list[str]) -> float:
    """json's float for `digits` (or NaN, Infinity, -Infinity), noted in `odd` when it is no
    finite number."""
    value = float(digits)
    if not math.isfinite(value):
        odd.append(digits)
    return value


def _bounded_int(digits: str, long_ints: list[int]) -> int | None:
    """json's int for `digits`, or None (counted in `long_ints`) past Python's digit limit:
    one such number drops that value, not the whole file."""
    size = len(digits.lstrip("-"))
    if size > sys.get_int_max_str_digits() > 0:
        long_ints.append(size)
        return None
    return int(digits)


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
        why = exc.strerror if exc.errno == errno.EFBIG and exc.strerror else str(exc)
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
