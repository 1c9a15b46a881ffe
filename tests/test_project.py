"""The project's own promises: the README's set-up commands are the ones CI runs."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", text, re.DOTALL)
    assert block, "README.md has no Quick start bash block"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_makes_a_venv_then_has_two_setup_commands():
    """A fresh Debian or Ubuntu refuses `pip install` outside a virtual environment: the venv
    comes first, then the demo, then the tests."""
    commands = readme_commands()
    assert len(commands) == 3
    assert commands[0].startswith("python3 -m venv .venv") and "activate" in commands[0]
    assert "demo" in commands[1] and "pytest" in commands[2]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert readme_commands()[-1] in ci.splitlines()


def test_every_script_the_project_names_exists():
    """pyproject's markers and README name scripts by path: each must be there (the
    `letta_live` marker named `scripts/letta-server`, which never existed)."""
    named: set[str] = set()
    for source in ("pyproject.toml", "README.md"):
        text = (ROOT / source).read_text(encoding="utf-8")
        named |= set(re.findall(r"\b((?:scripts|benchmarks)/[\w./-]+\.(?:py|sh))", text))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = " ".join(project["tool"]["pytest"]["ini_options"]["markers"])
    assert "scripts/letta/live-tests.sh" in markers
    assert named and [n for n in sorted(named) if not (ROOT / n).is_file()] == []


def test_cli_help_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "ari_mem_tui", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("demo", "saw", "audit", "letta-restore"):
        assert command in out.stdout


def test_the_test_extra_installs_what_addopts_asks_for():
    """README's `python -m pytest` runs on xdist workers (addopts `-n`): CI's
    `pip install -e '.[test]'` must bring pytest-xdist, or that command fails on a fresh clone."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = shlex.split(project["tool"]["pytest"]["ini_options"]["addopts"])
    test_extra = project["project"]["optional-dependencies"]["test"]
    assert "-n" in addopts
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in test_extra)


def test_the_live_suite_runs_in_one_process():
    """Each `pytest -m letta_live` of scripts/letta/live-tests.sh says `-n 0`: its phases follow
    one server's state and record the ARI-faithful run into it once."""
    script = (ROOT / "scripts" / "letta" / "live-tests.sh").read_text(encoding="utf-8")
    runs = [line for line in script.splitlines() if "-m pytest" in line]
    assert len(runs) == 3
    assert all(" -n 0 " in line and "-m letta_live" in line for line in runs)
