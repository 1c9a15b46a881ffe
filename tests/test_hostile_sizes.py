"""Hostile sizes: every limit of checkpoint/limits.py holds, in-process and in a child process.

The big inputs are made at test time from small ones: a sparse file for a 1 GiB tree.json, a
gzip of repeated bytes for a bomb, long lines written in pieces, a 20,000-deep chain. Each
child-process case asserts the exit code, no traceback, the named problem, that the rest of the
data is still shown, that the checkpoint is unchanged, and a peak RSS under the bare start-up
plus RSS_RISE_MIB (1 GiB), within a generous time.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import time
import zlib
from pathlib import Path

import pytest
from hostile_helpers import (
    MIB,
    RSS_RISE_MIB,
    bare_peak_mib,
    clean_stderr,
    fingerprint,
    run_measured,
)

from ari_mem_tui.checkpoint import limits
from ari_mem_tui.checkpoint.backup import GzipLines, read_backup
from ari_mem_tui.checkpoint.jsonlines import LineSplitter, TooLong, file_lines, json_records
from ari_mem_tui.checkpoint.load import load_checkpoint
from ari_mem_tui.checkpoint.problems import FileProblems
from ari_mem_tui.cli import build_parser, main

SLOW_S = 120  # generous: the machine is shared; the goal is 30 s


@pytest.fixture
def run_copy(small_ckpt: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "ckpt"
    shutil.copytree(small_ckpt, dest)
    return dest


def _lines(ckpt) -> str:
    return "\n".join(p.line() for p in ckpt.problems)


# ---- the limits themselves ----


def test_limits_come_from_defaults_environment_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    for limit in limits.LIMITS.values():
        monkeypatch.setenv(limit.env, "")  # restored after the test, whatever apply() sets
    assert limits.current().line_bytes == 64 * MIB
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LINE_MIB", "3")
    assert limits.current().line_bytes == 3 * MIB
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LINE_MIB", "junk")  # a bad value: the default, said
    from ari_mem_tui.checkpoint.cachefile import take_notes

    take_notes()
    assert limits.current().line_bytes == 64 * MIB and limits.current().line_bytes == 64 * MIB
    assert take_notes() == [
        "ARI_MEM_TUI_MAX_LINE_MIB='junk' is not a whole number of at least 1: line-mib stays 64"
    ]  # (once, however often the limits are read)
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LINE_MIB", "0")
    assert limits.current().line_bytes == 64 * MIB and len(take_notes()) == 1
    args = build_parser().parse_args(
        ["summary", "x", "--max", "file-mib=7", "--max", "EMBED-CHARS=9"]
    )
    assert args.max == [("file-mib", 7), ("embed-chars", 9)]
    limits.apply(args.max)
    assert limits.current().file_bytes == 7 * MIB and limits.current().embed_chars == 9
    for bad in ("nope=1", "line-mib", "line-mib=0", "line-mib=x"):
        with pytest.raises(SystemExit) as stop:
            build_parser().parse_args(["summary", "x", "--max", bad])
        assert stop.value.code == 2


def test_the_readme_documents_every_limit() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for limit in limits.LIMITS.values():
        assert f"`{limit.name}`" in readme and limit.env in readme


# ---- lines ----


def test_a_long_line_is_skipped_by_name_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b'{"b": "' + b"x" * 5000 + b'"}\n{"c": 3}\n{"d": 4}')
    problems: list = []
    sink = FileProblems("log.jsonl", problems)
    with path.open("rb") as handle:
        got = list(json_records(file_lines(handle, limit=1000), sink))
    assert got == [(1, {"a": 1}), (3, {"c": 3}), (4, {"d": 4})]
    (problem,) = problems
    assert problem.file == "log.jsonl" and problem.where == "line 2"
    assert "5,009 bytes long, over the 1,000 bytes limit" in problem.why
    assert "--max line-mib" in problem.why


def test_lines_split_the_same_whatever_the_chunks() -> None:
    data = b"one\n\ntwo three\n" + b"z" * 50 + b"\nlast"
    whole = LineSplitter(20).feed(data)
    splitter = LineSplitter(20)
    pieces: list[bytes] = []
    for i in range(0, len(data), 3):
        pieces += splitter.feed(data[i : i + 3])
    tail, whole_tail = splitter.finish(), LineSplitter(20)
    assert pieces == whole == [b"one", b"", b"two three", b""]
    assert type(pieces[3]) is TooLong and pieces[3].size == 50
    assert tail == b"last"
    assert whole_tail.finish() is None


def test_a_line_without_newline_is_read_in_linear_time() -> None:
    # 4,096 pieces of 16 KiB with no newline: joining pending+data per piece would copy
    # 137 GB; kept as parts it is 64 MiB once
    splitter = LineSplitter(128 * MIB)
    piece = b"y" * (16 << 10)
    start = time.monotonic()
    for _ in range(4096):
        assert splitter.feed(piece) == []
    assert splitter.feed(b"\n") == [piece * 4096]
    assert time.monotonic() - start < 20


def test_a_gzip_bomb_of_records_stops_with_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_GZIP_FLOOR_MIB", "1")
    record = json.dumps({"kind": "node_scope", "node_id": "n1", "text": "t", "ts": 1.0})
    raw = ((record + "\n") * 40_000).encode()  # 2.4 MB of records, ~8 KB compressed
    path = tmp_path / "memory_backup.jsonl.gz"
    path.write_bytes(gzip.compress(raw))
    problems: list = []
    result = read_backup(path, path.name, problems)
    assert 0 < len(result.entries) < 40_000  # the first MiB is read, then it stops
    assert any("gzip bomb" in p.why and p.severity == "error" for p in problems)
    monkeypatch.setenv("ARI_MEM_TUI_MAX_GZIP_FLOOR_MIB", "64")  # the default allows it
    assert len(read_backup(path, path.name, []).entries) == 40_000


def test_a_gzip_line_past_the_limit_is_skipped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LINE_MIB", "1")
    good = json.dumps({"kind": "node_scope", "node_id": "n1", "text": "ok", "ts": 1.0})
    big = json.dumps({"kind": "node_scope", "node_id": "n1", "text": "w" * (3 * MIB), "ts": 2.0})
    path = tmp_path / "memory_backup.jsonl.gz"
    path.write_bytes(gzip.compress(f"{good}\n{big}\n{good}\n".encode()))
    problems: list = []
    result = read_backup(path, path.name, problems)
    assert [e.source_line for e in result.entries] == [1, 3]
    assert [p.where for p in problems] == ["line 2"] and "3 MiB long" in problems[0].why
    lines = GzipLines(path)
    assert [len(x) for x in lines] == [len(good), 0, len(good)] and lines.stop.reason is None


def test_an_oversize_file_is_refused_unread(run_copy: Path, monkeypatch) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_FILE_MIB", "1")
    with (run_copy / "tree.json").open("r+b") as handle:
        handle.truncate(2 * MIB)  # sparse NULs after the real tree
    opened: list[str] = []
    real_read = Path.read_bytes

    def spy(self: Path) -> bytes:
        opened.append(self.name)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    ckpt = load_checkpoint(run_copy)
    assert "tree.json" not in opened
    assert "tree.json: skipped the whole file (refused unread: it is 2 MiB" in _lines(ckpt)
    assert ckpt.tree_source == "nodes_tree.json" and ckpt.nodes  # the next tree file is used


def test_the_embedder_gets_a_bounded_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    from ari_mem_tui.search.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    seen: list[int] = []
    real = embedder._tokenizer

    class Spy:
        def encode_batch(self, texts):
            seen.extend(len(t) for t in texts)
            return real.encode_batch(texts)

    embedder._tokenizer = Spy()
    long_text = "memory " * 500_000  # 3.5 M characters
    vec = embedder.embed([long_text, "short"])
    assert seen == [32768, 5]
    assert abs(float((vec[0] ** 2).sum()) - 1.0) < 1e-3
    monkeypatch.setenv("ARI_MEM_TUI_MAX_EMBED_CHARS", "100")
    seen.clear()
    embedder.embed([long_text])
    assert seen == [100]


# ---- the size cases, in a child process ----


def _check(m, small_ckpt: Path, problem: str, *shown: str, code: int = 0) -> None:
    clean_stderr(m.stderr)
    assert m.returncode == code, m.stderr[-2000:]
    assert problem in m.stdout, m.stdout[-3000:]
    for text in shown:
        assert text in m.stdout, m.stdout[-3000:]
    assert m.seconds < SLOW_S
    assert m.peak_mib < bare_peak_mib(small_ckpt) + RSS_RISE_MIB, m.peak_mib


def test_a_gigabyte_tree_of_nuls_is_refused_unread(run_copy: Path, small_ckpt: Path) -> None:
    with (run_copy / "tree.json").open("r+b") as handle:
        handle.truncate(0)
        handle.truncate(1 << 30)  # 1 GiB of NULs, sparse
    before = fingerprint(run_copy)
    m = run_measured("summary", str(run_copy))
    _check(m, small_ckpt, "refused unread: it is 1,024 MiB", "tree from  nodes_tree.json")
    assert fingerprint(run_copy) == before


def test_a_gzip_bomb_stops_at_the_limit(run_copy: Path, small_ckpt: Path) -> None:
    path = run_copy / "memory_backup.jsonl.gz"
    bomb = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(8 * MIB)
    with path.open("ab") as out:  # a second gzip member: 512 MiB of NULs, ~0.5 MB on disk
        for _ in range(64):
            out.write(bomb.compress(zeros))
        out.write(bomb.flush())
    before = fingerprint(run_copy)
    m = run_measured("summary", str(run_copy))
    _check(m, small_ckpt, "a gzip bomb?", "entries    ")
    assert "entries    0 " not in m.stdout
    assert fingerprint(run_copy) == before


def test_a_hundred_mib_text_preview_is_skipped(run_copy: Path, small_ckpt: Path) -> None:
    log = run_copy / "memory_access.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    with log.open("wb") as out:
        out.writelines(lines[:3])
        out.write(b'{"ts": 1.0, "op": "write", "node_id": "x", "text_preview": "')
        block = b"p" * MIB
        for _ in range(100):
            out.write(block)
        out.write(b'"}\n')
        out.writelines(lines[3:])
    before = fingerprint(run_copy)
    m = run_measured("summary", str(run_copy))
    _check(m, small_ckpt, "memory_access.jsonl line 4: skipped the line", "100 MiB long")
    assert f"events     {len(lines)} " in m.stdout  # every other event is read
    assert fingerprint(run_copy) == before


def test_a_200_mib_memory_text_is_skipped_or_embedded_by_its_prefix(
    run_copy: Path, small_ckpt: Path
) -> None:
    path = run_copy / "memory_backup.jsonl.gz"
    records = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    first = json.loads(records[0])
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1) as out:
        out.writelines(records)
        head = {**first, "text": ""}
        text = json.dumps(head)
        out.write(text[: text.index('"text": ""') + 9].encode())
        chunk = b"huge memory " * (MIB // 12)
        for _ in range(200):
            out.write(chunk)
        out.write(text[text.index('"text": ""') + 9 :].encode() + b"\n")
    path.write_bytes(buffer.getvalue())
    before = fingerprint(run_copy)
    entries = f"entries    {len(records) - 1} "  # all but the core_seed record
    # ~1,000 to 1 compressed: by default a gzip bomb, stopped where it starts
    m = run_measured("summary", str(run_copy))
    _check(m, small_ckpt, f"line {len(records) + 1} (byte", "a gzip bomb?", entries)
    # let the ratio pass: the line limit skips the one line
    ratio = ("--max", "gzip-ratio=100000")
    m = run_measured("summary", str(run_copy), *ratio)
    _check(m, small_ckpt, f"line {len(records) + 1}: skipped the line", "200 MiB long", entries)
    node = first["node_id"]
    child = next(
        n["id"]
        for n in json.loads((run_copy / "tree.json").read_text())["nodes"]
        if n.get("parent_id") == node
    )
    # with the line limit raised the text loads, and is ranked by its prefix (the MiniLM
    # tokenizer's share is test_the_embedder_gets_a_bounded_prefix; BM25 here, for time)
    raised = (*ratio, "--max", "line-mib=256", "--query", "huge memory", "--embedder", "bm25")
    m = run_measured("saw", str(run_copy), child, *raised, timeout=300)
    clean_stderr(m.stderr)
    assert m.returncode == 0, m.stderr[-2000:]
    assert "huge memory" in m.stdout
    assert m.peak_mib < bare_peak_mib(small_ckpt) + RSS_RISE_MIB + 256, m.peak_mib
    assert fingerprint(run_copy) == before


def _chain(tmp_path: Path, depth: int) -> Path:
    ckpt = tmp_path / "chain"
    ckpt.mkdir()
    nodes = [
        {"id": f"n{i}", "parent_id": f"n{i - 1}" if i else None, "status": "success"}
        for i in range(depth)
    ]
    (ckpt / "tree.json").write_text(json.dumps({"run_id": "deep", "nodes": nodes}))
    return ckpt


def test_a_20000_deep_chain_without_ancestor_ids(tmp_path: Path, small_ckpt: Path) -> None:
    ckpt = _chain(tmp_path, 20_000)
    before = fingerprint(ckpt)
    for args, shown in (
        (("summary", str(ckpt)), "nodes      20000 (1 root)"),
        (("audit", str(ckpt)), "rebuilt ancestor_ids of 20000 nodes"),
        (("saw", str(ckpt), "n19999", "--embedder", "bm25"), "n19999"),
    ):
        m = run_measured(*args, "--no-letta")
        clean_stderr(m.stderr)
        assert m.returncode == 0, m.stderr[-2000:]
        assert shown in m.stdout
        assert m.seconds < SLOW_S
        assert m.peak_mib < bare_peak_mib(small_ckpt) + 512, (args, m.peak_mib)
    assert fingerprint(ckpt) == before


def test_rebuilt_ancestors_are_lazy_and_equal_to_lists(tmp_path: Path) -> None:
    ckpt = load_checkpoint(_chain(tmp_path, 5))
    node = ckpt.nodes["n4"]
    assert node.scope_reconstructed and node.depth == 4
    assert node.ancestor_ids == ["n0", "n1", "n2", "n3"] and len(node.ancestor_ids) == 4
    assert node.ancestor_ids[-1] == "n3" and node.ancestor_ids[0] == "n0"
    assert "n2" in node.ancestor_ids and "n4" not in node.ancestor_ids
    assert not ckpt.nodes["n0"].ancestor_ids
    assert ckpt.lineage("n2") == ["n0", "n1", "n2"]
    assert node.as_data()["ancestor_ids"] == ["n0", "n1", "n2", "n3"]
    assert type(node.ancestor_ids).__name__ == "ParentChain"


def test_the_cli_flag_reaches_the_reader(run_copy: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_LINE_MIB", "")  # restored after the test
    log = run_copy / "memory_access.jsonl"
    log.write_bytes(
        log.read_bytes() + b'{"op": "write", "text_preview": "' + b"q" * 2 * MIB + b'"}\n'
    )
    assert main(["summary", str(run_copy), "--no-letta", "--max", "line-mib=1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "skipped the line (the line is 2 MiB long, over the 1 MiB limit" in out


def test_a_corrupt_gzip_bomb_is_bounded_too(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ARI_MEM_TUI_MAX_GZIP_FLOOR_MIB", "1")
    data = bytearray(gzip.compress(bytes(4 * MIB)))
    data[-8:-4] = b"\xde\xad\xbe\xef"  # a bad CRC: the call that meets it raises
    path = tmp_path / "memory_backup.jsonl.gz"
    path.write_bytes(bytes(data))
    lines = GzipLines(path)
    sizes = [len(line) for line in lines]
    assert "corrupt gzip" in (lines.stop.reason or "")
    assert sum(sizes) <= MIB  # what is salvaged before the damage stays within the allowance
