"""What if: every node's start-up search replayed under other memory settings, beside the run's
own (`health --what-if limit=10,top_k=400,ranker=bm25,drop=tool-auto`, the Health view's row).

The settings are ARI's: `limit` (5) and the window, `top_k = max(overfetch, 40·limit)` unless
given; the ranker (the run's own, MiniLM, BM25, ARI's in-memory rule); the pool (as of each
node's start, or today's); and kinds of memory left out as if ARI had not stored them (its
automatic `Tool …` entries, ReAct steps: search/dropped.py). Both sides are whole `Health`
reports computed by the same code (`health.compute_health`); under the run's own settings the
what-if side takes the access log's hits where a search was logged, exactly as `health` does,
so it IS `health` (byte for byte in JSON). Under any other settings every node's hits are
replayed: the recording answers only the settings it was made with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ari_mem_tui.health import ProgressFn, Search, compute_health
from ari_mem_tui.model import Checkpoint
from ari_mem_tui.model.health import (
    Bucket,
    Health,
    NodeHealth,
    WhatIf,
    WhatIfChanges,
    WhatIfDepth,
    WhatIfNode,
)
from ari_mem_tui.model.words import plural
from ari_mem_tui.run import Run, local_ranker
from ari_mem_tui.search.dropped import DROPPABLE
from ari_mem_tui.search.fidelity import with_check
from ari_mem_tui.search.replay import DEFAULT_LIMIT, OVERFETCH, top_k_for

RANKERS = ("own", "minilm", "bm25", "in-memory")
POOLS = ("start", "now")
KEYS = ("limit", "overfetch", "top_k", "ranker", "pool", "drop")
MAX_LIMIT = 200  # as `--limit`


class SettingsError(ValueError):
    """A what-if setting that is not one (the message names it and what it may be)."""


@dataclass(frozen=True)
class Settings:
    """One set of memory settings; the defaults are ARI's."""

    limit: int = DEFAULT_LIMIT
    overfetch: int = OVERFETCH
    top_k: int | None = None  # given; else ARI's max(overfetch, 40·limit)
    ranker: str = "own"
    pool: str = "start"  # each node's pool as of its search ("start") or today's ("now")
    drop: tuple[str, ...] = ()

    @property
    def window(self) -> int:
        return self.top_k if self.top_k is not None else top_k_for(self.limit, self.overfetch)

    def search(self, recorded: bool) -> Search:
        return Search(
            limit=self.limit,
            top_k=self.window,
            as_of_start=self.pool == "start",
            drop=self.drop,
            recorded=recorded,
        )

    def shown(self, ranker: str = "") -> dict[str, object]:
        """The settings as JSON carries them (`ranker`: the ranker's name for "own")."""
        return {
            "limit": self.limit,
            "overfetch": self.overfetch,
            "top_k": self.window,
            "ranker": ranker if self.ranker == "own" and ranker else self.ranker,
            "pool": self.pool,
            "drop": list(self.drop),
        }

    def text(self) -> str:
        """As typed: `limit=10,top_k=400,ranker=bm25,drop=tool-auto` (only what differs from
        ARI's; "" when nothing does)."""
        parts = []
        if self.limit != DEFAULT_LIMIT:
            parts.append(f"limit={self.limit}")
        if self.overfetch != OVERFETCH:
            parts.append(f"overfetch={self.overfetch}")
        if self.top_k is not None and self.top_k != top_k_for(self.limit, self.overfetch):
            parts.append(f"top_k={self.top_k}")
        if self.ranker != "own":
            parts.append(f"ranker={self.ranker}")
        if self.pool != "start":
            parts.append(f"pool={self.pool}")
        if self.drop:
            parts.append("drop=" + "+".join(self.drop))
        return ",".join(parts)


def parse_settings(text: str, base: Settings | None = None) -> Settings:
    """`limit=10,top_k=400,ranker=bm25,drop=tool-auto` over `base` (default: ARI's). Keys:
    limit (1–200), overfetch and top_k (whole numbers ≥ 1), ranker (own, minilm, bm25,
    in-memory), pool (start, now), drop (tool-auto, react; several joined by `+` or the key
    repeated)."""
    settings = base or Settings()
    seen: set[str] = set()
    drops: list[str] = list(settings.drop)
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = (x.strip() for x in part.partition("="))
        key = key.replace("-", "_")
        if not sep or key not in KEYS:
            raise SettingsError(
                f"{part!r} is not a what-if setting: key=value, the keys {', '.join(KEYS)}"
            )
        if key in seen and key != "drop":
            raise SettingsError(f"{key} is given twice")
        seen.add(key)
        if key == "drop":
            drops += [_drop(v) for v in value.split("+")]
        elif key in ("limit", "overfetch", "top_k"):
            settings = replace(settings, **{key: _number(key, value)})
        elif key == "ranker":
            settings = replace(settings, ranker=_one_of(key, value, RANKERS))
        else:
            settings = replace(settings, pool=_one_of(key, value, POOLS))
    return replace(settings, drop=tuple(dict.fromkeys(drops)))


def _number(key: str, value: str) -> int:
    top = MAX_LIMIT if key == "limit" else 10**9
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= top:
        raise SettingsError(f"{key}={value!r}: a whole number from 1 to {top:,}")
    return number


def _one_of(key: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise SettingsError(f"{key}={value!r}: one of {', '.join(allowed)}")
    return value


def _drop(value: str) -> str:
    value = value.strip()
    if value not in DROPPABLE:
        names = ", ".join(f"{k} ({v})" for k, v in DROPPABLE.items())
        raise SettingsError(f"drop={value!r}: one of {names}")
    return value


def same_settings(settings: Settings, own: Settings, ranker_name: str, own_name: str) -> bool:
    """Whether `settings` search as the run's own do (the ranker named by name: "minilm" is
    the run's own ranker when that is MiniLM)."""
    ranker_same = settings.ranker == "own" or ranker_name == own_name
    return (
        ranker_same
        and settings.limit == own.limit
        and settings.window == own.window
        and settings.pool == own.pool
        and set(settings.drop) == set(own.drop)
    )


def ranker_for(run: Run, settings: Settings) -> object:
    """The ranker `settings` name: the run's own, or a local one built for the what-if (MiniLM
    computes the vectors its cache lacks: wait for them, as `health` does)."""
    if settings.ranker == "own" or getattr(run.ranker, "name", "") == settings.ranker:
        return run.ranker
    return local_ranker(run.checkpoint, settings.ranker)


# ------------------------------------------------------------------ the two passes
def what_if(
    ckpt: Checkpoint,
    own_ranker: object,
    settings: Settings,
    ranker: object | None = None,
    own: Settings | None = None,
    progress: ProgressFn | None = None,
    cancelled: Callable[[], bool] | None = None,
    all_entries: bool = False,
    own_report: tuple[Health, dict[str, list[str]]] | None = None,
    check: object | None = None,
) -> WhatIf:
    """The run's own health (`own_report`: one computed already, with its hits) and the same
    run under `settings` (ranked by `ranker`, default the run's own), and what changed.
    `progress(done, total)` runs over both passes; `cancelled()` interrupts either. `check`:
    the run's kept replay check (run_check.kept_check), which says, as it does for `health`,
    how far each side ranked by the run's own ranker is exact."""
    own = own or Settings()
    ranker = ranker if ranker is not None else own_ranker
    own_name = str(getattr(own_ranker, "name", "?"))
    name = str(getattr(ranker, "name", "?"))
    same = same_settings(settings, own, name, own_name)
    passes = 1 if own_report is not None else 2
    step = _stepper(progress, passes)
    if own_report is None:
        own_hits: dict[str, list[str]] = {}
        mine = compute_health(
            ckpt,
            own_ranker,  # type: ignore[arg-type]
            progress=step(0),
            cancelled=cancelled,
            all_entries=all_entries,
            search=own.search(recorded=True),
            hits=own_hits,
        )
        _checked(mine, check)
    else:
        mine, own_hits = own_report
    their_hits: dict[str, list[str]] = {}
    theirs = compute_health(
        ckpt,
        ranker,  # type: ignore[arg-type]
        progress=step(passes - 1),
        cancelled=cancelled,
        search=settings.search(recorded=same),
        hits=their_hits,
        entries_of=mine if mine.complete else None,
    )
    if ranker is own_ranker:
        _checked(theirs, check)
    result = WhatIf(
        settings=settings.shown(own_name),
        own_settings=own.shown(own_name),
        same=same,
        own=mine,
        what_if=theirs,
    )
    result.changes = changes(mine, theirs, own_hits, their_hits)
    result.notes = _notes(result)
    return result


def _checked(report: Health, check: object | None) -> None:
    if report.fidelity is not None:
        with_check(report.fidelity, check)


def _stepper(progress: ProgressFn | None, passes: int) -> Callable[[int], ProgressFn | None]:
    """Each pass's progress as a share of all of them."""

    def of(index: int) -> ProgressFn | None:
        if progress is None:
            return None

        def report(done: int, total: int) -> None:
            progress(index * total + done, passes * total)

        return report

    return of


def changes(
    own: Health, other: Health, own_hits: dict[str, list[str]], other_hits: dict[str, list[str]]
) -> WhatIfChanges:
    """Per node, what the what-if gained and lost; across the run, starved on either side and
    the depths side by side."""
    out = WhatIfChanges(starved_own=own.starved, starved_what_if=other.starved)
    theirs = {row.node_id: row for row in other.nodes}
    for mine in own.nodes:
        row = theirs.get(mine.node_id)
        if row is None or not (mine.searched and row.searched):
            continue
        node = _node_change(
            mine, row, own_hits.get(mine.node_id, []), other_hits.get(row.node_id, [])
        )
        if mine.starved and not row.starved:
            out.no_longer_starved.append(mine.node_id)
        elif row.starved and not mine.starved:
            out.newly_starved.append(mine.node_id)
        out.hits_gained += len(node.gained)
        out.hits_lost += len(node.lost)
        if node.gained or node.lost or mine.starved != row.starved or mine.hits != row.hits:
            out.nodes.append(node)
    out.nodes_changed = len(out.nodes)
    out.nodes.sort(key=_change_order)
    out.by_depth = _depths(own.by_depth, other.by_depth)
    return out


def _node_change(mine: NodeHealth, row: NodeHealth, had: list[str], got: list[str]) -> WhatIfNode:
    before, after = set(had), set(got)
    return WhatIfNode(
        node_id=mine.node_id,
        depth=mine.depth,
        hits_own=mine.hits,
        hits_what_if=row.hits,
        eligible_own=mine.eligible,
        eligible_what_if=row.eligible,
        reached_own=mine.reached,
        reached_what_if=row.reached,
        starved_own=mine.starved,
        starved_what_if=row.starved,
        gained=[e for e in got if e not in before],
        lost=[e for e in had if e not in after],
        share_other_own=mine.share_other,
        share_other_what_if=row.share_other,
        share_tool_own=mine.share_tool,
        share_tool_what_if=row.share_tool,
    )


def _change_order(node: WhatIfNode) -> tuple:
    """No longer starved first, then newly starved, then the most hits changed."""
    fixed = node.starved_own and not node.starved_what_if
    broken = node.starved_what_if and not node.starved_own
    return (not fixed, not broken, -(len(node.gained) + len(node.lost)), node.node_id)


def _depths(own: list[Bucket], other: list[Bucket]) -> list[WhatIfDepth]:
    theirs = {b.label: b for b in other}
    rows = []
    for mine in own:
        b = theirs.get(mine.label, Bucket(label=mine.label))
        rows.append(
            WhatIfDepth(
                label=mine.label,
                nodes=mine.nodes,
                starved_own=mine.starved,
                starved_what_if=b.starved,
                reached_own=mine.mean_reached,
                reached_what_if=b.mean_reached,
                share_other_own=mine.mean_share_other,
                share_other_what_if=b.mean_share_other,
                share_tool_own=mine.mean_share_tool,
                share_tool_what_if=b.mean_share_tool,
                share_react_own=mine.mean_share_react,
                share_react_what_if=b.mean_share_react,
            )
        )
    return rows


def _notes(result: WhatIf) -> list[str]:
    notes = []
    own, other = result.own, result.what_if
    if result.same:
        notes.append("the what-if settings are the run's own: its side is `health` itself")
    elif own.recorded:
        moves = (
            ""
            if other.fidelity is not None and other.fidelity.own is True
            else ", by a ranker that is not the run's own: it moves hits too"
        )
        notes.append(
            f"the run's own side has the access log's hits for {plural(own.recorded, 'node')}"
            f" (recorded); every what-if hit is replayed ({other.ranker}){moves}"
        )
    fidelity = other.fidelity
    if fidelity is not None and not fidelity.exact and not result.same:
        notes.append(f"what-if ranker: {fidelity.label}")
    if other.drop:
        left = ", ".join(DROPPABLE[d] for d in other.drop)
        notes.append(f"left out as if ARI had not stored them: {left}")
    if not (own.complete and other.complete):
        notes.append("interrupted: the numbers cover the nodes done on both sides only")
    return notes


SUGGEST_TOOL, SUGGEST_REACT, SUGGEST_OTHER = 0.5, 0.3, 0.5


def suggest(h: Health) -> tuple[Settings, str] | None:
    """A what-if worth trying first, read off the starved nodes' windows (no pass is run):
    leave out ARI's automatic `Tool …` entries when they fill half of those windows on
    average, ReAct steps when they fill a third, else a window twice as wide when other
    branches fill half; None when no node is starved or the windows say nothing (a backend
    without a window)."""
    starved = [n for n in h.nodes if n.searched and n.starved and n.window]
    if not starved:
        return None

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    tool = mean([n.share_tool for n in starved])
    react = mean([n.share_react for n in starved])
    other = mean([n.share_other for n in starved])
    count = plural(len(starved), "starved node")
    if tool >= SUGGEST_TOOL:
        why = f"ARI's automatic Tool entries fill {tool:.0%} of the windows of the {count}"
        return Settings(drop=("tool-auto",)), why
    if react >= SUGGEST_REACT:
        why = f"ReAct steps fill {react:.0%} of the windows of the {count}"
        return Settings(drop=("react",)), why
    if other >= SUGGEST_OTHER:
        why = f"other branches fill {other:.0%} of the windows of the {count}"
        return Settings(top_k=2 * h.top_k), why
    return None
