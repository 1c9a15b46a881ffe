"""The fuzz harness itself (scripts/fuzz.py, tests/fuzz/): its damage is what it says and the
same for the same seed, its invariants catch each kind of failure, a forked command's hang,
catch-all and exit code are seen, and a session keeps a failure with a reproducer.

CI runs the fuzzer for a minute after the suite (.ci/run); these tests are the harness's own.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import damage, runner
from tests.fuzz.damage import Drawn, Seeded
from tests.fuzz.runner import Outcome, judge, run_forked
from tests.fuzz.session import case_seed

TREE = {
    "nodes": [{"id": "a", "parent_id": None, "metrics": {"s": 0.5}, "trace_log": ['x({"k": 1})']}]
}


# ---------------------------------------------------------------- the damage
def test_a_number_is_put_past_every_range_and_written_as_json_would() -> None:
    changed = []
    for seed in range(100):
        doc, steps = json.loads(json.dumps(TREE)), []
        out = damage.damage_doc(Seeded(seed), Seeded(seed).random(), doc, steps)
        if steps[0].startswith("/nodes/0/metrics/s: number 0.5 -> "):
            changed.append(damage.dumps(out))
    assert changed  # (a third of the seeds: the op is weighted, the document has one number)
    pools = [*map(repr, damage.FLOATS), *map(str, damage.INTS), *damage.RAW_NUMBERS, "NaN"]
    written = [text.split('"s": ', 1)[1].split("}", 1)[0] for text in changed]
    assert any(value in pools for value in written), written


def test_the_writer_keeps_raw_text_duplicate_keys_and_non_finite_numbers() -> None:
    value = {"a": damage.Dup([("k", 1), ("k", 2)]), "b": damage.Raw("[[[]]]"), "c": float("nan")}
    assert damage.dumps(value) == '{"a": {"k": 1, "k": 2}, "b": [[[]]], "c": NaN}'
    assert damage.dumps(10**400) == "1" + "0" * 400


def test_inner_json_is_found_inside_a_trace_line() -> None:
    assert damage.inner_json('→ read_file({"path": "x"}) done') == (12, 25, {"path": "x"})
    assert damage.inner_json("no json here") is None


@pytest.mark.parametrize("kind", ["json", "lines", "gzip", "text"])
def test_the_same_seed_makes_the_same_damage(kind: str) -> None:
    raw = json.dumps(TREE).encode()
    make = {
        "json": lambda c: damage.damage_json(c, raw, tree=True),
        "lines": lambda c: damage.damage_lines(c, raw + b"\n" + raw),
        "gzip": lambda c: damage.damage_gzip(c, gzip.compress(raw + b"\n")),
        "text": lambda c: damage.damage_text(c, b"# title\nbody\n"),
    }[kind]
    first, again, other = make(Seeded(7)), make(Seeded(7)), make(Seeded(8))
    assert (first.data, first.steps) == (again.data, again.steps)
    assert first.steps
    assert (first.data, first.steps) != (other.data, other.steps)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_any_draw_damages_a_real_file_without_failing(data: st.DataObject) -> None:
    """The damage never breaks on what it damages (Hypothesis's draws, as shrinkable input)."""
    raw = (Path(__file__).parent / "letta_fixtures" / "agent_retrieve.json").read_bytes()
    found = damage.damage_json(Drawn(data), raw)
    assert isinstance(found.data, bytes) and found.steps


# ---------------------------------------------------------------- the invariants
def outcome(**fields) -> Outcome:
    base = {"argv": ["summary", "x", "--json"], "code": 0, "seconds": 0.1, "peak_mib": 10.0}
    base.update(stdout='{"a": 1}')
    return Outcome(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "same", "broken"),
    [
        ({}, True, []),
        ({"code": 3, "stderr": "ari-mem-tui: internal error: OverflowError: x\n"}, True,
         ["exit 3: internal error: OverflowError: x"]),
        ({"stderr": "Traceback (most recent call last):\nKeyError: 'a'\n"}, True,
         ["traceback: KeyError: 'a'"]),
        ({"caught": "ari_mem_tui.run.open_run swallowed TypeError: t\n"}, True,
         ["catch-all: ari_mem_tui.run.open_run swallowed TypeError: t"]),
        ({"stdout": '{"a": NaN}'}, True, ["JSON not strict: NaN is no JSON"]),
        ({}, False, ["checkpoint written: tree.json"]),
        ({"stdout": "\x1b[2J"}, True, ["JSON not strict: Expecting value: line 1 column 1 (char 0)",
                                        "raw escape in output"]),
        ({"code": 2, "stdout": "half"}, True, ["refused (exit 2) but printed on stdout"]),
        ({"code": -14}, True, ["killed by signal 14 (hang)"]),
        ({"code": -24}, True, ["killed by signal 24 (CPU bound)"]),
        ({"peak_mib": 2000.0}, True, ["memory: +2000 MiB"]),
        ({"cpu": 25.0}, True, ["slow: 25 s of CPU (0 s)"]),
        ({"seconds": 100.0}, True, []),  # waiting is no failure: load; a hang is killed
    ],
)  # fmt: skip
def test_each_invariant_catches_its_failure(fields: dict, same: bool, broken: list[str]) -> None:
    before = {"tree.json": "aa"}
    after = before if same else {"tree.json": "bb"}
    assert judge(outcome(**fields), before, after).failures == broken


# ---------------------------------------------------------------- a forked command
def test_a_forked_command_gives_its_exit_output_and_what_a_catch_all_swallowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ari_mem_tui.run

    def planted(*_args, **_kwargs):
        raise TypeError("planted")

    monkeypatch.setattr(ari_mem_tui.run, "open_run", planted)

    def body() -> int:
        try:
            ari_mem_tui.run.open_run(None)
        except Exception as exc:  # noqa: BLE001 - as the CLI's "cannot read" does
            print(f"cannot read: {exc}")
            return 2
        return 0

    got = run_forked(body, ["x"], {"FUZZ_TEST": "1"}, tmp_path)
    assert (got.code, got.stdout) == (2, "cannot read: planted\n")
    assert got.caught.startswith("ari_mem_tui.run.open_run swallowed TypeError: planted\n")


def test_a_hung_command_is_killed_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "HANG_S", 1)
    start = time.monotonic()
    got = run_forked(lambda: time.sleep(30) or 0, ["hang"], {}, tmp_path)
    assert got.code == -14 and time.monotonic() - start < 20
    assert judge(got, {}, {}).failures == ["killed by signal 14 (hang)"]


# ---------------------------------------------------------------- a session
def test_a_session_runs_inputs_and_keeps_a_failure_with_its_reproducer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug planted in `summary` (forked children inherit it) is found, counted by kind,
    and kept with the damaged run and case.json; the next input of the same kind is counted,
    not kept again past KEEP_PER_KIND."""
    from ari_mem_tui.cli import commands
    from tests.fuzz.session import Session

    def planted(_args) -> int:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(commands, "cmd_summary", planted)
    session = Session(
        tmp_path / "fuzz", seed=5, say=lambda _line: None, runs=("tiny",), prepare=False
    )
    try:
        number = 0
        while not session.failures and number < 40:
            number += 1
            session.case(Seeded(case_seed(5, number)), number)
    finally:
        session.close()
    assert session.failures, f"no failure in {number} inputs: {session.ran}"
    failure = session.failures[0]
    assert (
        failure.kind
        == "exit N: internal error: ZeroDivisionError: planted (please report it; --debug shows the traceback)"
    )
    record = json.loads((failure.saved / "case.json").read_text())
    assert record["command"][0] == "summary" and record["exit"] == 3
    assert record["case"] == number and record["seed"] == 5
    assert (failure.saved / "run" / "tree.json").exists()  # the damaged run, as it was
    assert sum(session.tried.values()) == session.number >= 1


def test_input_seeds_depend_on_the_session_seed_and_the_number() -> None:
    assert case_seed(1, 1) == case_seed(1, 1)
    assert len({case_seed(s, n) for s in (1, 2) for n in range(50)}) == 100
