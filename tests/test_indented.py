"""render/indented.py writes what json.dumps(indent=2, ensure_ascii=False) writes, byte for byte
(every JSON output and the demo's files go through it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ari_mem_tui.render.indented import indented

# (st.text() leaves out lone surrogates: json writes them as they are, and so must this)
text = st.text() | st.text(st.characters(categories=["Cs", "Lo", "Cc"]))
scalars = st.none() | st.booleans() | st.integers() | st.floats() | text
keys = text | st.integers() | st.floats() | st.booleans() | st.none()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=5)
    ),
    max_leaves=30,
)


def nonfinite_null(value):
    """`value` with every NaN and ±Infinity value `None`, keys kept as they are (a round trip
    through json.loads would merge keys json.dumps writes alike: two NaN keys, 1 and "1")."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: nonfinite_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [nonfinite_null(item) for item in value]
    return value


@settings(max_examples=300, deadline=None)
@example({float("nan"): None, float("nan"): None}, 0)  # two keys written alike, both kept
@given(values, st.integers(min_value=0, max_value=3))
def test_the_same_text_as_json_dumps(value, level) -> None:
    """json.dumps's text, but NaN and ±Infinity written `null` (JSON has no such numbers)."""
    expected = json.dumps(nonfinite_null(value), indent=2, ensure_ascii=False)
    if level:  # as a value nested `level` deep: every line after the first indented more
        expected = expected.replace("\n", "\n" + "  " * level)
    assert indented(value, level) == expected


def test_what_json_cannot_encode_goes_through_default_as_in_json_dumps() -> None:
    value = {"path": Path("/run/ckpt"), "set": [{3}], 2: (Path("x"), None)}
    assert indented(value, default=str) == json.dumps(
        value, indent=2, ensure_ascii=False, default=str
    )


def test_the_errors_are_json_dumps_errors() -> None:
    with pytest.raises(TypeError, match="keys must be"):
        indented({(1, 2): 1})
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented({"a": object()})


def test_nan_and_infinity_are_written_null_and_read_by_a_strict_parser() -> None:
    value = {"n": float("nan"), "big": [float("inf"), -float("inf"), 1.5], (1.0): float("nan")}
    text = indented(value)
    assert text == json.dumps(
        {"n": None, "big": [None, None, 1.5], "1.0": None}, indent=2, ensure_ascii=False
    )
    assert "NaN" not in text and "Infinity" not in text


def test_a_circular_reference_is_still_jsons_error() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        indented(loop)
