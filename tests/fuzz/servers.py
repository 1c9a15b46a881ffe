"""The two servers whose answers the fuzzer damages: the embedding endpoint of a run's model and
a Letta server, both the tests' fakes (tests/fake_embeddings.py, tests/fake_letta.py) on
127.0.0.1, with a hook that damages what they answer while a case runs.

A case sets `damage` (which answers, and the seed its choices come from) before its command runs
in a child; the server thread damages each answer it makes with a `Seeded` chooser of that seed
plus the answer's number, so the same case damages the same answers the same way.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from fake_embeddings import FakeEmbeddings
from fake_letta import FakeLetta, _Handler

from tests.fuzz.damage import Seeded, damage_bytes, damage_json


@dataclass
class AnswerDamage:
    """Which answers to damage (`route`: a Letta route's name, or "*"), how many (None: all),
    from which seed; `steps` collects what was done."""

    route: str
    seed: int
    count: int | None
    steps: list[str] = field(default_factory=list)
    done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def applies(self, route: str) -> bool:
        return self.route in ("*", route) and (self.count is None or self.done < self.count)

    def damaged(self, status: int, body: bytes, route: str) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, extra headers) of the damaged answer."""
        with self.lock:
            chooser = Seeded(self.seed * 1009 + self.done)
            self.done += 1
        how = chooser.pick(["json", "json", "json", "bytes", "status", "retry", "empty", "huge"])
        steps: list[str] = []
        headers: dict[str, str] = {}
        if how == "json":
            found = damage_json(chooser, body)
            body, steps = found.data, found.steps
        elif how == "bytes":
            body = damage_bytes(chooser, chooser.random(), body, steps)
        elif how == "status":
            status = chooser.pick([200, 204, 301, 400, 401, 404, 413, 422, 500, 503])
            steps.append(f"HTTP {status}")
        elif how == "retry":
            status = chooser.pick([429, 503])
            value = chooser.pick(["1e308", "-1", "NaN", "9" * 400, "inf", "0x10", "", "2"])
            headers["Retry-After"] = value
            steps.append(f"HTTP {status} Retry-After: {value[:20]}")
        elif how == "empty":
            body = b""
            steps.append("an empty body")
        else:
            body = b'{"data": [' + b'{"embedding": [0.0]}, ' * 400_000 + b"{}]}"
            steps.append(f"a {len(body) >> 20} MiB body")
        self.steps.append(f"{route} answer {self.done}: " + "; ".join(steps))
        return status, body, headers


class DamagingEmbeddings(FakeEmbeddings):
    """The fake OpenAI-compatible endpoint, its answers damaged while `damage` is set."""

    damage: AnswerDamage | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._server.handle_error = _quiet  # a client that hung up is no news

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        status, headers, out = super().answer(body)
        damage = self.damage
        if damage is not None and damage.applies("embeddings"):
            status, out, extra = damage.damaged(status, out, "embeddings")
            headers = {**headers, **extra}
        return status, headers, out


def _quiet(*_args: object) -> None:
    pass


class _DamagingHandler(_Handler):
    def _send(self, status: int, payload: Any) -> None:
        damage = getattr(self.fake, "damage", None)
        route = getattr(self.fake.routes, "name", "")
        if damage is None or not damage.applies(route):
            super()._send(status, payload)
            return
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        status, body, headers = damage.damaged(status, body, route)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


class DamagingLetta(FakeLetta):
    """The fake Letta server, its answers on one route (or all) damaged while `damage` is set."""

    damage: AnswerDamage | None = None
    routes = threading.local()  # the route each handler thread is answering

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any):
        name, status, payload = super().route(method, path, query, body)
        self.routes.name = name
        return name, status, payload

    def start(self) -> DamagingLetta:
        from http.server import ThreadingHTTPServer

        handler = type("Handler", (_DamagingHandler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.handle_error = _quiet
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self


LETTA_ROUTES = [
    "health",
    "agents.list",
    "agents.retrieve",
    "passages.list",
    "passages.search",
    "blocks.list",
    "blocks.retrieve",
    "*",
]
