"""The project's own promises: the README's set-up commands are the ones CI runs."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", text, re.DOTALL)
    assert block, "README.md has no Quick start bash block"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert "demo" in commands[0] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[1] in ci.splitlines()


def test_cli_help_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("demo", "saw", "audit", "letta-restore"):
        assert command in out.stdout
