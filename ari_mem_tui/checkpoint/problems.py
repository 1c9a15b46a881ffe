"""Per-file problem reporting with a cap, so one garbage file cannot bury every other problem."""

from __future__ import annotations

from typing import Literal

from ari_mem_tui.model import Problem

Severity = Literal["info", "warning", "error"]


class FileProblems:
    """Collects line-level problems of one file; beyond `cap`, they are only counted."""

    def __init__(self, file: str, problems: list[Problem], cap: int = 50) -> None:
        self.file = file
        self.problems = problems
        self.cap = cap
        self.count = 0
        self.hidden = 0
        self.first_hidden = ""

    def add(self, where: str, what: str, why: str, severity: Severity = "warning") -> None:
        self.count += 1
        if self.count <= self.cap:
            self.problems.append(
                Problem(file=self.file, where=where, what=what, why=why, severity=severity)
            )
        else:
            self.hidden += 1
            self.first_hidden = self.first_hidden or where

    def decode_line(self, raw: bytes, line_no: int) -> str | None:
        """The line as text, or None (and a problem) when it is not UTF-8."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.add(
                f"line {line_no}",
                "skipped the line",
                f"invalid UTF-8 at byte {exc.start} of the line",
            )
            return None

    def close(self) -> None:
        """Report the problems beyond the cap as one line."""
        if self.hidden:
            self.problems.append(
                Problem(
                    file=self.file,
                    where=f"from {self.first_hidden}",
                    what=f"{self.hidden} more problems like the ones above, not listed",
                    why="too many problems in one file",
                )
            )
            self.hidden = 0
