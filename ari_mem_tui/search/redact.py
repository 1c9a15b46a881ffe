"""URLs and secrets as messages may show them: no user:password@, no ?query, no API key.

Shared by every remote a reader talks to (a Letta server, the run's embedding endpoint), so a
key is masked the same way wherever it could surface: an error line, a title, a dossier.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit


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
    or None: checked before anything runs, so the message comes first and alone."""
    try:
        parts = urlsplit(str(url))
        parts.port  # noqa: B018 - parsing the port is what raises for `http://[::1:80`
    except ValueError as exc:
        return f"not a usable URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    return None


def mask_secrets(text: str, *secrets: str | None) -> str:
    """`text` with every secret (API key, URL password) replaced by ***."""
    for secret in secrets:
        if secret and len(secret) >= 3:
            text = text.replace(secret, "***")
    return text


def url_secrets(url: str) -> tuple[str, ...]:
    """The parts of a URL that may be keys: its password and its query values."""
    try:
        parts = urlsplit(str(url))
        password = parts.password
    except ValueError:
        return ()
    values = [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    return tuple(v for v in (password, *values) if v)
