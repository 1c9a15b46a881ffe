"""The run check's likely cause where start-up searches reproduce and the others do not
(search/check.py `_other_ranker`): what ranked the others, not the run's files."""

from __future__ import annotations

from collections import Counter

import pytest

from ari_mem_tui.search import check as C
from ari_mem_tui.search.causes import FILES, causes_said

LATE = "1 entry stamped before the search reached the memory after it (a late insert)"


def _check(*searches: tuple[str, bool, str]) -> C.ReplayCheck:
    check = C.ReplayCheck(ranker="minilm")
    for kind, reproduced, cause in searches:
        check.searches.append(
            C.SearchCheck(
                node_id="n",
                kind=kind,
                ts=1.0,
                query="q",
                reproduced=reproduced,
                differences=0 if reproduced else 1,
                cause=cause,
            )
        )
    for kind in (C.STARTUP, C.OTHER):
        mine = [s for s in check.searches if s.kind == kind]
        if mine:
            done = sum(1 for s in mine if s.reproduced)
            check.by_kind[kind] = {"checked": len(mine), "reproduced": done}
    return check


def _causes(check: C.ReplayCheck) -> Counter[str]:
    """How many searches each cause explains (what the check's words count)."""
    return Counter(s.cause for s in check.searches if s.cause)


def test_the_others_unreproduced_beside_reproduced_start_ups_are_another_ranker() -> None:
    check = _check(
        (C.STARTUP, True, ""),
        (C.STARTUP, False, FILES),  # a start-up search's own cause stays the files'
        (C.STARTUP, False, LATE),
        (C.OTHER, False, FILES),
        (C.OTHER, False, FILES),
        (C.OTHER, False, LATE),  # a named cause is kept
    )
    C._other_ranker(check)
    other = (
        "the other searches were recorded by another ranker: 1 of 3 start-up searches"
        " reproduce, none of the 3 others does"
    )
    assert [s.cause for s in check.searches] == ["", FILES, LATE, other, other, LATE]
    assert _causes(check) == Counter({other: 2, LATE: 2, FILES: 1})


def test_a_lone_other_search_s_files_cause_becomes_another_ranker() -> None:
    check = _check((C.STARTUP, True, ""), (C.OTHER, False, FILES))
    C._other_ranker(check)
    other = (
        "the other searches were recorded by another ranker: 1 of 1 start-up searches"
        " reproduce, none of the 1 others does"
    )
    assert _causes(check) == Counter({other: 1}) and FILES not in _causes(check)


@pytest.mark.parametrize(
    "searches",
    [
        [(C.STARTUP, False, FILES), (C.OTHER, False, FILES)],  # no start-up search reproduces
        [(C.STARTUP, True, ""), (C.OTHER, True, ""), (C.OTHER, False, FILES)],  # one other does
        [(C.OTHER, False, FILES)],  # no start-up search recorded
        [(C.STARTUP, True, ""), (C.STARTUP, False, FILES)],  # no other search recorded
    ],
    ids=["no-start-up-reproduced", "an-other-reproduced", "no-start-up", "no-other"],
)
def test_otherwise_the_files_stay_the_cause(searches) -> None:
    check = _check(*searches)
    before = [s.cause for s in check.searches], _causes(check)
    C._other_ranker(check)
    assert ([s.cause for s in check.searches], _causes(check)) == before


def test_every_cause_is_said_with_its_count_the_commonest_first() -> None:
    assert causes_said(Counter()) == ""
    assert causes_said(Counter({LATE: 3})) == LATE  # (one cause: no count)
    assert causes_said(Counter({FILES: 1, LATE: 2})) == f"2 searches: {LATE}; 1 search: {FILES}"
    many = Counter({"a": 5, "b": 4, "c": 3, "d": 2, "e": 1})
    assert (
        causes_said(many) == "5 searches: a; 4 searches: b; 3 searches: c; 3 searches: other causes"
    )
