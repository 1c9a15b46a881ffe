"""ARI's passage footer (§3.7): encoding, decoding at the LAST separator, bad footers."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ari_mem_tui.letta.footer import (
    SEPARATOR,
    decode_passage,
    encode_passage,
    node_footer,
    react_footer,
)

FIXTURES = Path(__file__).parent / "letta_fixtures"

json_leaf = st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
any_text = st.text()  # includes control characters, surrogates excluded by hypothesis' default


@given(st.text() | st.binary().map(lambda b: b.decode("utf-8", "replace")))
def test_decode_never_raises(blob: str) -> None:
    decoded = decode_passage(blob)
    assert isinstance(decoded.text, str)
    assert isinstance(decoded.footer, dict)
    if not decoded.ok:
        assert decoded.text == blob and decoded.footer == {}


@given(any_text, st.text(max_size=20), st.dictionaries(st.text(), json_value), st.floats(0, 2e9))
def test_node_footer_round_trips(text: str, node_id: str, metadata: dict, ts: float) -> None:
    footer = node_footer("0123456789ab", node_id, metadata, ts)
    decoded = decode_passage(encode_passage(text, footer))
    assert decoded.ok
    assert decoded.text == text  # even when the text itself contains the separator
    assert decoded.footer == json.loads(json.dumps(footer))


@given(st.text(), st.text())
def test_text_containing_the_separator_splits_at_the_last_one(before: str, after: str) -> None:
    text = before + SEPARATOR + after
    decoded = decode_passage(encode_passage(text, {"kind": "node_scope"}))
    assert decoded.text == text
    assert decoded.footer == {"kind": "node_scope"}


def test_encoding_matches_ari_sorted_keys_and_non_ascii() -> None:
    footer = node_footer("1b853cd72fc6", "n_b", {"i": 1}, 1796203176.4470994)
    blob = encode_passage("Japanese note: 結果 ベンチマーク 性能 α/β", footer)
    real = json.loads((FIXTURES / "archival_search.json").read_text(encoding="utf-8"))
    assert blob == real["body"]["results"][1]["content"]


def test_react_footer_takes_node_and_step_from_metadata() -> None:
    footer = react_footer("0123456789ab", {"node_id": "node_x", "step": 3}, 5.0)
    assert footer["collection"] == "ari_react_0123456789ab"
    assert (footer["node_id"], footer["step"], footer["kind"]) == ("node_x", 3, "react_step")
    bare = react_footer("0123456789ab", {}, 5.0)
    assert (bare["node_id"], bare["step"]) == ("", None)


def test_unserialisable_metadata_values_become_strings() -> None:
    blob = encode_passage("t", {"ari_metadata": {"path": Path("/x/y")}})
    assert decode_passage(blob).footer == {"ari_metadata": {"path": "/x/y"}}


def test_bad_footers_keep_the_whole_blob_as_text() -> None:
    for blob, why in [
        ("plain text", "no <<<ARI_META>>> footer"),
        ("t" + SEPARATOR + "{not json", "not JSON"),
        ("t" + SEPARATOR + "[1, 2]", "not a JSON object"),
        ("t" + SEPARATOR + "[" * 100_000, "not JSON"),
    ]:
        decoded = decode_passage(blob)
        assert not decoded.ok and why in decoded.error
        assert decoded.text == blob and decoded.footer == {}
