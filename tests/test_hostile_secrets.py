"""Secrets in every encoded form, and the clipboard (issue 22 §4).

A server that echoes the request puts the tool's credentials in its error text in the forms
HTTP carries them: `Authorization: Basic base64(user:password)`, a Bearer key, a query value
percent-encoded in the request line. None of them may reach a message. The echo server is the
stdlib fake of test_hostile_letta.py (NOT Letta).
"""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from urllib.parse import quote

import pytest
from test_hostile_letta import TinyServer

from ari_mem_tui.model.secrets import base64_forms, forms, mask
from ari_mem_tui.render.text import paste_safe
from tests.hostile_helpers import one_line_error, run_cli
from tests.tui_app_helpers import make_app, settle
from tests.tui_helpers import IDS

PASSWORD = "PwS3cret/9+x"
QUERY_KEY = "sk/Qy+K3y=="
API_KEY = "KEYSECRET5"


def echo(conn: socket.socket, request: bytes) -> None:
    """400 echoing the request: its Authorization header first, then its request line."""
    lines = request.decode("latin-1").split("\r\n")
    auth = [line for line in lines if line.lower().startswith("authorization")]
    body = json.dumps({"detail": "bad request: " + " | ".join([*auth, lines[0]])}).encode()
    conn.sendall(
        b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


@pytest.fixture
def echo_server():
    srv = TinyServer(echo)
    yield srv
    srv.stop()


def every_form() -> list[str]:
    out = []
    for secret in (PASSWORD, QUERY_KEY, API_KEY, f"ari:{PASSWORD}"):
        out += [secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode()]
    return out


@pytest.mark.parametrize("command", ["summary", "saw"])
def test_no_form_of_a_credential_reaches_a_message(
    small_ckpt: Path, echo_server: TinyServer, command: str
) -> None:
    url = f"http://ari:{quote(PASSWORD, safe='')}@127.0.0.1:{echo_server.port}/"
    url += f"?api_key={quote(QUERY_KEY, safe='')}"
    args = [command, str(small_ckpt)] + (["9755"] if command == "saw" else [])
    proc = run_cli(*args, "--letta-url", url, "--letta-api-key", API_KEY)
    line = one_line_error(proc)
    assert "HTTP 400" in line and "***" in line, line  # the echo is shown, its secrets masked
    assert "Authorization" in line or "authorization" in line, line
    for form in every_form():
        assert form not in line, (form, line)
    for secret in (PASSWORD, QUERY_KEY, API_KEY):
        for fragment in base64_forms(secret):
            assert fragment not in line, (secret, fragment, line)


def test_a_non_ascii_api_key_is_said_to_be_unsendable(small_ckpt: Path) -> None:
    """Even with nothing listening: the key is refused before any call is made."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = run_cli(
        "summary", str(small_ckpt), "--letta-url", f"http://127.0.0.1:{port}",
        "--letta-api-key", "clé-secrète",
    )  # fmt: skip
    line = one_line_error(proc)
    assert "the API key cannot be sent" in line and "ASCII" in line
    assert "invalid JSON" not in line and "clé-secrète" not in line


def test_no_form_of_an_embedding_endpoints_credential_reaches_a_message(
    small_ckpt: Path, echo_server: TinyServer
) -> None:
    """`--embedder run` against the echo server: the endpoint key (from its variable), the
    URL's password and its query key are echoed back in the 400's reason; the one line that
    says the endpoint failed keeps the reason and masks every form of each."""
    url = f"http://ari:{quote(PASSWORD, safe='')}@127.0.0.1:{echo_server.port}/v1"
    url += f"?api_key={quote(QUERY_KEY, safe='')}"
    args = ["saw", str(small_ckpt), "9755", "--embedder", "run", "--embed-model", "m"]
    proc = run_cli(*args, "--embed-url", url, env={"ARI_MEM_TUI_EMBED_API_KEY": API_KEY})
    assert proc.returncode == 0, proc.stderr[-1000:]  # the local MiniLM stands in, labelled
    said = proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if "HTTP 400" in line)
    assert "is unavailable" in line and "***" in line and "uthorization" in line, line
    assert "stand-in: local MiniLM in place of run:m (unavailable)" in proc.stdout
    for form in every_form():
        assert form not in said, form
    for secret in (PASSWORD, QUERY_KEY, API_KEY):
        for fragment in base64_forms(secret):
            assert fragment not in said, (secret, fragment)


def test_a_non_ascii_embedding_key_is_said_to_be_unsendable(small_ckpt: Path) -> None:
    """Said before any call, with nothing listening; MiniLM answers in its place."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["saw", str(small_ckpt), "9755", "--embedder", "run", "--embed-model", "m"]
    env = {"ARI_MEM_TUI_EMBED_API_KEY": "clé-secrète"}
    proc = run_cli(*args, "--embed-url", f"http://127.0.0.1:{port}", env=env)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert "the API key in $ARI_MEM_TUI_EMBED_API_KEY cannot be sent" in proc.stderr
    assert "ASCII" in proc.stderr and "clé-secrète" not in proc.stdout + proc.stderr
    assert "connection refused" not in proc.stderr  # no call was made


def test_every_form_is_masked_at_every_alignment() -> None:
    secret = "TopS3cret!"
    texts = [
        f"raw {secret} end",
        f"q={quote(secret, safe='')}&x",
        "lower " + quote(secret, safe="").lower(),
        json.dumps({"k": secret + '"'}),
    ]
    for prefix in ("", "a", "ab", "user:"):  # base64 of a longer text, at each byte alignment
        encoded = base64.b64encode(f"{prefix}{secret}tail".encode()).decode()
        texts += [f"Basic {encoded}", encoded.replace("+", "-").replace("/", "_")]
    for text in texts:
        masked = mask(text, [secret])
        assert "***" in masked, text
        assert not any(form in masked for form in forms(secret)), (text, masked)
    assert mask("no secret here", [secret]) == "no secret here"
    assert mask("ab", ["ab"]) == "ab"  # too short to be told from ordinary text


def test_paste_safe_keeps_text_and_shows_controls() -> None:
    text = "id\x1b]52;c;ZXZpbA==\x07 \u202egnp.exe \x9b2J tab\tline\nend\ud800"
    safe, changed = paste_safe(text)
    assert changed == 5
    assert safe == "id␛]52;c;ZXZpbA==␇ <U+202E>gnp.exe <9B>2J tab\tline\nend<U+D800>"
    assert paste_safe("plain text\n") == ("plain text\n", 0)


async def test_y_copies_an_id_made_safe_and_says_so(tiny: Path) -> None:
    hostile = "node_b1\x1b]52;c;ZXZpbA==\x07"
    tree = json.loads((tiny / "tree.json").read_text())
    for node in tree["nodes"]:
        if node["id"] == IDS["B1"]:
            node["id"] = hostile
        node["children"] = [hostile if c == IDS["B1"] else c for c in node.get("children", [])]
    (tiny / "tree.json").write_text(json.dumps(tree))
    app = make_app(tiny)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.main.jump_to(hostile)
        await settle(pilot)
        await pilot.press("y")
        await pilot.pause(0.2)
        assert app.last_copied == "node_b1␛]52;c;ZXZpbA==␇"
        assert app.clipboard == app.last_copied  # what went to the terminal's clipboard
        toasts = [n.message for n in app._notifications]
        assert any("2 control characters shown as symbols: not safe to paste" in t for t in toasts)
