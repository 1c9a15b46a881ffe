"""The backup read ahead in a child process while this one reads the tree.

A 10k-node run's backup takes ~0.9 s to read and its tree ~1.1 s, one after the other on one
core of a machine that has two: forked as the load begins, a child reads the backup into
columns of its own and sends them through a pipe (pickled: ~60 MB at 10k, ~0.1 s to take in);
the load takes them where it would have read the backup itself, so its rows, strings and
problems are the ones the read in this process gives, in the same order. Any failure on the
way (no fork, a child that dies, a payload that does not unpickle) costs only the time: the
load reads the backup itself then. A small backup is read in this process (a fork costs more
than it saves).
"""

from __future__ import annotations

import contextlib
import os
import pickle
from pathlib import Path
from typing import Any

from ari_mem_tui.checkpoint.backup import BACKUP_FILE, BackupResult, read_backup
from ari_mem_tui.checkpoint.jsonfile import usable_file
from ari_mem_tui.model import Problem, StringTable
from ari_mem_tui.model.columns import EntryBuilder

AHEAD_BYTES = 1 << 20  # a backup (compressed) smaller than this is read in this process


class BackupAhead:
    """A child reading `path`'s backup, forked when made (`pid` None: none was)."""

    def __init__(self, path: Path) -> None:
        self.pid: int | None = None
        self.fd = -1
        if not _worth_it(path):
            return
        try:
            read_end, write_end = os.pipe()
            pid = os.fork()
        except OSError:
            return
        if pid == 0:  # the child: read, send, end (never returns)
            os.close(read_end)
            _child(path, write_end)
        os.close(write_end)
        self.pid, self.fd = pid, read_end

    def take(self, rows: EntryBuilder, problems: list[Problem]) -> BackupResult | None:
        """The backup as the child read it, its rows put into `rows` (an empty builder of this
        load's strings, none coded yet) and its problems appended to `problems`; None when
        there is no such read (the caller reads the backup itself)."""
        data = self._received()
        if data is None or len(rows) or len(rows.strings):
            return None
        try:
            strings, builder, fields, said = pickle.loads(data)  # (our own child's bytes)
        except Exception:  # noqa: BLE001 - anything amiss: read it here instead
            return None
        rows.strings.codes(strings)  # (an empty table: each string its code in the child's)
        builder.strings = rows.strings
        rows.__dict__.update(builder.__dict__)
        problems.extend(Problem.from_data(p) for p in said)
        return BackupResult(rows=rows, **fields)

    def close(self) -> None:
        """Let the child go whatever it was doing (its pipe closed: it ends), and reap it."""
        if self.pid is None:
            return
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)
        self.pid = None

    def _received(self) -> bytes | None:
        if self.pid is None:
            return None
        parts = []
        try:
            while chunk := os.read(self.fd, 1 << 20):
                parts.append(chunk)
        except OSError:
            return None
        finally:
            self.close()
        return b"".join(parts) or None


def _worth_it(path: Path) -> bool:
    """A regular backup file big enough to pay for a fork, and a system that forks."""
    if not hasattr(os, "fork"):
        return False
    try:
        info = os.stat(path / BACKUP_FILE, follow_symlinks=False)
    except OSError:
        return False
    return info.st_size >= AHEAD_BYTES and (info.st_mode & 0o170000) == 0o100000


def _child(path: Path, fd: int) -> None:
    """Read the backup as the load would (nothing when it would not), send it, exit."""
    code = 1
    try:
        payload = _read(path)
        if payload is not None:
            _write_all(fd, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent reads the backup itself then
        pass
    finally:
        os._exit(code)


def _read(path: Path) -> tuple[list[str], EntryBuilder, dict[str, Any], list[Any]] | None:
    if not usable_file(path / BACKUP_FILE, BACKUP_FILE, []):
        return None  # (the load says why, as it checks the file itself)
    strings = StringTable()
    problems: list[Problem] = []
    result = read_backup(path / BACKUP_FILE, BACKUP_FILE, problems, EntryBuilder(strings))
    builder = result.rows
    builder.flush()
    builder.strings = None  # type: ignore[assignment]  # (sent as a list: below)
    fields = {"start": result.start, "end": result.end, "core_seed": result.core_seed}
    fields["records"] = result.records
    return (
        [strings[i] for i in range(len(strings))],
        builder,
        fields,
        [p.as_data() for p in problems],
    )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
