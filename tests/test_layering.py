"""The code's shape is checked, not hoped for: the layers of pyproject.toml's import-linter
contracts hold (Textual only in tui/, argparse only in cli/, no package imports one above it),
and no import goes round in a circle inside any package: not between two modules, not through
an import made only for type checking or lazily inside a function, not between two
subpackages (tui/widgets/ and tui/screens/ importing each other)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import networkx as nx

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(cwd: Path, *env_path: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(no_cache=True))"
    )
    env = {"PYTHONPATH": ":".join(str(p) for p in env_path), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", code],
        check=False,  # the exit code is the verdict under test
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def import_cycles(package: str) -> list[list[str]]:
    """Every circle of imports among the members of one package, for every package under
    `package`: a member is a module, or a subpackage taken whole. Imports under `TYPE_CHECKING`
    and inside functions count: they tie the modules together as much as any other."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            parent, a, b = _siblings(module, imported)
            if a != b:
                edges.add_edge(f"{parent}.{a}", f"{parent}.{b}")
    return sorted(sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1)


def _siblings(a: str, b: str) -> tuple[str, str, str]:
    """The innermost package holding both modules, and the member of it each one is in."""
    pa, pb = a.split("."), b.split(".")
    common = 0
    while common < min(len(pa), len(pb)) - 1 and pa[common] == pb[common]:
        common += 1
    return ".".join(pa[:common]), pa[common], pb[common]


def test_the_import_contracts_of_pyproject_hold() -> None:
    result = lint_imports(ROOT, ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "3 kept, 0 broken" in result.stdout


def test_every_top_level_module_has_a_layer() -> None:
    """A new module at the top of the package must be placed in the layers, or it escapes them."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    package = ROOT / "ari_mem_tui"
    found = {
        f"ari_mem_tui.{p.stem}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert found - placed == set()


def test_no_import_circle_inside_any_package() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        assert import_cycles("ari_mem_tui") == []
    finally:
        sys.path.remove(str(ROOT))


def test_the_app_is_one_class_over_textual_s_and_its_panes_are_a_screen() -> None:
    """The app holds the run and the shared state, the main screen the panes (issue 30 §4): no
    mixin of this package in either, and tui/app.py stays short enough to read in one go."""
    from textual.app import App
    from textual.screen import Screen

    from ari_mem_tui.tui.app import AriMemApp
    from ari_mem_tui.tui.main_screen import MainScreen

    ours = [c for c in AriMemApp.__mro__ if c.__module__.startswith("ari_mem_tui")]
    assert ours == [AriMemApp] and AriMemApp.__bases__ == (App,)
    ours = [c for c in MainScreen.__mro__ if c.__module__.startswith("ari_mem_tui")]
    assert ours == [MainScreen] and issubclass(MainScreen, Screen)
    lines = (ROOT / "ari_mem_tui" / "tui" / "app.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, lines


def _package(where: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = where / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return where


def test_the_checks_catch_a_layer_breach_and_a_cycle(tmp_path: Path) -> None:
    """The same checks on a small package that breaks both rules: they must say so."""
    where = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "def f():\n    import argparse\n    from pkg import high\n",
            "high.py": "from pkg import low\n",
            # a circle only a type checker sees, and one between two subpackages
            "typed_a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from pkg import typed_b\n",
            "typed_b.py": "from pkg import typed_a\n",
            "sub1/__init__.py": "",
            "sub1/x.py": "from pkg.sub2 import y\n",
            "sub2/__init__.py": "",
            "sub2/y.py": "",
            "sub2/z.py": "from pkg.sub1 import x\n",
        },
    )
    (where / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.importlinter]
            root_package = "pkg"
            include_external_packages = true
            [[tool.importlinter.contracts]]
            name = "layers"
            type = "layers"
            layers = ["pkg.high", "pkg.low"]
            [[tool.importlinter.contracts]]
            name = "no argparse"
            type = "forbidden"
            source_modules = ["pkg.low"]
            forbidden_modules = ["argparse"]
            """
        )
    )
    result = lint_imports(where, where)
    assert result.returncode == 1
    assert "0 kept, 2 broken" in result.stdout
    sys.path.insert(0, str(where))
    try:
        assert import_cycles("pkg") == [
            ["pkg.high", "pkg.low"],
            ["pkg.sub1", "pkg.sub2"],
            ["pkg.typed_a", "pkg.typed_b"],
        ]
    finally:
        sys.path.remove(str(where))
