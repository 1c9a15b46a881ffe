"""A thin, fail-fast wrapper over `letta_client.Letta` for the calls ARI makes.

Every failure of the server (down, slow, not Letta, key refused, agent missing, embedding
endpoint broken) becomes ONE exception type, `LettaUnavailable`, carrying a one-line message
that names the URL and what was being done, never the API key. The CLI prints it and exits 2;
the TUI catches it and keeps showing what it already has.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

import httpx
import letta_client

from ari_mem_tui.checkpoint.limits import current, hint, mib
from ari_mem_tui.letta.errors import LettaUnavailable
from ari_mem_tui.letta.options import DEFAULT_TIMEOUT
from ari_mem_tui.model.secrets import mask, remember, safe_url, url_secrets

AGENT_ID_RE = re.compile(r"^agent-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ARI_AGENT_PREFIX = "ari_agent_"
CONNECT_TIMEOUT = 3.0
DEFAULT_RETRIES = 1  # the SDK's default of 2 turns one dead-server call into ~48 s
PAGE_SIZE = 200  # ARI: max(letta_overfetch, 200)
MAX_ROWS = 20_000  # ARI's hard cap on a full listing
SERVER_VERSION = "0.16."  # the server generation letta-client 1.12.1 matches

T = TypeVar("T")


__all__ = ["LettaConnection", "LettaUnavailable"]


class LettaConnection:
    """One Letta server: the calls ARI makes, each with a short timeout and at most one retry."""

    def __init__(
        self,
        url: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        real_url = str(url).rstrip("/")
        self.url = safe_url(real_url)  # what messages show: no credentials, no query
        self.timeout = timeout
        remember(api_key, *url_secrets(real_url))  # masked in every message, in every form
        if api_key and not api_key.isascii():  # httpx would fail to encode the header
            raise LettaUnavailable(
                "the API key cannot be sent: it holds characters other than ASCII, which an"
                " HTTP header cannot carry (check --letta-api-key or $LETTA_API_KEY)"
            )
        try:
            httpx.URL(real_url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise LettaUnavailable(
                f"--letta-url {self.url} is not a usable URL ({mask(str(exc))})"
            ) from None
        answer_limit = current().letta_answer_bytes
        self.client = letta_client.Letta(
            base_url=real_url,
            http_client=letta_client.DefaultHttpxClient(
                transport=_CappedTransport(httpx.HTTPTransport(), answer_limit)
            ),
            api_key=api_key or None,
            timeout=httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
            max_retries=max_retries,
            _strict_response_validation=True,
        )
        self.server_version: str | None = None

    # ---- error translation -------------------------------------------------------------

    def call(
        self,
        what: str,
        fn: Callable[[], T],
        not_found: str | None = None,
        server_error: str = "",
    ) -> T:
        """Run one SDK call within one wall-clock deadline (`timeout` is per read in httpx, so
        a server dripping a byte a second would never time out); any failure becomes a one-line
        `LettaUnavailable` in which the API key and URL password read `***`."""
        outcome: dict[str, Any] = {}

        def attempt() -> None:
            try:
                outcome["value"] = self._call(what, fn, not_found, server_error)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=attempt, name=f"letta: {what}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():  # the daemon thread dies with the process; nobody waits for it
            raise LettaUnavailable(
                f"Letta server at {self.url} did not answer within {self.timeout:g} s ({what})"
                + server_error
            )
        if "error" in outcome:
            error = outcome["error"]
            if isinstance(error, LettaUnavailable):
                raise LettaUnavailable(mask(str(error))) from None
            raise error
        return outcome["value"]

    def _call(
        self,
        what: str,
        fn: Callable[[], T],
        not_found: str | None,
        server_error: str,
    ) -> T:
        """Run one SDK call; turn any failure into a one-line `LettaUnavailable`.

        `not_found` replaces the message of a 404; `server_error` is appended to a 5xx one
        and to a timeout (a server whose embedding endpoint is down keeps retrying it).
        """
        try:
            return fn()
        except letta_client.APITimeoutError:
            raise LettaUnavailable(
                f"Letta server at {self.url} did not answer within {self.timeout:g} s ({what})"
                + server_error
            ) from None
        except letta_client.APIConnectionError as exc:
            if isinstance(exc.__cause__, AnswerTooBig):
                raise LettaUnavailable(
                    f"{self.url} sent too much in answer to {what}: {exc.__cause__}"
                ) from None
            raise LettaUnavailable(
                f"cannot reach a Letta server at {self.url} ({what}: {_cause(exc)})"
            ) from None
        except letta_client.APIResponseValidationError:
            raise LettaUnavailable(
                f"{self.url} does not answer like a Letta server (unexpected response to {what});"
                " check --letta-url"
            ) from None
        except (letta_client.AuthenticationError, letta_client.PermissionDeniedError) as exc:
            raise LettaUnavailable(
                f"Letta server at {self.url} refused the API key (HTTP {exc.status_code}, {what});"
                " set --letta-api-key or $LETTA_API_KEY"
            ) from None
        except letta_client.NotFoundError as exc:
            if not_found:
                raise LettaUnavailable(not_found) from None
            raise LettaUnavailable(
                f"Letta server at {self.url}: not found while {what} ({_detail(exc)})"
            ) from None
        except letta_client.InternalServerError as exc:
            raise LettaUnavailable(
                f"Letta server at {self.url} failed while {what} (HTTP {exc.status_code})"
                + server_error
            ) from None
        except letta_client.APIStatusError as exc:
            raise LettaUnavailable(
                f"Letta server at {self.url} rejected {what} (HTTP {exc.status_code}:"
                f" {_detail(exc)})"
            ) from None
        except (ValueError, RecursionError):
            raise LettaUnavailable(
                f"{self.url} does not answer like a Letta server (invalid JSON in answer to"
                f" {what}); check --letta-url"
            ) from None
        except httpx.HTTPError as exc:  # transport trouble the SDK did not wrap
            raise LettaUnavailable(
                f"cannot talk to a Letta server at {self.url} ({what}: {type(exc).__name__})"
            ) from None
        except letta_client.APIError as exc:  # anything else the SDK raises
            raise LettaUnavailable(
                f"Letta server at {self.url}: {what} failed ({type(exc).__name__})"
            ) from None

    # ---- calls ---------------------------------------------------------------------------

    def health(self) -> str:
        """Check that the URL is a Letta server; returns its version."""
        response = self.call(
            "checking /v1/health/",
            self.client.health,
            not_found=f"{self.url} is not a Letta server (no /v1/health/); check --letta-url",
        )
        version = getattr(response, "version", None)
        if not isinstance(version, str) or not version:
            raise LettaUnavailable(f"{self.url} is not a Letta server (odd /v1/health/ answer)")
        self.server_version = version
        return version

    def find_agent(self, ref: str) -> tuple[str, str]:
        """(agent id, agent name) for an agent name or id; lists ARI's agents when missing."""
        if AGENT_ID_RE.match(ref):
            agent = self.call(
                f"reading agent {ref}",
                lambda: self.client.agents.retrieve(ref),
                not_found=self._missing_agent_message(ref),
            )
            return agent.id, agent.name
        found = self.agent_by_name(ref)
        if found is None:
            raise LettaUnavailable(self._missing_agent_message(ref))
        return found

    def agent_by_name(self, name: str) -> tuple[str, str] | None:
        """(agent id, name) of the agent with exactly this name, or None."""
        page = self.call(
            f"looking up agent {name}", lambda: self.client.agents.list(name=name, limit=10)
        )
        # `.items`: iterating the page itself would fetch every following page
        exact = [a for a in page.items if a.name == name]
        return (exact[0].id, exact[0].name) if exact else None

    def ari_agent_names(self) -> list[str]:
        """Names of the `ari_agent_*` agents on the server (at most 100)."""
        page = self.call("listing agents", lambda: self.client.agents.list(limit=100))
        return sorted(a.name for a in page.items if (a.name or "").startswith(ARI_AGENT_PREFIX))

    def _missing_agent_message(self, ref: str) -> str:
        try:
            names = self.ari_agent_names()
        except LettaUnavailable:
            names = []
        there = ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")
        hint = f"ARI agents there: {there}" if names else "no ari_agent_* agents there"
        return (
            f"no agent {ref} on the Letta server at {self.url}; {hint}"
            " (name one with --letta-agent, or give --checkpoint-hash)"
        )

    def iter_passages(
        self,
        agent_id: str,
        page_size: int = PAGE_SIZE,
        max_rows: int = MAX_ROWS,
    ) -> Iterator[Any]:
        """Every passage of the agent, oldest first, paged with `after=` until an empty page."""
        after: str | None = None
        seen = 0
        while seen < max_rows:
            limit = min(page_size, max_rows - seen)
            kwargs: dict[str, Any] = {"limit": limit, "ascending": True}
            if after:
                kwargs["after"] = after
            page = self.call(
                f"listing passages after row {seen}",
                partial(self.client.agents.passages.list, agent_id, **kwargs),
            )
            if not page:
                return
            yield from page
            seen += len(page)
            after = page[-1].id

    def search(
        self, agent_id: str, query: str, top_k: int, before_ts: float | None = None
    ) -> list[Any]:
        """`passages.search` (ARI's route): the top_k passages in rank order (no scores).

        `before_ts`: only passages created before it. ARI's searches ranked what was inserted
        before them, and an entry stamped at the search's own logged moment came after it
        (the read event is stamped once the search returned), while Letta's `end_datetime`
        keeps `created_at <= end_datetime`: one microsecond earlier makes it `<`."""
        kwargs: dict[str, Any] = {"query": query, "top_k": top_k}
        if before_ts is not None:
            try:
                moment = datetime.fromtimestamp(before_ts, tz=UTC)
                kwargs["end_datetime"] = moment - timedelta(microseconds=1)
            except (OverflowError, OSError, ValueError):  # past any calendar: the whole pool
                pass
        response = self.call(
            f"searching top_k={top_k}",
            lambda: self.client.agents.passages.search(agent_id, **kwargs),
            server_error="; its embedding endpoint may be failing",
        )
        return list(response.results)

    def embedding_config(self, agent_id: str) -> dict[str, Any] | None:
        """The agent's `embedding_config` (endpoint, model, dim, handle), or None."""
        agent = self.call(
            f"reading agent {agent_id}", lambda: self.client.agents.retrieve(agent_id)
        )
        config = getattr(agent, "embedding_config", None)
        return config.model_dump() if config is not None else None

    def block(self, agent_id: str, label: str) -> str | None:
        """A core block's value; None when the agent has no block with that label."""
        missing = object()

        def retrieve() -> Any:
            try:
                return self.client.agents.blocks.retrieve(label, agent_id=agent_id)
            except letta_client.NotFoundError:
                return missing

        block = self.call(f"reading core block {label}", retrieve)
        if block is missing:
            return None
        return block.value if isinstance(block.value, str) else ""


class AnswerTooBig(httpx.ReadError):
    """A server's answer past the letta-answer-mib limit (read no further)."""


class _CappedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, limit: int) -> None:
        self.inner, self.limit = inner, limit

    def __iter__(self):
        seen = 0
        for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise AnswerTooBig(
                    f"its answer is over the {mib(self.limit)} limit ({hint('letta-answer-mib')})"
                )
            yield chunk

    def close(self) -> None:
        self.inner.close()


class _CappedTransport(httpx.BaseTransport):
    """Answers are read up to the letta-answer-mib limit (checkpoint/limits.py): a server
    sending a gigabyte must not take a gigabyte of memory before the deadline."""

    def __init__(self, inner: httpx.BaseTransport, limit: int) -> None:
        self.inner, self.limit = inner, limit

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.stream = _CappedStream(response.stream, self.limit)  # type: ignore[arg-type]
        return response

    def close(self) -> None:
        self.inner.close()


def _cause(exc: BaseException) -> str:
    """The root cause of a connection error, short: "connection refused", "name not known"."""
    inner: BaseException | None = exc
    while inner is not None and inner.__cause__ is not None:
        inner = inner.__cause__
    text = str(inner or exc).strip() or type(inner or exc).__name__
    lowered = text.lower()
    if "refused" in lowered:
        return "connection refused"
    if "name or service not known" in lowered or "nodename nor servname" in lowered:
        return "host name not known"
    return text.splitlines()[0][:120]


def _detail(exc: letta_client.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and "detail" in body:
        text = str(body["detail"])
    else:
        text = str(body) if body is not None else exc.message
    text = " ".join(text.split())
    return text[:160] + ("…" if len(text) > 160 else "")
