"""The exit codes of every command, in one place (scripts and CI depend on them), and the
console every text output is printed through, so that a reader closing the pipe ends it the
same way for text as for JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

EXIT_OK = 0
EXIT_FINDINGS = 1  # audit found leaks or scope violations; health found starved nodes
EXIT_REFUSED = 1  # letta-restore refused to write (the agent already holds passages)
EXIT_UNREADABLE = 2  # the input cannot be read: not a checkpoint, server unreachable, bad id
EXIT_INTERNAL = 3  # a bug of ours: one line on stderr (--debug shows the traceback)
EXIT_INTERRUPTED = 130  # Ctrl+C
EXIT_PIPE = 141  # the reader of stdout went away (`… | head`), as a shell reports SIGPIPE


def console(**kwargs: Any) -> Console:
    """The console a command prints its text through: Rich's, but a closed pipe (`summary |
    head -1`) is the BrokenPipeError that `main` turns into EXIT_PIPE, as for `--json`
    (Rich's own handler exits 1, which a script reads as findings). Rich is imported here,
    by the commands that print text, not by `demo --out`."""
    from rich.console import Console  # noqa: PLC0415

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole(**kwargs)
