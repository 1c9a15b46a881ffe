"""A FAKE OpenAI-compatible embeddings endpoint, in-process on 127.0.0.1, for the unit tests.

It answers `POST /v1/embeddings` with the live suite's own deterministic vectors (the `embed`
function of scripts/letta/embed_server.py, the endpoint the real Letta server runs with),
records every request it gets (path, headers, JSON body), and first plays a script of answers
(`script`: status, headers, body) so that a test can make it rate-limit, fail, send the wrong
dimension or something that is not embeddings at all. It stands in for a real provider only
where speed and scripted failures are needed; the live suite runs the real server.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "letta"))
from embed_server import embed

Scripted = tuple[int, dict[str, str], bytes]


class FakeEmbeddings:
    def __init__(
        self,
        dim: int = 48,
        as_floats: bool = False,
        salt: str = "",
        mangle: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.dim = dim
        self.as_floats = as_floats  # answer lists of numbers instead of base64
        self.salt = salt  # another endpoint serving "the same model": other vectors
        self.mangle = mangle  # what a misbehaving endpoint does to `data` before it answers
        self.script: list[Scripted] = []  # answered first, one per request
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def texts(self) -> list[str]:
        """Every text sent, in order."""
        return [text for r in self.requests for text in r["body"].get("input", [])]

    def vector(self, text: str) -> list[float]:
        return embed((text if text.strip() else " ") + self.salt, self.dim)

    def answer(self, body: dict[str, Any]) -> Scripted:
        data = []
        for i, text in enumerate(body.get("input") or []):
            vec = self.vector(text)
            packed = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
            data.append(
                {"object": "embedding", "index": i, "embedding": vec if self.as_floats else packed}
            )
        if self.mangle is not None:
            data = self.mangle(data)
        payload = {"object": "list", "data": data, "model": body.get("model")}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                with fake._lock:
                    fake.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    scripted = fake.script.pop(0) if fake.script else None
                status, headers, out = scripted or fake.answer(body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        return Handler

    def start(self) -> FakeEmbeddings:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


@contextmanager
def fake_embeddings(**kwargs: Any) -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings(**kwargs).start()
    try:
        yield fake
    finally:
        fake.stop()


def error(status: int, message: str, **headers: str) -> Scripted:
    """A scripted error answer in OpenAI's shape."""
    body = json.dumps({"error": {"message": message, "type": "error"}}).encode()
    return status, {"Content-Type": "application/json", **headers}, body
