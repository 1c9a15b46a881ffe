"""The one error a Letta server problem becomes (kept free of heavy imports for the CLI)."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from ari_mem_tui.model.secrets import mask


class LettaUnavailable(RuntimeError):
    """The Letta server could not give what was asked; `str(exc)` is one line for the user.

    Raised for: server unreachable or too slow, a URL that is not a Letta server, an API key
    refused, an agent not found, and a search the server failed (its embedding endpoint).
    The CLI prints it and exits 2; the TUI catches it and keeps what it already shows.
    """


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


def check_url(url: str) -> str:
    """`url` if it can be connected to at all; else the one-line error, before anything runs."""
    try:
        parts = urlsplit(str(url))
        parts.port  # noqa: B018 - parsing the port is what raises for `http://[::1:80`
    except ValueError as exc:
        raise LettaUnavailable(f"--letta-url {safe_url(url)} is not a usable URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LettaUnavailable(f"--letta-url {safe_url(url)} is not an http(s) URL")
    return url


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


def mask_secrets(text: str, *secrets: str | None) -> str:
    """`text` with every form (model/secrets.py: raw, base64, percent-encoded) of every secret
    the tool was given, and of `secrets`, replaced by ***."""
    return mask(text, secrets)
