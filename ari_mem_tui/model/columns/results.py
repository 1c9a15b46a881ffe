"""The rows of every read event's `results` as columns (`ResultRows`): the keys ARI writes
coded, scored and counted, a row of another shape kept whole."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import msgspec

from ari_mem_tui.model.columns.encoding import ABSENT, NAN, fields_of, put
from ari_mem_tui.model.columns.strings import StringTable
from ari_mem_tui.model.columns.texts import INT_MAX, INT_NONE, OptInts

ROW_KEYS = ("entry_id", "src_node_id", "node_id", "score", "type", "count")
_ROW_CODES = ("entry_id", "src_node_id", "node_id", "type")  # str | None, as codes
_UNSET = msgspec.UNSET
_STATE_ABSENT, _STATE_NONE, _STATE_VALUE = 0, 1, 2


class ResultRows:
    """The rows of every read event's `results`, as columns: the keys ARI writes (entry_id,
    src_node_id, node_id, type: codes; score: float; count: int), each row's dict rebuilt
    when read; a row of another shape is kept whole in `side`."""

    def __init__(
        self,
        codes: dict[str, Any] | None = None,
        score: Any = None,
        score_state: Any = None,
        count: OptInts | None = None,
        count_state: Any = None,
        side: dict[int, Any] | None = None,
    ) -> None:
        self.codes = codes or {key: array("i") for key in _ROW_CODES}
        self.score = array("d") if score is None else score
        self.score_state = bytearray() if score_state is None else score_state
        self.count = count or OptInts()
        self.count_state = bytearray() if count_state is None else count_state
        self.side = side or {}

    def __len__(self) -> int:
        return len(self.score)

    def row(self, strings: StringTable, index: int) -> Any:
        if index in self.side:
            return self.side[index]
        out: dict[str, Any] = {}
        for key in ROW_KEYS:
            if key == "score":
                state = self.score_state[index]
                if state:
                    out[key] = self.score[index] if state == _STATE_VALUE else None
            elif key == "count":
                state = self.count_state[index]
                if state:
                    out[key] = self.count[index] if state == _STATE_VALUE else None
            else:
                code = self.codes[key][index]
                if code != ABSENT:
                    out[key] = strings[code]
        return out

    def score_at(self, index: int) -> Any:
        """`row(…, index).get("score")`, without making the row."""
        if index in self.side:
            return self.side[index].get("score")
        return self.score[index] if self.score_state[index] == _STATE_VALUE else None

    def add_typed(self, strings: StringTable, rows: Sequence[Any]) -> None:
        """Rows decoded as Structs of the known keys (msgspec.UNSET where a key is absent)."""
        if not rows:
            return
        eid, src, node, kind, scores, counts = fields_of(rows, _ROW_FIELDS)
        codes = strings.codes
        self.codes["entry_id"].extend(codes(eid))
        self.codes["src_node_id"].extend(codes(src))
        self.codes["node_id"].extend(codes(node))
        self.codes["type"].extend(codes(kind))
        states = bytes(map(_STATES.get, scores, repeat(_STATE_VALUE)))
        if states.count(_STATE_VALUE) == len(states):
            put(self.score, scores)
        else:
            put(self.score, [s if type(s) is float else NAN for s in scores])
        self.score_state += states
        states = bytes(map(_STATES.get, counts, repeat(_STATE_VALUE)))
        if states.count(_STATE_ABSENT) == len(states):  # (ARI writes no count but rarely)
            self.count.values.extend(array("q", [INT_NONE]) * len(states))
        else:
            self.count.extend([c if type(c) is int else None for c in counts])
        self.count_state += states

    def _number(self, score: Any, count: Any) -> None:
        if score is _UNSET:
            self.score.append(NAN)
            self.score_state.append(_STATE_ABSENT)
        elif score is None:
            self.score.append(NAN)
            self.score_state.append(_STATE_NONE)
        else:
            self.score.append(score)
            self.score_state.append(_STATE_VALUE)
        if count is _UNSET or count is None:
            self.count.append(None)
            self.count_state.append(_STATE_ABSENT if count is _UNSET else _STATE_NONE)
        else:
            self.count.append(count)
            self.count_state.append(_STATE_VALUE)

    def add_value(self, strings: StringTable, row: Any) -> None:
        """A row as the lenient reader gives it (any dict)."""
        if not _plain_row(row):
            self.side[len(self)] = row
            for key in _ROW_CODES:
                self.codes[key].append(ABSENT)
            self._number(_UNSET, _UNSET)
            return
        for key in _ROW_CODES:
            self.codes[key].append(strings.code(row[key]) if key in row else ABSENT)
        self._number(row.get("score", _UNSET), row.get("count", _UNSET))


_STATES = {_UNSET: _STATE_ABSENT, None: _STATE_NONE}  # (any other value: _STATE_VALUE)
_ROW_FIELDS = ("entry_id", "src_node_id", "node_id", "type", "score", "count")


def _plain_row(row: Any) -> bool:
    """A dict of the known keys, each of the type its column holds."""
    if type(row) is not dict or not set(row) <= _ROW_KEY_SET:
        return False
    for key in _ROW_CODES:
        value = row.get(key)
        if value is not None and type(value) is not str:
            return False
    score, count = row.get("score"), row.get("count")
    if score is not None and type(score) is not float:
        return False
    return count is None or (type(count) is int and INT_NONE < count <= INT_MAX)


_ROW_KEY_SET = frozenset(ROW_KEYS)
