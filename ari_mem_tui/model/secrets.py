"""The credentials the tool was given, and their masking in every message it shows.

A Letta API key, a URL's password, a key in a URL's query, an embedding endpoint's key: each is
registered once (`remember`) where it is read, and every message the CLI prints (render/text.py
`say`) or the TUI shows (its toasts) goes through `mask`, which replaces each secret in every
form a server may echo it: as given, base64-encoded (`Authorization: Basic …` holds
base64("user:password"), at any alignment inside a longer text), percent-encoded (a request
line echoing `?api_key=sk%2F…`) and JSON-escaped. A URL is shown as `safe_url` makes it (no
user info, no query) and checked by `url_problem`, the same way for every remote (a Letta
server, the run's embedding endpoint). Kept here, at the bottom of the layers, so that any
package reading a credential can register it.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET = 3  # shorter "secrets" (a user name "a") would mask ordinary words
MIN_FORM = 4  # a base64 fragment shorter than this matches too much by chance

_secrets: set[str] = set()
_forms: list[str] = []
_lock = threading.Lock()


def base64_forms(secret: str) -> set[str]:
    """The runs of base64 text that encode `secret` wherever it sits in a longer text: at each
    of the three byte alignments, the characters that depend on the secret's bytes alone."""
    data = secret.encode("utf-8", "surrogatepass")
    found: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode().rstrip("=")
        start = -(-8 * shift // 6)  # the first character made only of the secret's bits
        end = (8 * shift + 8 * len(data)) // 6  # past the last such character
        core = encoded[start:end]
        if len(core) >= MIN_FORM:
            found.update({core, core.replace("+", "-").replace("/", "_")})  # and url-safe
    return found


def forms(secret: str) -> set[str]:
    """Every form of `secret` a message may carry (see the module's docstring)."""
    if len(secret) < MIN_SECRET:
        return set()
    out = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    out |= {form.lower() for form in out if "%" in form}  # %2f as some servers echo it
    return out | base64_forms(secret)


def remember(*secrets: str | None) -> None:
    """Register credentials the tool was given: every later `mask` hides them."""
    with _lock:
        for secret in secrets:
            if secret and secret not in _secrets:
                _secrets.add(secret)
                _forms.extend(forms(secret))
        _forms.sort(key=len, reverse=True)  # the longest first: no half-masked longer form


def mask(text: str, extra: Iterable[str | None] = ()) -> str:
    """`text` with every form of every registered secret (and of `extra`) replaced by ***."""
    with _lock:
        known = list(_forms)
    more = [form for secret in extra if secret for form in forms(secret)]
    for form in sorted(more, key=len, reverse=True) + known:
        if form in text:
            text = text.replace(form, MASK)
    return text


# ---------------------------------------------------------------- URLs
def url_secrets(url: str) -> tuple[str, ...]:
    """The parts of a URL that may be keys: its user info (the password, and "user:password"
    as Basic auth encodes it) and its query values, as given and percent-decoded."""
    try:
        parts = urlsplit(str(url))
        password = parts.password
    except ValueError:
        return ()
    found = [password, unquote(password or "")]
    if password and parts.username:
        found.append(f"{unquote(parts.username)}:{unquote(password)}")
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    found += [value for pair in parts.query.split("&") for value in pair.split("=")[1:2]]
    return tuple(dict.fromkeys(v for v in found if v))


def safe_url(url: str) -> str:
    """`url` as messages may show it: without user:password@ and without ?query or #fragment,
    where keys are often passed (`http://admin:KEY@host`, `?api_key=KEY`)."""
    try:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<an unparseable URL>"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def url_problem(url: str) -> str | None:
    """Why `url` cannot be connected to at all ("not a usable URL (…)", "not an http(s) URL"),
    or None: checked before anything runs, so that the message comes first and alone."""
    try:
        parts = urlsplit(str(url))
        parts.port  # noqa: B018 - parsing the port is what raises for `http://[::1:80`
    except ValueError as exc:
        return f"not a usable URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    return None
