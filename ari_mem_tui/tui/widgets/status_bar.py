"""The bottom status line: source, embedder (with a progress bar while vectors are computed),
problem count, wide tables and follow state."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive, var
from textual.widgets import ProgressBar, Static
from textual.worker import get_current_worker

from ari_mem_tui.model import Run
from ari_mem_tui.render.progress import progress_brief, progress_short
from ari_mem_tui.render.text import preview
from ari_mem_tui.search.fidelity import EXACT, NOT_REPRODUCED, STAND_IN, UNCHECKED
from ari_mem_tui.search.progress import Progress
from ari_mem_tui.tui.messages import VectorsReady


class LoadingNote(Static):
    """Where the tabs will be, while the run's memory loads: the load's step (the main
    screen's `load_step`, bound to its own)."""

    step: var[tuple[int, int, str, bool] | None] = var(None)  # (n, m, part, tree shown)

    def watch_step(self, step: tuple[int, int, str, bool] | None) -> None:
        if step is not None:
            self.show_step(*step)

    def show_step(self, n: int, m: int, part: str, tree_shown: bool) -> None:
        text = Text("loading memory … ", style="bold")
        text.append(f"({n} of {m}: {part})", style="cyan")
        if tree_shown:
            text.append(
                "\n\nThe tree is ready: move around it. The chosen node's hits, reads, core, "
                "writes and details appear here when the memory has loaded.",
                style="italic",
            )
        self.update(text)


SOURCE_MIN = 12  # cells: a narrower room shows no source at all, never `f` for `files: /…`


def cut_middle(text: str, width: int) -> str:
    """`text` in `width` cells, its middle replaced by `…` when it is longer: the start (the
    source: files, Letta) and the end (the run's folder) stay in sight. Below SOURCE_MIN cells
    nothing: a stub of a path reads as another path."""
    if cell_len(text) <= width:
        return text
    if width < SOURCE_MIN:
        return ""
    head = (width - 1) // 3
    tail = text[head:]
    while cell_len(tail) > width - 1 - head:
        tail = tail[1:]
    return text[:head] + "…" + tail


class SourceLabel(Static):
    """Where the run comes from (`files: /path/to/run`), cut in the middle to fit: at 80
    columns the status line keeps the run's name, the end of the path."""

    label = reactive("")

    def render(self) -> Text:
        return Text(cut_middle(self.label, self.size.width), style="bold")


CHECK_STYLES = {EXACT: "bold green", NOT_REPRODUCED: "bold red"}
CHECK_EVERY_S = 0.5  # the check's progress redrawn at most this often


def check_words(check: object) -> Text:
    """The run's replay check in the status line's few words: `exact 23/23`, `not reproduced
    20/23`, `stand-in`, `run's ranker, unchecked` (search/fidelity.py's words)."""
    word = getattr(check, "word", "") or UNCHECKED
    checked, reproduced = getattr(check, "checked", 0), getattr(check, "reproduced", 0)
    if word == STAND_IN and not checked:
        return Text("")  # the ranker's own note beside it says so already: no room wasted
    text = Text(word, style=CHECK_STYLES.get(word, "yellow"))
    if checked:
        text.append(f" {reproduced}/{checked}", style="bright_black")
    if not getattr(check, "complete", True):
        text.append(" (stopped)", style="yellow")
    return text


class StatusBar(Horizontal):
    """The status line. Too narrow for all of it (80 columns while vectors build), it gives up
    room in this order: the progress bar, then the long words (`embedder `, `n of N texts`
    → `n/N`), then the source's path (cut in the middle, then left out); never a number, a
    count or the problems and findings (`_fit`). It watches the app's run, wide tables and
    follow state, and shows the main screen's problem count (`problems`, bound to its own)."""

    problems: var[tuple[int, ...]] = var((0,))  # (problems, findings)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._watched: object | None = None  # the ranker whose vectors are shown
        self._checked: tuple[object, object] | None = None  # (run, ranker) checked or checking
        self.check: object | None = None  # the last replay check shown (search/check.py)
        # each part's (full, short) text: `_fit` chooses, as the width allows
        self._parts: dict[str, tuple[Text, Text]] = {}

    def compose(self) -> ComposeResult:
        yield SourceLabel(id="status-source")
        yield Static("", id="status-embedder")
        yield Static("", id="status-check")
        yield ProgressBar(total=None, show_eta=False, id="status-progress")
        yield Static("", id="status-progress-text")
        yield Static("", id="status-problems")
        yield Static("", id="status-wide")
        yield Static("", id="status-follow")

    def on_mount(self) -> None:
        self.query_one("#status-progress").display = False
        self.query_one("#status-progress-text").display = False
        self.query_one("#status-check").display = False
        self.query_one("#status-wide").display = False
        app = self.app
        if hasattr(app, "run_data"):  # the app's (tui/app.py), not a test's bare app
            self.watch(app, "run_data", self._run_changed, init=False)
            self.watch(app, "wide_columns", self.set_wide, init=False)
            self.watch(app, "following", self.set_follow, init=False)

    def watch_problems(self, counts: tuple[int, ...]) -> None:
        self.set_problems(*counts)

    def _run_changed(self, run: Run | None) -> None:
        """A run's memory is in (where it comes from, its ranker, its vectors' progress), or
        another is opening (None: no vectors watched)."""
        if run is None:
            self.watch_vectors(None)
            return
        self.set_source(run.source_label)
        self.set_embedder(getattr(run.ranker, "name", "?"))
        self.watch_vectors(run.ranker)

    def set_source(self, label: str) -> None:
        """Where the run comes from, one line, control characters shown; a path in the home
        folder as `~/…`, as a shell prompt says it (the room goes to the run's name)."""
        home = str(Path.home()).rstrip("/")
        if len(home) > 1:
            label = label.replace(f" {home}/", " ~/")
        self.query_one(SourceLabel).label = preview(label, 300)

    def set_embedder(self, name: str, note: str = "") -> None:
        short = Text(preview(name, 30), style="cyan")
        if note:
            short.append(" " + preview(note, 40), style="yellow")
        text = Text.assemble(("embedder ", "bright_black"), short)
        if self._parts.get("status-embedder", (None,))[0] != text:  # said after each search:
            self._set("status-embedder", text, short)  # unchanged, no layout of the screen

    def _set(self, part: str, full: Text, short: Text) -> None:
        self._parts[part] = (full, short)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Each part full or short, the progress bar shown or not, as the width allows; the
        source (1fr) takes what is left."""
        if not self.is_mounted:
            return
        width = self.size.width - 2  # (padding)
        bar = self.query_one("#status-progress")
        progress_on = self.query_one("#status-progress-text").display
        shown = {p: t for p, t in self._parts.items() if self.query_one(f"#{p}").display}

        def need(short: set[str], with_bar: bool) -> int:
            cells = sum(t[1 if p in short else 0].cell_len + 2 for p, t in shown.items())
            return cells + (13 if with_bar else 0) + SOURCE_MIN

        short: set[str] = set()
        with_bar = progress_on
        steps = ("bar", "status-embedder", "status-progress-text", "status-wide", "status-follow")
        for step in (*steps, "status-problems"):
            if need(short, with_bar) <= width:
                break
            if step == "bar":
                with_bar = False
            else:
                short.add(step)
        bar.display = with_bar
        for part, texts in shown.items():
            box = self.query_one(f"#{part}", Static)
            text = texts[1 if part in short else 0]
            if box.content != text:
                box.update(text)

    def check_run(self, run: Run) -> None:
        """Check the run's replays (search/check.py) in a thread, once per run and ranker: the
        check kept for these files, else every recorded search replayed, after the first hits
        (its caller's moment) and never before them; the line says how far it is, then what
        it found."""
        ranker = run.ranker
        if ranker is None or self._checked == (run, ranker):
            return
        self._checked = (run, ranker)
        self.check = None
        self._show_check(Text(""))  # (its progress, once a search is replayed)
        self.run_worker(
            partial(self._check, run, ranker),
            thread=True,
            group="check",
            exclusive=True,
            exit_on_error=False,
            description="replay check",
        )

    def check_of(self, run: Run) -> object | None:
        """The replay check shown, when it is of `run` and its ranker now (else None)."""
        return self.check if self._checked == (run, run.ranker) else None

    def _check(self, run: Run, ranker: object) -> None:
        from ari_mem_tui.run_check import replay_check  # noqa: PLC0415 - in the thread only

        worker = get_current_worker()
        shown = [0.0]

        def progress(done: int, total: int) -> None:
            time.sleep(0)  # the keys' thread first: a check is never urgent
            if time.monotonic() - shown[0] >= CHECK_EVERY_S:
                shown[0] = time.monotonic()
                words = Text(f"checking replays {done}/{total}", style="bright_black")
                self.app.call_from_thread(self._show_check, words, (run, ranker))

        check = replay_check(
            run, ranker=ranker, progress=progress, cancelled=lambda: worker.is_cancelled
        )
        if not worker.is_cancelled:
            self.app.call_from_thread(self._checked_run, run, ranker, check)

    def _checked_run(self, run: Run, ranker: object, check: object) -> None:
        if self._checked == (run, ranker):
            self.check = check
            self._show_check(check_words(check))

    def _show_check(self, text: Text, key: tuple[object, object] | None = None) -> None:
        if key is not None and key != self._checked:
            return  # a check of another run or ranker, superseded
        # (empty, it takes no room from the run's name; its counts are never shortened)
        self.query_one("#status-check", Static).display = bool(text.plain)
        self._set("status-check", text, text)

    def set_progress(self, done: int, total: int, progress: Progress | None = None) -> None:
        """The vectors' bar and "n of N texts · ETA" (from `progress` when the ranker keeps
        one), hidden once they are all computed."""
        bar = self.query_one("#status-progress", ProgressBar)
        text = self.query_one("#status-progress-text", Static)
        finished = total <= 0 or done >= total
        bar.display = text.display = not finished
        if not finished:
            bar.update(total=total, progress=done)
            if progress is None:
                progress = Progress(done=done, total=total)
            full = Text(progress_brief(progress), style="cyan")
            self._set("status-progress-text", full, Text(progress_short(progress), style="cyan"))
        else:
            self._fit()

    def watch_vectors(self, ranker: object | None) -> None:
        """Show `ranker`'s vector progress (MiniLM computes vectors in the background) until they
        are ready, then post `VectorsReady`; another call (None: none) stops watching this one."""
        self._watched = ranker
        if ranker is None or getattr(ranker, "ready", True):
            self.set_progress(0, 0)
            return

        prefix = [getattr(ranker, "prefix", 0)]

        def poll() -> None:
            if ranker is not self._watched:
                timer.stop()
                return
            done, total = getattr(ranker, "done", 0), getattr(ranker, "total", 0)
            if not getattr(ranker, "ready", True):
                self.set_progress(done, total, getattr(ranker, "progress", None))
                grown = getattr(ranker, "prefix", 0)
                if grown > prefix[0]:  # more pools are embedded: their replays can be MiniLM's
                    prefix[0] = grown
                    self.post_message(VectorsReady(ranker, complete=False))
                return
            timer.stop()
            self.set_progress(total, total)
            finding = getattr(ranker, "hash_finding", None)
            if finding is not None and finding.found is not None:  # searched: said where from
                self.app.notify(preview(finding.line(), 400), markup=False)
            self.post_message(VectorsReady(ranker))

        timer = self.set_interval(0.25, poll)
        poll()

    def set_problems(self, count: int, findings: int = 0) -> None:
        """`0 problems · 6 findings`; short, `0 prob · 6 find`: the counts always whole."""
        style = "bold red" if count else "green"
        label = Text(f"{count} problem{'s' if count != 1 else ''}", style=style)
        short = Text(f"{count} prob", style=style)
        if findings:
            label.append(f" · {findings} finding{'s' if findings != 1 else ''}", style="yellow")
            short.append(f" · {findings} find", style="yellow")
        self._set("status-problems", label, short)

    def set_wide(self, on: bool) -> None:
        self.query_one("#status-wide", Static).display = on  # hidden, it takes no room
        text = Text("⇔ wide (z)", style="bold")
        self._set("status-wide", text, Text("⇔ z", style="bold"))

    def set_follow(self, on: bool) -> None:
        text = Text("● following", style="bold green") if on else Text("")
        self._set("status-follow", text, Text("●", style="bold green") if on else text)
