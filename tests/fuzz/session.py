"""One fuzzing session: the seed runs, the servers, the readers, and what was tried and found.

`Session.case(chooser)` draws one input: a reader (a file of a run, a file of our cache or
settings, an embedding endpoint's or a Letta server's answers), damages it with `damage.py`,
runs two or three real commands on it (the CLI's `main` in a forked child, or the TUI headless,
driven by keys), and judges each with `runner.judge`. A failure keeps its input under
`failures/` with `case.json` (seed, input number, reader, damage, command, what broke), which
`scripts/fuzz.py --replay DIR` runs again in a fresh process (`--seed S --case N` makes the
input again).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import stat
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from tests.fuzz import damage
from tests.fuzz.damage import Chooser, Damage, Seeded
from tests.fuzz.runner import Outcome, fingerprint, judge, run_forked, strict_json
from tests.fuzz.seeds import SEED_RUNS, Seed, make_runs, node_ids, sound_answers
from tests.fuzz.servers import LETTA_ROUTES, AnswerDamage, DamagingEmbeddings, DamagingLetta

KEEP_PER_KIND = 3  # reproducers kept per distinct failure
BIG = 64 << 20  # a file past this is kept as a sparse file of its size
TUI_KEYS = ["j", "j", "k", "l", "h", "1", "2", "3", "4", "5", "6", "z", "M", "a", "s", "w", "d"]
TUI_KEYS += ["enter", "escape", "tab", "n", "f", "escape", "question_mark", "escape", "H", "g"]
TUI_KEYS += ["e", "y"]  # a dossier exported (asked, then written), its JSON judged too


@dataclass
class Command:
    key: str  # what the counts and the sound answers call it
    argv: list[str]  # the CLI's arguments, or ["tui", run, keys...]
    compare: bool = False  # a damaged cache must give the sound answer


@dataclass
class Case:
    reader: str
    steps: list[str]
    commands: list[Command]
    env: dict[str, str]
    checkpoint: Path | None  # hashed before and after every command
    sound: dict[str, str] = field(default_factory=dict)
    answers: AnswerDamage | None = None  # a server's answers damaged while it runs
    server: Any = None


@dataclass
class Failure:
    kind: str  # the first broken invariant, its numbers blurred (one kind per bug)
    reader: str
    command: str
    what: list[str]
    steps: list[str]
    saved: Path | None


def case_seed(seed: int, number: int) -> int:
    """Input `number`'s own seed: any input is made again alone (`--seed S --case N`)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{number}".encode()).digest()[:8], "big")


def blur(text: str) -> str:
    """A failure's kind: its text with numbers and quoted values blurred."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    return re.sub(r"\d+(\.\d+)?", "N", text)[:140]


class Session:
    def __init__(
        self,
        out: Path,
        seed: int,
        say: Callable[[str], None] = print,
        runs: tuple[str, ...] = SEED_RUNS,
        prepare: bool = True,
        only: list[str] | None = None,
    ) -> None:
        """`runs`: which seed runs; `prepare=False` (the harness's own tests) makes no MiniLM
        vectors and no sound answers for them."""
        self.out, self.seed, self.say = out, seed, say
        self.runs, self.prepare = runs, prepare
        self.work = out / "work"
        self.tried: Counter[str] = Counter()
        self.ran: Counter[str] = Counter()
        self.failures: list[Failure] = []
        self.kinds: Counter[str] = Counter()
        self.number = 0
        self.case_no = 0
        self.repeats = 0
        self.seen: set[str] = set()
        self.last = ""
        self.embeddings = DamagingEmbeddings(dim=16).start()
        self.letta = DamagingLetta().start()
        self.seeds = self._seeds()
        self.readers = {
            name: made
            for name, made in self._readers().items()
            if not only or any(part in name for part in only)
        }

    def close(self) -> None:
        self.embeddings.stop()
        self.letta.stop()

    # ---------------------------------------------------------------- set-up
    def _env(self, cache: Path, config: Path) -> dict[str, str]:
        return {
            "ARI_MEM_TUI_CACHE": str(cache),
            "ARI_MEM_TUI_CONFIG_DIR": str(config),
            "ARI_MEM_TUI_EXPORT_DIR": str(config / "exports"),
            "COLUMNS": "200",
        }

    def _seeds(self) -> list[Seed]:
        from tests.letta_helpers import as_original_server

        seeds = []
        for name, run in make_runs(self.out / "seeds", self.runs).items():
            seed = Seed(name, run, node_ids(run), self.out / "seeds" / "caches" / name)
            shutil.rmtree(seed.cache, ignore_errors=True)
            if self.prepare:
                seed.minilm = self._minilm(name, run)
                shutil.copytree(seed.minilm, seed.cache)
                env = self._env(seed.cache, self.out / "seeds" / "config")
                commands = {c.key: c.argv for c in self._cache_commands(seed)}
                seed.clean = sound_answers(seed, commands, env, self.work)
            seed.letta_agent = as_original_server(self.letta, run)
            self.say(f"seed {name}: {len(seed.nodes)} nodes, {len(seed.clean)} sound answers")
            seeds.append(seed)
        self.demo_out = self.out / "seeds" / "demo-out"
        if not (self.demo_out / ".ari_mem_tui_demo.json").exists():
            shutil.rmtree(self.demo_out, ignore_errors=True)
            self._cli(["demo", "--out", str(self.demo_out), "--nodes", "3", *DEMO_FLAGS], {})
        return seeds

    def _minilm(self, name: str, run: Path) -> Path:
        """MiniLM's vectors of the seed's texts (kept between sessions): a case's cache starts
        with them, so that a ranker falling back to MiniLM (the run model's stand-in) embeds
        only the texts the damage changed, not the whole run (minutes on a loaded machine)."""
        cache = self.out / "seeds" / "minilm" / name
        if not (cache / "vectors").exists():
            node = node_ids(run)[-1]
            self._cli(
                ["saw", str(run), node, "--json", "--embedder", "minilm"], self._env(cache, cache)
            )
        keep = cache / "kept"
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir()
        if (cache / "vectors").exists():
            shutil.copytree(cache / "vectors", keep / "vectors")
        return keep

    def _cli(self, argv: list[str], env: dict[str, str]) -> Outcome:
        from ari_mem_tui.cli import main

        return run_forked(lambda: main(argv), argv, env, self.work / "setup")

    def _readers(self) -> dict[str, tuple[int, Callable[[Chooser, Path], Case]]]:
        """Each reader: (weight, the function that makes its case)."""
        # the memory's files hold most of the numbers (ts, scores, steps, limits): more often
        files = {name: (6 if "memory" in name else 4, self._run_file(name)) for name in RUN_FILES}
        return {
            **files,
            "tree.json links": (4, self._tree_links),
            "trace_log": (4, self._trace_log),
            "nodes_tree.json (tree.json unreadable)": (2, self._nodes_tree_only),
            "a run file's kind": (2, self._file_kind),
            "every number of the run": (2, self._every_number),
            "run index (cache)": (3, self._cache_file("index")),
            "BM25 index (cache)": (3, self._cache_file("bm25")),
            "vectors (cache)": (3, self._cache_file("vectors")),
            "run counts (cache)": (2, self._cache_file("run-counts")),
            "config.json": (2, self._config("config.json")),
            "recent.json": (2, self._config("recent.json")),
            "demo marker": (1, self._demo_marker),
            "embedding answers": (3, self._embedding_answers),
            "Letta answers": (3, self._letta_answers),
        }

    # ---------------------------------------------------------------- commands
    def _node(self, c: Chooser, seed: Seed) -> str:
        node = c.pick(seed.nodes)
        return c.pick([node, node[-8:], "root"])

    def _checkpoint_commands(self, c: Chooser, seed: Seed, run: Path) -> list[Command]:
        r, node = str(run), self._node(c, seed)
        url = self.embeddings.url
        restore = ["letta-restore", r, "--letta-url", self.letta.url]  # (the writing command)
        every = [
            Command("summary --json", ["summary", r, "--json"]),
            Command("summary", ["summary", r]),
            Command("audit --json", ["audit", r, "--json"]),
            Command("audit", ["audit", r]),
            Command("saw --json", ["saw", r, node, "--json", *BM25]),
            Command("saw", ["saw", r, node, *BM25]),
            Command("saw in-memory --json", ["saw", r, node, "--json", "--embedder", "in-memory"]),
            Command("health --json", ["health", r, "--json", *BM25]),
            Command("health", ["health", r, *BM25]),
            Command("runs --json", ["runs", str(run.parent), "--json"]),
            Command("saw run --json", ["saw", r, node, "--json", *run_model(url)]),
            Command("TUI", ["tui", r, *self._keys(c)]),
            Command("letta-restore", [*restore, "--agent", f"fuzz-{c.integer(0, 10**9)}"]),
        ]
        picked = [c.pick(every) for _ in range(c.integer(2, 3))]
        return list({command.key: command for command in picked}.values())

    def _cache_commands(self, seed: Seed) -> list[Command]:
        r, node = str(seed.run), seed.nodes[min(3, len(seed.nodes) - 1)]
        return [
            Command("summary --json", ["summary", r, "--json"], True),
            Command("audit --json", ["audit", r, "--json"], True),
            Command("saw --json", ["saw", r, node, "--json", *BM25], True),
            Command("health --json", ["health", r, "--json", *BM25], True),
            Command(
                "saw run --json", ["saw", r, node, "--json", *run_model(self.embeddings.url)], True
            ),
            Command("runs --json", ["runs", str(seed.run.parent), "--json"], True),
        ]

    def _keys(self, c: Chooser) -> list[str]:
        return [c.pick(TUI_KEYS) for _ in range(c.integer(2, 8))]

    # ---------------------------------------------------------------- readers: the run's files
    def _copy(self, c: Chooser, where: Path, names: tuple[str, ...] = ()) -> tuple[Seed, Path]:
        """A seed (one holding `names`, when given) copied into the case; (seed, its copy)."""
        seeds = [s for s in self.seeds if all((s.run / n).exists() for n in names)] or self.seeds
        seed = c.pick(seeds)
        run = where / "run"
        shutil.copytree(seed.run, run, symlinks=True)
        return seed, run

    def _fresh_cache(self, seed: Seed, where: Path) -> Path:
        """A case's own cache: empty but for MiniLM's vectors of the seed's texts."""
        cache = where / "cache"
        if seed.minilm is not None and not cache.exists():
            shutil.copytree(seed.minilm, cache)
        return cache

    def _plain(self, c: Chooser, where: Path, reader: str, seed: Seed, run: Path, steps) -> Case:
        env = self._env(self._fresh_cache(seed, where), where / "config")
        commands = self._checkpoint_commands(c, seed, run)
        return Case(reader, steps, commands, env, run)

    def _run_file(self, name: str) -> Callable[[Chooser, Path], Case]:
        def make(c: Chooser, where: Path) -> Case:
            seed, run = self._copy(c, where, (name,) if "*" not in name else ())
            path = _one(run, name)
            found = damage_file(c, path.read_bytes(), path.name)
            path.write_bytes(found.data)
            return self._plain(c, where, name, seed, run, found.steps)

        return make

    def _tree_links(self, c: Chooser, where: Path) -> Case:
        seed, run = self._copy(c, where)
        path = run / "tree.json"
        found = damage.damage_json(c, path.read_bytes(), tree=True)
        path.write_bytes(found.data)
        return self._plain(c, where, "tree.json links", seed, run, found.steps)

    def _trace_log(self, c: Chooser, where: Path) -> Case:
        seed, run = self._copy(c, where)
        tree = json.loads((run / "tree.json").read_text())
        traced = [n for n in tree["nodes"] if n.get("trace_log")]
        node = c.pick(traced or tree["nodes"])
        steps: list[str] = [f"node {node['id'][-8:]}'s trace_log:"]
        rng = c.random()
        for _ in range(c.integer(1, 3)):
            node["trace_log"] = damage.damage_doc(c, rng, node.get("trace_log") or [], steps)
        (run / "tree.json").write_bytes(damage.dumps(tree).encode("utf-8", "surrogatepass"))
        return self._plain(c, where, "trace_log", seed, run, steps)

    def _nodes_tree_only(self, c: Chooser, where: Path) -> Case:
        seed, run = self._copy(c, where, ("nodes_tree.json",))
        tree = run / "tree.json"
        how = c.pick(["removed", "cut", "not JSON"])
        if how == "removed":
            tree.unlink()
        else:
            tree.write_bytes(tree.read_bytes()[:100] if how == "cut" else b"\xff\xfe")
        path = run / "nodes_tree.json"
        found = damage.damage_json(c, path.read_bytes(), tree=True)
        path.write_bytes(found.data)
        steps = [f"tree.json {how}", *found.steps]
        return self._plain(c, where, "nodes_tree.json (tree.json unreadable)", seed, run, steps)

    def _every_number(self, c: Chooser, where: Path) -> Case:
        """Every number of the run's JSON files, access logs and backup past a range, in turn
        from a drawn start (a run written by a broken writer, or a hostile one)."""
        seed, run = self._copy(c, where)
        values = damage.numbers_past_range(c)
        count = [0]
        for path in sorted(run.iterdir()):
            if path.is_file() and path.name.endswith((".json", ".jsonl", ".jsonl.gz")):
                damage.every_number(path, values, count)
        steps = [f"{count[0]} numbers past a range, in turn: {[damage._brief(v) for v in values]}"]
        return self._plain(c, where, "every number of the run", seed, run, steps)

    def _file_kind(self, c: Chooser, where: Path) -> Case:
        seed, run = self._copy(c, where)
        names = sorted(p.name for p in run.iterdir() if p.is_file() and not p.name.startswith("."))
        path = run / c.pick(names)
        steps = [f"{path.name}: {replace_kind(c, path)}"]
        return self._plain(c, where, "a run file's kind", seed, run, steps)

    # ---------------------------------------------------------------- readers: ours
    def _cache_file(self, part: str) -> Callable[[Chooser, Path], Case]:
        def make(c: Chooser, where: Path) -> Case:
            candidates = [s for s in self.seeds if _cache_files(s.cache, part)] or self.seeds
            seed = c.pick(candidates)
            cache = where / "cache"
            if seed.cache.exists():
                shutil.copytree(seed.cache, cache, symlinks=True)
            files = _cache_files(cache, part)
            steps: list[str] = []
            resealed = False
            for _ in range(c.integer(1, 2) if files else 0):
                path = c.pick(files)
                if path.is_symlink() or not path.is_file() or path.stat().st_size > BIG:
                    continue  # (made a FIFO or a 2 GiB sparse file by the first step)
                said, sealed = damage_cache_file(c, path, cache)
                resealed |= sealed
                steps.append(f"{path.relative_to(cache)}: {said}")
            env = self._env(cache, where / "config")
            commands = [c.pick(self._cache_commands(seed)) for _ in range(2)]
            commands = list({x.key: x for x in commands}.values())
            for command in commands:  # a checksum that holds lets damage through: no compare
                command.compare = command.compare and not resealed
            reader = {"index": "run index", "bm25": "BM25 index", "vectors": "vectors"}.get(
                part, part
            )
            return Case(f"{reader} (cache)", steps, commands, env, seed.run, dict(seed.clean))

        return make

    def _config(self, name: str) -> Callable[[Chooser, Path], Case]:
        def make(c: Chooser, where: Path) -> Case:
            seed = c.pick(self.seeds)
            config = where / "config"
            config.mkdir(parents=True)
            base = CONFIG if name == "config.json" else recent(seed.run)
            found = damage.damage_json(c, json.dumps(base).encode())
            (config / name).write_bytes(found.data)
            env = self._env(self._fresh_cache(seed, where), config)
            node = self._node(c, seed)
            commands = [
                Command("runs --json (recent)", ["runs", "--json"]),
                Command("saw --json", ["saw", str(seed.run), node, "--json", *BM25]),
                Command("TUI", ["tui", str(seed.run), *self._keys(c)]),
            ]
            return Case(name, found.steps, commands, env, seed.run)

        return make

    def _demo_marker(self, c: Chooser, where: Path) -> Case:
        out = where / "demo"
        shutil.copytree(self.demo_out, out)
        marker = out / ".ari_mem_tui_demo.json"
        found = damage.damage_json(c, marker.read_bytes())
        marker.write_bytes(found.data)
        argv = ["demo", "--out", str(out), "--nodes", "3", "--seed", "2", *DEMO_FLAGS]
        env = self._env(where / "cache", where / "config")
        return Case("demo marker", found.steps, [Command("demo --out", argv)], env, None)

    # ---------------------------------------------------------------- readers: servers
    def _embedding_answers(self, c: Chooser, where: Path) -> Case:
        seed = c.pick(self.seeds)
        node = self._node(c, seed)
        answers = AnswerDamage("embeddings", c.integer(0, 2**31), c.pick([1, 2, None]))
        r = str(seed.run)
        commands = [
            Command("saw run --json", ["saw", r, node, "--json", *run_model(self.embeddings.url)])
        ]
        if c.integer(0, 3) == 0:
            argv = ["health", r, "--json", "--embedder", "run", *run_model(self.embeddings.url)[2:]]
            commands.append(Command("health run --json", argv))
        env = self._env(self._fresh_cache(seed, where), where / "config")
        return Case("embedding answers", [], commands, env, seed.run, {}, answers, self.embeddings)

    def _letta_answers(self, c: Chooser, where: Path) -> Case:
        seed = c.pick(self.seeds)
        node = self._node(c, seed)
        route = c.pick(LETTA_ROUTES)
        answers = AnswerDamage(route, c.integer(0, 2**31), c.pick([1, 3, None]))
        r, letta = str(seed.run), ["--letta-url", self.letta.url, "--letta-timeout", "10"]
        every = [
            Command("summary letta --json", ["summary", r, "--json", *letta]),
            Command("saw letta --json", ["saw", r, node, "--json", *letta]),
            Command("audit letta --json", ["audit", r, "--json", *letta]),
        ]
        commands = [c.pick(every)]
        env = self._env(self._fresh_cache(seed, where), where / "config")
        return Case("Letta answers", [], commands, env, seed.run, {}, answers, self.letta)

    # ---------------------------------------------------------------- one case
    def case(self, c: Chooser, number: int) -> None:
        """Make input `number` from `c`'s choices, run its commands, keep what failed."""
        names = [name for name, (weight, _) in self.readers.items() for _ in range(weight)]
        reader = c.pick(names)
        where = self.work / "case"
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        case = self.readers[reader][1](c, where)
        digest = case_digest(case, where)
        if digest in self.seen:  # (a small file has few ways to be damaged): run it once
            self.repeats += 1
            return
        self.seen.add(digest)
        self.number += 1
        self.case_no = number
        self.tried[case.reader] += 1
        for command in case.commands:
            self._run(case, command, where)
        steps = case.steps + (case.answers.steps if case.answers else [])
        shown = "; ".join(steps)
        shown = shown if len(shown) <= 160 else shown[:159] + "…"
        self.last = f"{case.reader}: {shown} -> {', '.join(c.key for c in case.commands)}"

    def _run(self, case: Case, command: Command, where: Path) -> None:
        before = fingerprint(case.checkpoint) if case.checkpoint else {}
        if case.answers is not None:
            case.answers.done = 0
            case.server.damage = case.answers
        try:
            outcome = run_forked(body_of(command.argv), command.argv, case.env, where / "out")
        finally:
            if case.server is not None:
                case.server.damage = None
        after = fingerprint(case.checkpoint) if case.checkpoint else {}
        judge(outcome, before, after)
        sound = case.sound.get(command.key)
        if command.argv[0] == "tui":
            dossiers(Path(case.env["ARI_MEM_TUI_EXPORT_DIR"]), outcome)
        compared = command.compare and sound is not None and outcome.code in (0, 1)
        if compared and outcome.stdout != sound:
            outcome.failures.append("a damaged cache changed the answer")
        self.ran[command.key] += 1
        steps = case.steps + (case.answers.steps if case.answers else [])
        if outcome.failures:
            self._keep(case, command, outcome, steps, where)

    def _keep(self, case: Case, command: Command, outcome: Outcome, steps, where: Path) -> None:
        kind = blur(outcome.failures[0])
        self.kinds[kind] += 1
        saved = None
        if self.kinds[kind] <= KEEP_PER_KIND:
            saved = self.out / "failures" / f"{len(self.failures) + 1:04d}-{_slug(case.reader)}"
            shutil.rmtree(saved, ignore_errors=True)
            save_copy(where, saved)
            record = {
                "seed": self.seed,
                "case": self.case_no,
                "reader": case.reader,
                "damage": steps,
                "command": command.argv,
                "env": case.env,
                "case_dir": str(where),
                "exit": outcome.code,
                "seconds": round(outcome.seconds, 2),
                "peak_mib": round(outcome.peak_mib),
                "failures": outcome.failures,
                "stderr": outcome.stderr[-3000:],
                "caught": outcome.caught[-3000:],
                "answers": _answers_of(case),
            }
            (saved / "case.json").write_text(json.dumps(record, indent=2, ensure_ascii=True))
        self.failures.append(
            Failure(kind, case.reader, command.key, outcome.failures, steps, saved)
        )
        self.say(f"FAILURE {kind} ({case.reader}; {command.key}) {saved or ''}")


# ---------------------------------------------------------------- what a command runs
BM25 = ["--embedder", "bm25"]
DEMO_FLAGS = ["--recordings", "keywords"]
CONFIG = {
    "theme": "textual-dark",
    "embedder": "bm25",
    "keys": {"mark": "x", "down": "ctrl+n,j"},
    "confirm_quit": False,
    "export_dir": "exports",
}
RUN_FILES = [
    "tree.json",
    "nodes_tree.json",
    "memory_backup.jsonl.gz",
    "memory_access.jsonl",
    "memory_access.1.jsonl",
    "idea.json",
    "experiment.md",
    "settings.json",
    "meta.json",
    "ari_run_*.log",
    "results.json",
]


def run_model(url: str) -> list[str]:
    return [
        "--embedder",
        "run",
        "--embed-url",
        url,
        "--embed-model",
        "fuzz",
        "--embed-deadline",
        "10",
    ]


def recent(run: Path) -> dict[str, Any]:
    return {"runs": [{"path": str(run), "opened": 1780000000.5}, {"path": "/gone", "opened": 1}]}


def body_of(argv: list[str]) -> Callable[[], int]:
    if argv[0] == "tui":
        return lambda: drive_tui(Path(argv[1]), argv[2:])
    from ari_mem_tui.cli import main

    return lambda: main(argv)


def dossiers(folder: Path, outcome: Outcome) -> None:
    """Every dossier the TUI exported: its JSON as strict as any `--json` output."""
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            strict_json(path.read_text())
        except ValueError as exc:
            outcome.failures.append(f"dossier JSON not strict: {str(exc)[:80]}")
        path.unlink()


def drive_tui(run: Path, keys: list[str]) -> int:
    """The app headless at 120×40 on `run` (BM25), as a person uses it: open, wait for the load,
    press `keys`, quit. Any exception escapes (a traceback: a failure)."""
    import asyncio

    from ari_mem_tui.run import RunOptions, open_run
    from ari_mem_tui.tui.app import AriMemApp

    async def drive() -> None:
        app = AriMemApp(
            lambda _progress: open_run(RunOptions(checkpoint=run, embedder="bm25")),
            theme="textual-dark",
            remember_theme=False,
            blink=False,
        )
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 20
            while app.loaded_count < 1 and time.monotonic() < deadline:
                await pilot.pause(0.05)
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.05)
            deadline = time.monotonic() + 20  # what the keys started (health, a replay) ends
            while any(w.is_running for w in app.workers) and time.monotonic() < deadline:
                await pilot.pause(0.05)
            await pilot.pause(0.1)
            await pilot.press("q")

    asyncio.run(drive())
    return 0


# ---------------------------------------------------------------- damaging files
def _one(run: Path, pattern: str) -> Path:
    found = sorted(run.glob(pattern))
    return found[0] if found else run / pattern.replace("*", "x")


def damage_file(c: Chooser, raw: bytes, name: str) -> Damage:
    if name.endswith(".jsonl.gz"):
        return damage.damage_gzip(c, raw)
    if name.endswith(".jsonl"):
        return damage.damage_lines(c, raw)
    if name.endswith(".json"):
        return damage.damage_json(c, raw, tree=name in ("tree.json", "nodes_tree.json"))
    return damage.damage_text(c, raw)


def replace_kind(c: Chooser, path: Path) -> str:
    """The file replaced by something that is not a regular file of its size."""
    how = c.pick(["fifo", "dev zero", "folder", "empty", "loop", "sparse", "unreadable"])
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev zero":
        path.symlink_to("/dev/zero")
    elif how == "folder":
        path.mkdir()
    elif how == "loop":
        path.symlink_to(path.name)
    elif how == "sparse":
        with path.open("wb") as sparse:
            sparse.truncate(2 << 30)
    elif how == "empty":
        path.write_bytes(b"")
    else:  # (root reads it all the same; a user does not)
        path.write_bytes(b"{}")
        path.chmod(0)
    return how


def _cache_files(cache: Path, part: str) -> list[Path]:
    if not cache.exists():
        return []
    every = sorted(p for p in cache.rglob("*") if p.is_file())
    rel = {p: p.relative_to(cache).as_posix() for p in every}
    return [p for p in every if rel[p].startswith(part)]


SEAL = re.compile(rb"^ari-mem-tui (\S+) sha256=[0-9a-f]{64}\n")


def damage_cache_file(c: Chooser, path: Path, cache: Path) -> tuple[str, bool]:
    """Damage one file of our cache; (what was done, whether its checksum was made to hold)."""
    raw = path.read_bytes()
    how = c.pick(["bytes", "bytes", "structure", "kind", "other file"])
    steps: list[str] = []
    if how == "kind":
        return replace_kind(c, path), False
    if how == "other file":
        others = [p for p in cache.rglob("*") if p.is_file() and p != path]
        if others:
            other = c.pick(sorted(others))
            path.write_bytes(other.read_bytes())
            return f"holds {other.relative_to(cache)}'s bytes", False
    sealed = SEAL.match(raw)
    if how == "structure" and path.suffix == ".npz":
        data, said = damage_npz(c, raw)
        return _renamed(c, path, data, said)
    if how == "structure" and sealed:
        body = raw[sealed.end() :]
        found = _damage_body(c, body)
        kind = sealed.group(1).decode()
        old, digest = hashlib.sha256(body).hexdigest(), hashlib.sha256(found.data).hexdigest()
        path.write_bytes(f"ari-mem-tui {kind} sha256={digest}\n".encode() + found.data)
        if old in path.name:  # a vector segment is named by its checksum: so is the new one
            path.rename(path.with_name(path.name.replace(old, digest)))
        return "body, resealed: " + "; ".join(found.steps), True
    if how == "structure" and path.suffix == ".json":
        found = damage.damage_json(c, raw)
        path.write_bytes(found.data)
        return "; ".join(found.steps), False
    data = damage.damage_bytes(c, c.random(), raw, steps)
    path.write_bytes(data)
    return "; ".join(steps), False


def _damage_body(c: Chooser, body: bytes) -> Damage:
    """A sealed file's body damaged as what it is: JSON, msgpack (decoded, one value changed,
    encoded again), else bytes."""
    if body[:1] in (b"{", b"["):
        return damage.damage_json(c, body)
    steps: list[str] = []
    try:
        value = msgspec.msgpack.decode(body)
    except (msgspec.MsgspecError, RecursionError):
        value = None
    if isinstance(value, (dict, list)) and c.integer(0, 3):
        value = damage.damage_doc(c, c.random(), value, steps)
        try:
            return Damage(msgspec.msgpack.encode(value), ["(msgpack) " + "; ".join(steps)])
        except (TypeError, OverflowError, msgspec.MsgspecError):  # a Raw nest, 10**400
            steps = []
    return Damage(damage.damage_bytes(c, c.random(), body, steps), steps)


def _renamed(c: Chooser, path: Path, data: bytes, said: str) -> tuple[str, bool]:
    """A vector segment is named by its checksum: renamed to the new one, or not."""
    if path.name.startswith("seg-") and c.boolean():
        path.unlink()
        path = path.with_name(f"seg-{hashlib.sha256(data).hexdigest()}.npz")
        path.write_bytes(data)
        return said + ", renamed to its checksum", True
    path.write_bytes(data)
    return said, False


def damage_npz(c: Chooser, raw: bytes) -> tuple[bytes, str]:
    """An npz's arrays changed: type, shape, values past every range, an extra or missing one."""
    with np.load(io.BytesIO(raw), allow_pickle=False) as found:
        arrays = {name: found[name] for name in found.files}
    if not arrays:
        return raw, "no arrays"
    name = c.pick(sorted(arrays))
    array = arrays[name]
    how = c.pick(["dtype", "shape", "values", "drop", "extra", "deflate"])
    if how == "dtype":
        dtype = c.pick(["float16", "float64", "int64", "uint8", "complex64", "U8", "bool"])
        arrays[name] = array.astype(dtype) if array.dtype.kind not in "US" else array.astype("S4")
        said = f"{name} as {dtype}"
    elif how == "shape":
        arrays[name] = array.reshape(-1)[: max(0, array.size - c.integer(0, 3))]
        said = f"{name} flattened and cut"
    elif how == "values" and array.dtype.kind == "f" and array.size:
        flat = array.astype(np.float64).reshape(-1)
        flat[c.integer(0, flat.size - 1)] = c.pick([np.nan, np.inf, -np.inf, 1e308, -1e308])
        arrays[name] = flat.reshape(array.shape).astype(array.dtype)
        said = f"{name} with a value past every range"
    elif how == "drop":
        del arrays[name]
        said = f"{name} dropped"
    elif how == "extra":
        arrays["extra"] = np.zeros((3, 3))
        said = "an extra array"
    else:
        out = io.BytesIO()
        np.savez_compressed(out, **arrays)
        return out.getvalue(), "deflated"
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue(), said


def save_copy(source: Path, dest: Path) -> None:
    """`source` copied as it is: links as links, a FIFO as a FIFO, a file past 64 MiB as a
    sparse file of its size (never read whole)."""
    for path in [source, *sorted(source.rglob("*"))]:
        target = dest / path.relative_to(source)
        if path.is_symlink():
            target.symlink_to(os.readlink(path))
        elif path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif stat.S_ISFIFO(path.lstat().st_mode):
            os.mkfifo(target)
        elif path.is_file() and path.stat().st_size > BIG:
            with target.open("wb") as sparse:
                sparse.truncate(path.stat().st_size)
        elif path.is_file():
            shutil.copy2(path, target)


def case_digest(case: Case, where: Path) -> str:
    """What makes an input: its files (every byte), its commands, a server's damage seed."""
    digest = hashlib.sha256(case.reader.encode())
    for name, value in sorted(fingerprint(where).items()):
        digest.update(f"{name}={value}\n".encode())
    for command in case.commands:
        digest.update(repr(command.argv).encode())
    digest.update(repr(_answers_of(case)).encode())
    return digest.hexdigest()


def _answers_of(case: Case) -> dict[str, Any] | None:
    if case.answers is None:
        return None
    return {"route": case.answers.route, "seed": case.answers.seed, "count": case.answers.count}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


__all__ = ["Seeded", "Session"]
