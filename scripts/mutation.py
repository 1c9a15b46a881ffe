"""A mutation run over the fidelity core: does any test notice when a rule of the replay changes?

Each mutant changes one thing in one function: a comparison flipped (`<` ↔ `<=`, `==` ↔ `!=`,
`in` ↔ `not in`, `is` ↔ `is not`), `and` ↔ `or`, a condition negated (`if`, `while`, `x if c
else y`), an integer ±1, or a statement dropped (replaced by `pass`). For each, only the tests
that run its line are run (found once, by tracing the test files given), in a child of one
process that imported everything once, with the mutant swapped into the function's code (and
written into a copy of the package that the tests' own child processes import); a mutant is
killed when one of them fails (or hangs past the time limit), and survives when all pass.
Survivors are listed with their place and change, to be killed by a test or explained: a
survivor whose reason `scripts/mutation-explained.txt` keeps (equivalent: no input tells it from
the original; speed only: a cache recomputed gives the same answers) is counted apart from the
unexplained ones, and a reason whose mutant a test kills, or that matches no mutant, is said
(README, "Exact rankings", keeps the last score).

    python scripts/mutation.py                     # the default targets and tests below
    python scripts/mutation.py --target ari_mem_tui/search/in_memory.py
    python scripts/mutation.py --list              # the mutants only, none run
    python scripts/mutation.py --again OUT.txt     # only the survivors an earlier run printed

A script, not a test: a full run takes minutes (each mutant is a pytest process).
"""

from __future__ import annotations

import argparse
import ast
import copy
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ari_mem_tui"
EXPLAINED = Path(__file__).with_name("mutation-explained.txt")

# file: the functions mutated (None: every function of the file)
TARGETS: dict[str, tuple[str, ...] | None] = {
    "ari_mem_tui/search/startup.py": None,
    "ari_mem_tui/search/replay.py": None,
    "ari_mem_tui/search/in_memory.py": None,
    "ari_mem_tui/search/run_ranker.py": (
        "micros",
        "kept",
        "size_before",
        "scores_of",
        "_tie_notes",
    ),
    # (_row_passage and _objects: _call_passages's rows, split out of it)
    "ari_mem_tui/audit.py": ("_event_passages", "_call_passages", "_row_passage", "_objects"),
    "ari_mem_tui/search/fidelity.py": (
        "node_verdict",
        "run_verdict",
        "_replay_ranker",
        "_run_model",
    ),
    "ari_mem_tui/search/check.py": (
        "recorded_searches",
        "check_search",
        "check_run",
        "_other_ranker",
        "_sum_up",
    ),
    "ari_mem_tui/search/run_hash.py": ("probe_events", "find_hash"),
    "ari_mem_tui/search/causes.py": ("late_inserts", "_writes"),
}
TESTS = (
    "tests/test_mutants.py",
    "tests/test_mutants_check.py",
    "tests/test_check_causes.py",
    "tests/test_search_replay.py",
    "tests/test_ari_like.py",
    "tests/test_replay_check.py",
    "tests/test_run_embedder.py",
    "tests/test_audit.py",
    "tests/test_audit_findings.py",
    "tests/test_origin.py",
    "tests/test_audit_second_hand.py",
    "tests/test_why.py",
    "tests/test_run_embedder_cli.py",
    "tests/test_search_rankers.py",
    "tests/test_report.py",
    "tests/test_demo_recordings.py",
)
SWAPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
DROPPED = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Continue, ast.Break, ast.Return)


@dataclass
class Mutant:
    file: str
    line: int
    function: str
    change: str
    source: str  # the whole mutated module

    def where(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"

    def key(self) -> tuple[str, str]:
        """What an explanation names: the mutant without its line number, and its line's
        code (so that a reason follows the code when lines move)."""
        return f"{self.file} ({self.function}): {self.change}", _lines(self.file)[self.line - 1]


@functools.cache
def _lines(file: str) -> list[str]:
    return [line.strip() for line in (ROOT / file).read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- survivors explained


@dataclass
class Reason:
    kind: str  # "equivalent" or "speed only"
    why: str


def explained(path: Path = EXPLAINED) -> dict[tuple[str, str], Reason]:
    """The kept reasons: records of three lines, `where:` (a mutant as the run prints it,
    without its line number), `line:` (the mutated line's code) and `why:` (its kind, a colon,
    the reason), one record per paragraph; `#` lines are comments."""
    reasons: dict[tuple[str, str], Reason] = {}
    if not path.is_file():
        return reasons
    fields: dict[str, str] = {}
    for raw in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            if fields:
                kind, _, why = fields["why"].partition(": ")
                reasons[(fields["where"], fields["line"])] = Reason(kind, why)
            fields = {}
            continue
        name, _, value = line.partition(": ")
        if name in fields or name not in ("where", "line", "why"):  # (a continued reason)
            fields["why"] = f"{fields.get('why', '')} {line}"
        else:
            fields[name] = value
    return reasons


# ---------------------------------------------------------------- making mutants


class _Finder(ast.NodeVisitor):
    """Every mutation point of the chosen functions, as (node, qualified name, change)."""

    def __init__(self, functions: tuple[str, ...] | None) -> None:
        self.functions = functions
        self.stack: list[tuple[str, bool]] = []  # (name, a function?): a class is a holder
        self.points: list[tuple[ast.AST, str, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.stack.append((node.name, True))
        self.generic_visit(node)
        self.stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.stack.append((node.name, False))
        self.generic_visit(node)
        self.stack.pop()

    def _inside(self) -> str | None:
        names = [name for name, function in self.stack if function]
        if not names:
            return None
        if self.functions is None or any(name in self.functions for name in names):
            return ".".join(name for name, _ in self.stack)
        return None

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        """An f-string's parts are words, not rules: no mutant inside one."""

    def generic_visit(self, node: ast.AST) -> None:
        function = self._inside()
        if function is not None:
            for change in _changes(node):
                self.points.append((node, function, change))
        super().generic_visit(node)


def _changes(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in SWAPS:
                yield f"compare {i}: {type(op).__name__} -> {SWAPS[type(op)].__name__}"
    elif isinstance(node, ast.BoolOp):
        yield "and <-> or"
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield "negate condition"
    elif isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) < 10**6:
        yield f"{node.value} -> {node.value + 1}"
        yield f"{node.value} -> {node.value - 1}"
    if isinstance(node, DROPPED) and not _docstring(node):
        yield "drop statement"


def _docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _apply(node: ast.AST, change: str) -> ast.AST:
    """The changed node (a copy)."""
    new = copy.deepcopy(node)
    if change.startswith("compare"):
        i = int(change.split()[1].rstrip(":"))
        new.ops[i] = SWAPS[type(new.ops[i])]()
    elif change == "and <-> or":
        new.op = ast.Or() if isinstance(new.op, ast.And) else ast.And()
    elif change == "negate condition":
        test = new.test
        new.test = (
            test.operand
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            else ast.UnaryOp(op=ast.Not(), operand=test)
        )
    elif change == "drop statement":
        return ast.copy_location(ast.Pass(), node)
    else:
        new.value = int(change.split(" -> ")[1])
    return new


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, change: str) -> None:
        self.target, self.change = target, change

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return _apply(node, self.change)
        return super().visit(node)


def mutants(file: str, functions: tuple[str, ...] | None) -> list[Mutant]:
    text = (ROOT / file).read_text(encoding="utf-8")
    tree = ast.parse(text)
    finder = _Finder(functions)
    finder.visit(tree)
    made = []
    for node, function, change in finder.points:
        fresh = ast.parse(text)  # a tree of its own per mutant, the point found by position
        mutated = ast.fix_missing_locations(_Replace(_same(fresh, node), change).visit(fresh))
        made.append(Mutant(file, node.lineno, function, change, ast.unparse(mutated)))
    return made


def _same(tree: ast.AST, node: ast.AST) -> ast.AST:
    """The node of `tree` (a fresh parse of the same text) at `node`'s place."""
    for candidate in ast.walk(tree):
        if (
            type(candidate) is type(node)
            and getattr(candidate, "lineno", None) == node.lineno
            and getattr(candidate, "col_offset", None) == node.col_offset
            and getattr(candidate, "end_col_offset", None) == node.end_col_offset
        ):
            return candidate
    raise LookupError(f"no twin of line {node.lineno}")


# ---------------------------------------------------------------- which tests cover a line

TRACER = r"""
import json, sys, threading, pytest
FILES = set(json.loads(sys.argv.pop(1)))
OUT = sys.argv.pop(1)
covered = {}
current = [None]

def tracer(frame, event, arg):
    name = frame.f_code.co_filename
    if name not in FILES:
        return None
    def local(frame, event, arg):
        if event == "line" and current[0] is not None:
            covered.setdefault(current[0], set()).add(f"{frame.f_code.co_filename}:{frame.f_lineno}")
        return local
    return local

import time
took = {}

class Plugin:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        current[0] = item.nodeid
        started = time.monotonic()
        sys.settrace(tracer); threading.settrace(tracer)
        yield
        sys.settrace(None); threading.settrace(None)
        took[item.nodeid] = time.monotonic() - started
        current[0] = None

code = pytest.main(sys.argv[1:], plugins=[Plugin()])
with open(OUT, "w") as fh:
    json.dump({"covered": {k: sorted(v) for k, v in covered.items()}, "took": took}, fh)
sys.exit(0 if code in (0, 1) else code)
"""


def coverage(
    files: list[str], tests: list[str], cache: Path
) -> tuple[dict[str, set[str]], dict[str, float]]:
    """Test id -> `file:line`s of `files` it runs, and test id -> seconds it took (traced
    once, kept in `cache` while the sources and tests are unchanged)."""
    digest = hashlib.sha1()
    for path in sorted({*files, *tests, "tests/conftest.py"}):
        digest.update(path.encode() + (ROOT / path).read_bytes())
    key = digest.hexdigest()
    if cache.is_file():
        kept = json.loads(cache.read_text())
        if kept.get("key") == key:
            return {k: set(v) for k, v in kept["covered"].items()}, kept["took"]
    absolute = [str(ROOT / f) for f in files]
    out = cache.with_suffix(".tmp")
    argv = [sys.executable, "-c", TRACER, json.dumps(absolute), str(out), "-q", "-p",
            "no:cacheprovider", "-n", "0", *tests]  # fmt: skip
    print(f"tracing {len(tests)} test files once to find which tests run which line …", flush=True)
    subprocess.run(argv, cwd=ROOT, env=_env(ROOT), check=True, stdout=subprocess.DEVNULL)
    found = json.loads(out.read_text())
    out.unlink()
    prefix = str(ROOT) + "/"
    covered = {k: {line.removeprefix(prefix) for line in v} for k, v in found["covered"].items()}
    kept = {"key": key, "covered": {k: sorted(v) for k, v in covered.items()}}
    cache.write_text(json.dumps({**kept, "took": found["took"]}))
    return covered, found["took"]


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{root}{os.pathsep}{ROOT}"
    env.pop("PYTEST_ADDOPTS", None)
    return env


# ---------------------------------------------------------------- running them
#
# One process imports everything once (pytest, the package, Textual, numpy: seconds on a busy
# machine), then forks a child per mutant. The child swaps the mutated function's code into the
# function object every caller holds (`__code__`), writes the mutated file into a copy of the
# checkout that the tests' own child processes import first (PYTHONPATH), and runs the covering
# tests with `pytest.main`, quickest first, stopping at the first failure.


def _module(file: str) -> str:
    return file.removesuffix(".py").replace("/", ".")


def _functions(module: object, qualname: str) -> list[object]:
    """The function objects of `qualname` in `module` (a method's through its class; a
    property's getter; a nested function's outer function)."""
    parts = qualname.split(".")
    holder: object = module
    for i, part in enumerate(parts):
        found = getattr(holder, "__dict__", {}).get(part)
        if found is None:
            return []
        if isinstance(found, (staticmethod, classmethod)):
            found = found.__func__
        if isinstance(found, property):
            found = found.fget
        if callable(found) and hasattr(found, "__code__"):
            return [found]  # (a nested function lives in this one's code)
        holder = found
        del i
    return []


def _code(code: object, qualname: str) -> object | None:
    """The code object of `qualname` within a module's compiled code."""
    stack = [code]
    while stack:
        item = stack.pop()
        if getattr(item, "co_qualname", None) == qualname:
            return item
        stack.extend(c for c in getattr(item, "co_consts", ()) if hasattr(c, "co_code"))
    return None


def _patch(mutant: Mutant) -> bool:
    """Swap the mutated function's code in (False: it cannot be, e.g. its free variables
    changed: the copy on disk alone carries the mutant, for child processes)."""
    import importlib

    module = importlib.import_module(_module(mutant.file))
    compiled = compile(mutant.source, str(ROOT / mutant.file), "exec")
    targets = _functions(module, mutant.function)
    new = _code(compiled, getattr(targets[0], "__qualname__", "")) if targets else None
    if not targets or new is None:
        return False
    try:
        targets[0].__code__ = new  # type: ignore[attr-defined]
    except ValueError:
        return False
    return True


def run_mutant(mutant: Mutant, tests: list[str], copy_root: Path, timeout: float) -> str:
    """ "killed", "survived", "uncovered" or "timeout" (killed: it hangs)."""
    if not tests:
        return "uncovered"
    target = copy_root / mutant.file
    original = target.read_text(encoding="utf-8")
    target.write_text(mutant.source, encoding="utf-8")
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _child(mutant, tests, copy_root)
        return _wait(pid, timeout)
    finally:
        target.write_text(original, encoding="utf-8")


def _child(mutant: Mutant, tests: list[str], copy_root: Path) -> None:
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.environ.update({"PYTHONPATH": _env(copy_root)["PYTHONPATH"]})
        os.environ.pop("PYTEST_ADDOPTS", None)
        _patch(mutant)
        import pytest

        basetemp = tempfile.mkdtemp(prefix="ari-mutant-")
        argv = ["-x", "-q", "-p", "no:cacheprovider", "-n", "0", "--basetemp", basetemp, *tests]
        code = 0 if pytest.main(argv) == 0 else 1
        shutil.rmtree(basetemp, ignore_errors=True)
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.05)


def _warm(files: list[str]) -> None:
    """What every child would import: once, here."""
    import importlib

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (no thread pool before a fork)
    for name in ("pytest", "numpy", "textual", "ari_mem_tui.tui.app", "ari_mem_tui.cli"):
        importlib.import_module(name)
    for file in files:
        importlib.import_module(_module(file))


def _copy(where: Path) -> Path:
    """A copy of the checkout a mutant can be written into (the package, tests, scripts)."""
    for name in ("ari_mem_tui", "tests", "scripts", "pyproject.toml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, where / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, where / name)
    return where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", help="a file to mutate (every function)")
    parser.add_argument("--test", action="append", help="a test file (default: the set above)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants, run none")
    parser.add_argument(
        "--again", type=Path, help="run only the survivors a previous run's output lists"
    )
    args = parser.parse_args(argv)
    targets = {t: None for t in args.target} if args.target else TARGETS
    tests = args.test or list(TESTS)
    made = [m for file, functions in targets.items() for m in mutants(file, functions)]
    every = {m.key() for m in made}
    if args.again is not None:
        said = args.again.read_text(encoding="utf-8")
        survivors = {line.split(": ", 1)[1] for line in said.splitlines()
                     if line.lstrip().startswith(("survived", "explained"))}  # fmt: skip
        made = [m for m in made if f"{m.where()}: {m.change}" in survivors]
    reasons = explained()
    if args.list:
        for m in made:
            reason = reasons.get(m.key())
            print(f"{m.where()}: {m.change}" + (f"  [explained: {reason.kind}]" if reason else ""))
        print(f"{len(made)} mutants, {sum(m.key() in reasons for m in made)} with a kept reason")
        return 0
    cache = ROOT / ".mutation-coverage.json"
    covered, took = coverage(list(targets), tests, cache)
    by_line: dict[str, list[str]] = {}
    for test, lines in covered.items():
        for line in lines:
            by_line.setdefault(line, []).append(test)
    started = time.monotonic()
    results: dict[int, str] = {}
    os.chdir(ROOT)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    _warm(list(targets))
    with tempfile.TemporaryDirectory(prefix="ari-mutation-") as tmp:
        root = _copy(Path(tmp) / "copy")
        for i, m in enumerate(made):
            # the quickest first: with -x the first failure ends the mutant's run
            chosen = sorted(set(by_line.get(f"{m.file}:{m.line}", [])), key=took.get)
            results[i] = run_mutant(m, chosen, root, args.timeout)
            said = results[i] + (
                " (explained)" if results[i] == "survived" and m.key() in reasons else ""
            )
            print(f"{i + 1:4}/{len(made)} {said:9} {m.where()}: {m.change}", flush=True)
    return report(made, results, time.monotonic() - started, reasons, every)


def report(
    made: list[Mutant],
    results: dict[int, str],
    elapsed: float,
    reasons: dict[tuple[str, str], Reason] | None = None,
    every: set[tuple[str, str]] | None = None,
) -> int:
    """The score: killed, explained (by kind) and unexplained survivors of all `made`; each
    survivor; and the kept reasons that no longer hold: their mutant killed, or none of
    `every` mutant of the targets theirs (the code changed)."""
    reasons = {} if reasons is None else reasons
    killed = sum(1 for r in results.values() if r in ("killed", "timeout"))
    survivors = [(m, results[i]) for i, m in enumerate(made) if results.get(i) in ("survived", "uncovered")]  # fmt: skip
    kept = [(m, reasons[m.key()]) for m, _ in survivors if m.key() in reasons]
    kinds = Counter(reason.kind for _, reason in kept)
    shown = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "none"
    unexplained = len(survivors) - len(kept)
    print(
        f"\n{len(made)} mutants: {killed} killed ({killed / max(1, len(made)):.1%}),"
        f" {len(kept)} explained ({shown}), {unexplained} unexplained survivors; {elapsed:.0f} s"
    )
    for m, r in survivors:
        if m.key() not in reasons:
            print(f"  survived{' (no test runs it)' if r == 'uncovered' else ''}: {m.where()}: {m.change}")  # fmt: skip
    for m, reason in kept:
        print(f"  explained ({reason.kind}): {m.where()}: {m.change}")
    held = {m.key() for m, _ in kept}
    ran = {m.key() for i, m in enumerate(made) if i in results}
    for key in reasons:
        if key in ran and key not in held:
            print(f"  a kept reason is wrong, a test kills its mutant: {key[0]}: {key[1]}")
        elif every is not None and key not in every:
            print(f"  a kept reason matches no mutant (its code changed?): {key[0]}: {key[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
