"""`config.json` and ARI's `settings.json` are read through pydantic models: a field of the
wrong type is one line naming the file and the field, and every other field is still read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ari_mem_tui.checkpoint import cachefile
from ari_mem_tui.checkpoint.settings import letta_embedding_config
from ari_mem_tui.cli import build_parser
from ari_mem_tui.cli.options import settle_embedder
from ari_mem_tui.tui import config


def test_a_bad_config_field_is_one_line_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "theme": "nord",
                "confirm_quit": "yes",  # only `true` turns it on
                "keys": {"mark": "x", "copy": 3},
                "embedder": "bm26",
                "export_dir": ["a"],
                "from_a_later_version": 1,
            }
        ),
        encoding="utf-8",
    )
    cachefile.take_notes()
    settings = config.load_settings()
    assert settings == config.Settings(theme="nord", keys={"mark": "x"})
    notes = cachefile.take_notes()
    path = tmp_path / "config.json"
    assert sorted(notes) == sorted(
        f"settings file {path}: {field} ignored ({why}); the rest is used"
        for field, why in (
            ("confirm_quit", "input should be a valid boolean, not 'yes'"),
            ("keys.copy", "input should be a valid string, not 3"),
            (
                "embedder",
                "input should be 'auto', 'minilm', 'bm25', 'in-memory' or 'run', not 'bm26'",
            ),
            ("export_dir", "input should be a valid string, not ['a']"),
        )
    )
    assert config.save_setting("theme", "dracula")  # the file's other keys are kept as written
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["theme"] == "dracula" and written["from_a_later_version"] == 1


def test_the_config_files_ranker_and_endpoint_are_used(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path))
    (tmp_path / "config.json").write_text(
        json.dumps({"embedder": "run", "embed_url": "http://127.0.0.1:9/v1", "embed_model": 5})
    )
    args = build_parser().parse_args(["saw", ".", "n1"])
    settle_embedder(args)
    assert (args.embedder, args.embed_url, args.embed_model) == (
        "run",
        "http://127.0.0.1:9/v1",
        None,  # not a string: left out, said
    )
    assert any("embed_model ignored" in note for note in cachefile.take_notes())


def test_a_bad_settings_json_field_is_a_problem_naming_it(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps({"letta_embedding_config": 42, "llm_model": "gpt"}), encoding="utf-8"
    )
    problems: list = []
    assert letta_embedding_config(tmp_path, problems) is None
    (problem,) = problems
    assert (problem.file, problem.where, problem.what) == (
        "settings.json",
        "letta_embedding_config",
        "ignored the field",
    )
    assert problem.why == "input should be a valid string, not 42"
