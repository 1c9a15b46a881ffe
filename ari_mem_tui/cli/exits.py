"""The exit codes of every command, in one place (scripts and CI depend on them)."""

EXIT_OK = 0
EXIT_FINDINGS = 1  # audit found leaks or scope violations; health found starved nodes
EXIT_REFUSED = 1  # letta-restore refused to write (the agent already holds passages)
EXIT_UNREADABLE = 2  # the input cannot be read: not a checkpoint, server unreachable, bad id
EXIT_INTERNAL = 3  # a bug of ours: one line on stderr (--debug shows the traceback)
EXIT_INTERRUPTED = 130  # Ctrl+C
EXIT_PIPE = 141  # the reader of stdout went away (`… | head`), as a shell reports SIGPIPE
