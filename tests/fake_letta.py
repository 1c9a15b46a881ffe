"""A FAKE Letta 0.16.7 HTTP server for tests: stdlib http.server in a thread, on 127.0.0.1.

It serves the routes ARI (and ari-mem-tui) use, with bodies built from real 0.16.7 responses
(`tests/letta_fixtures/`), so the real `letta_client` SDK with `_strict_response_validation=True`
accepts them. Its search is NOT Letta's: it ranks by how many query words a passage contains
(ties in insertion order, zero-score rows kept, like ARI's own test fake); real semantic ranking
is covered by the live suite against a real server.

Faults for the error paths: `fail[route] = (status, body)`, `delay` (seconds before answering),
`api_key` (401 without the right bearer token).
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent / "letta_fixtures"
AGENT_ID_RE = re.compile(
    r"^agent-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)
SEPARATOR = "\n<<<ARI_META>>>\n"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def _now_iso() -> str:
    return datetime.now(tz=UTC).isoformat()


def _iso(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class FakeLetta:
    """The server's state, templates and faults; `url` once started (use as a context manager)."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.delay = 0.0
        self.fail: dict[str, tuple[int, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.bodies: list[tuple[str, str, Any]] = []  # (method, path, JSON body) of writes
        self.agents: dict[str, dict[str, Any]] = {}
        self.passages: dict[str, list[dict[str, Any]]] = {}
        self.blocks: dict[str, dict[str, dict[str, Any]]] = {}
        self._agent_tpl = fixture("agent_retrieve")["body"]
        self._passage_tpl = fixture("archival_list")["body"][0]
        self._block_tpl = fixture("block_retrieve_ari_context")["body"]
        self._health = fixture("health")["body"]
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._connections: list[Any] = []  # open keep-alive sockets, closed by stop()

    # ---- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeLetta:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop like a killed server: no listener, and the open connections dropped."""
        import socket

        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for sock in self._connections:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._connections.clear()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # ---- state -------------------------------------------------------------------------

    def add_agent(self, name: str, blocks: dict[str, str] | None = None) -> str:
        """An agent with ARI's three blocks (empty unless given)."""
        if blocks is None:
            blocks = {"persona": "", "human": "", "ari_context": ""}
        agent = copy.deepcopy(self._agent_tpl)
        agent_id = f"agent-{uuid.uuid4()}"
        agent.update(id=agent_id, name=name, created_at=_now_iso(), updated_at=_now_iso())
        with self._lock:
            self.agents[agent_id] = agent
            self.passages[agent_id] = []
            self.blocks[agent_id] = {}
        for label, value in blocks.items():
            self.set_block(agent_id, label, value)
        return agent_id

    def set_block(self, agent_id: str, label: str, value: str) -> None:
        block = copy.deepcopy(self._block_tpl)
        block.update(label=label, value=value, id=f"block-{uuid.uuid4()}")
        self.blocks[agent_id][label] = block

    def add_passage(
        self,
        agent_id: str,
        text: str,
        created_at: str | None = None,
        passage_id: str | None = None,
    ) -> str:
        passage = copy.deepcopy(self._passage_tpl)
        passage_id = passage_id or f"passage-{uuid.uuid4()}"
        stamp = _iso(created_at) or datetime.now(tz=UTC)
        passage.update(
            id=passage_id,
            text=text,
            tags=[],
            created_at=stamp.isoformat(),
            updated_at=stamp.isoformat(),
            embedding=[0.0, 0.5, -0.5, 1.0],  # real rows carry 4096 floats; shape is what counts
        )
        with self._lock:
            self.passages[agent_id].append(passage)
        return passage_id

    def add_ari_passage(
        self, agent_id: str, text: str, footer: dict[str, Any], passage_id: str | None = None
    ) -> str:
        """A passage in ARI's encoding, created at the footer's ts."""
        blob = text + SEPARATOR + json.dumps(footer, sort_keys=True, ensure_ascii=False)
        stamp = datetime.fromtimestamp(float(footer.get("ts") or time.time()), tz=UTC)
        return self.add_passage(agent_id, blob, stamp.isoformat(), passage_id)

    # ---- routes ------------------------------------------------------------------------

    def route(self, method: str, path: str, query: dict[str, list[str]], body: Any):
        """(route name, status, body) for one request."""
        q = {k: v[-1] for k, v in query.items()}
        if path == "/v1/health/":
            return "health", 200, self._health
        if path == "/v1/agents/" and method == "GET":
            return "agents.list", 200, self._list_agents(q)
        if path == "/v1/agents/" and method == "POST":
            return "agents.create", 200, self._create_agent(body or {})
        match = re.match(r"^/v1/agents/([^/]+)(/.*)?$", path)
        if not match:
            return "unknown", 404, {"detail": "Not Found"}
        agent_id, rest = match.group(1), match.group(2) or ""
        if not AGENT_ID_RE.match(agent_id):
            return "agents.bad_id", 422, self._bad_id(agent_id)
        if agent_id not in self.agents:
            return "agents.missing", 404, {"detail": f"Agent with ID {agent_id} not found"}
        if rest == "" and method == "GET":
            return "agents.retrieve", 200, self.agents[agent_id]
        if rest == "" and method == "DELETE":
            with self._lock:
                del self.agents[agent_id]
            return "agents.delete", 200, None
        if rest == "/archival-memory" and method == "GET":
            return "passages.list", 200, self._list_passages(agent_id, q)
        if rest == "/archival-memory" and method == "POST":
            text, created = (body or {}).get("text"), (body or {}).get("created_at")
            if not isinstance(text, str):
                return "passages.create", 422, {"detail": "text: Field required"}
            passage_id = self.add_passage(agent_id, text, created)
            return "passages.create", 200, [self._passage(agent_id, passage_id)]
        if rest == "/archival-memory/search":
            return self._search(agent_id, q)
        if rest == "/core-memory/blocks":
            return "blocks.list", 200, list(self.blocks[agent_id].values())
        block = re.match(r"^/core-memory/blocks/([^/]+)$", rest)
        if block:
            return self._block(agent_id, block.group(1), method, body or {})
        return "unknown", 404, {"detail": "Not Found"}

    def _list_agents(self, q: dict[str, str]) -> list[dict[str, Any]]:
        agents = list(self.agents.values())
        if "name" in q:
            agents = [a for a in agents if a["name"] == q["name"]]
        if "after" in q:
            ids = [a["id"] for a in agents]
            agents = agents[ids.index(q["after"]) + 1 :] if q["after"] in ids else []
        return agents[: int(q.get("limit", 50))]

    def _create_agent(self, body: dict[str, Any]) -> dict[str, Any]:
        agent_id = self.add_agent(str(body.get("name") or "agent"))
        for block in body.get("memory_blocks") or []:
            self.set_block(agent_id, block["label"], block.get("value", ""))
        return self.agents[agent_id]

    def _bad_id(self, agent_id: str) -> dict[str, Any]:
        body = copy.deepcopy(fixture("error_422_bad_id")["body"])
        body["detail"] = body["detail"].replace("not-an-id", agent_id)
        return body

    def _passage(self, agent_id: str, passage_id: str) -> dict[str, Any]:
        return next(p for p in self.passages[agent_id] if p["id"] == passage_id)

    def _list_passages(self, agent_id: str, q: dict[str, str]) -> list[dict[str, Any]]:
        rows = list(self.passages[agent_id])
        if q.get("ascending", "true").lower() == "false":
            rows.reverse()
        if "search" in q:  # a substring filter, as the real route does
            rows = [p for p in rows if q["search"].lower() in p["text"].lower()]
        if "after" in q:
            ids = [p["id"] for p in rows]
            rows = rows[ids.index(q["after"]) + 1 :] if q["after"] in ids else []
        return rows[: int(q.get("limit", 100))]

    def _search(self, agent_id: str, q: dict[str, str]):
        if "query" not in q:
            return "passages.search", 422, fixture("error_422_search_missing_query")["body"]
        words = q["query"].lower().split()
        end = _iso(q.get("end_datetime"))
        rows = [p for p in self.passages[agent_id] if end is None or _iso(p["created_at"]) <= end]
        if not words:
            rows = []

        def score(passage: dict[str, Any]) -> int:
            text = passage["text"].rpartition(SEPARATOR)[0] or passage["text"]
            return sum(1 for w in words if w in text.lower())

        rows = sorted(rows, key=score, reverse=True)[: int(q.get("top_k", 5))]
        results = [
            {"id": p["id"], "timestamp": p["created_at"], "content": p["text"], "tags": p["tags"]}
            for p in rows
        ]
        return "passages.search", 200, {"results": results, "count": len(results)}

    def _block(self, agent_id: str, label: str, method: str, body: dict[str, Any]):
        blocks = self.blocks[agent_id]
        if label not in blocks:
            detail = f"No block with label '{label}' found for agent '{agent_id}'"
            return "blocks.retrieve", 404, {"detail": detail}
        if method == "PATCH" and "value" in body:
            blocks[label]["value"] = body["value"]
            return "blocks.update", 200, blocks[label]
        return "blocks.retrieve", 200, blocks[label]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLetta
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.fake._connections.append(self.connection)

    def _handle(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        fake.requests.append((method, parts.path, query))
        if body is not None:
            fake.bodies.append((method, parts.path, body))
        if fake.delay:
            time.sleep(fake.delay)
        if fake.api_key and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
            self._send(401, {"detail": "Unauthorized"})
            return
        name, status, payload = fake.route(method, parts.path, query, body)
        if name in fake.fail:
            status, payload = fake.fail[name]
        self._send(status, payload)

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests): nothing to answer

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class HtmlServer:
    """A plain web server that is not Letta: every path answers the same page (HTML by default)."""

    def __init__(
        self,
        status: int = 200,
        body: bytes = b"<!doctype html><html><body><h1>It works!</h1></body></html>",
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        status_code = status

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                data = body
                self.send_response(status_code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def free_port() -> int:
    """A port nothing listens on (bound then released), for connection-refused tests."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
