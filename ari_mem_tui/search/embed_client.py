"""An OpenAI-compatible embeddings endpoint, asked as Letta 0.16.7 asks it.

Letta's OpenAI client posts `{"model", "input": [texts], "encoding_format": "base64"}` to
`{endpoint}/embeddings` (the openai package asks for base64 unless told otherwise), reads the
vectors in the order of `data`, as little-endian float32, and replaces an empty or blank text by
" " first. This client does the same, in batches, with retries and backoff on 429, 5xx and
connection trouble (Retry-After honoured; tenacity runs the loop), within ONE wall-clock
deadline for everything it is asked. An error that cannot heal (a TLS handshake against a plain
port, a header value HTTP cannot carry, an answer that is not embeddings) fails at once. It
reads at most what the batch can honestly need, decoded size included (a gzip bomb is cut
where its output passes the cap), and takes the vectors only when their `index` fields are
0…n−1 in order. Every failure is one `EndpointFailed` line that names the endpoint without
credentials and never holds the API key (model/secrets.py masks it in every form).
"""

from __future__ import annotations

import base64
import binascii
import email.utils
import json
import ssl
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import numpy as np
from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_exponential

from ari_mem_tui.model.secrets import mask, remember, safe_url, url_secrets
from ari_mem_tui.search.run_model import MAX_EMBEDDING_DIM

BATCH_TEXTS = 64  # texts per request (OpenAI takes 2048; smaller batches retry cheaper)
BATCH_CHARS = 200_000  # characters per request (~50k tokens: far below any endpoint's limit)
MAX_ATTEMPTS = 6  # per batch, the first included
BACKOFF_FIRST = 0.5  # seconds before the second attempt, doubling, at most BACKOFF_MAX
BACKOFF_MAX = 20.0
REQUEST_TIMEOUT = 60.0  # seconds without a byte before one request is given up
CONNECT_TIMEOUT = 5.0
BYTES_PER_VALUE = 32  # a float in JSON with room to spare: bounds what one answer may hold
DETAIL_CHARS = 160


class EndpointFailed(Exception):
    """The endpoint could not give the vectors: `str(exc)` is one line, key masked.

    `kind`: "offline" (unreachable, timed out), "rate-limited", "deadline", "refused" (a 4xx),
    "misconfigured" (TLS against a plain port, a key HTTP cannot carry: never retried),
    "wrong-dimension", "wrong-shape" (an answer that is not embeddings, or not in order),
    "stopped".
    """

    def __init__(self, line: str, kind: str) -> None:
        super().__init__(line)
        self.kind = kind


class _Retry(Exception):
    """One attempt failed in a way worth another (429, 5xx, connection, timeout)."""

    def __init__(self, why: str, kind: str, wait: float | None = None) -> None:
        super().__init__(why)
        self.why, self.kind, self.wait = why, kind, wait


class EmbeddingClient:
    """`embed(texts)` through one endpoint and model; `dim` is learnt from the first answer
    unless given (then any other dimension is an error)."""

    def __init__(
        self,
        url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        batch_texts: int = BATCH_TEXTS,
    ) -> None:
        self.endpoint = embeddings_url(url)
        self.shown = safe_url(self.endpoint)
        self.model = model
        self.dim = dim
        self.requests = 0  # HTTP requests made (tests and progress read it)
        self._sleep, self._clock = sleep, clock
        self._batch_texts = max(1, batch_texts)
        remember(api_key, *url_secrets(url))  # masked in every message, in every form
        if api_key and not api_key.isascii():
            raise EndpointFailed(
                "the API key cannot be sent: it holds characters other than ASCII", "refused"
            )
        if api_key and not api_key.isprintable():  # CR, LF, NUL: no header may hold them
            raise EndpointFailed(
                "the API key cannot be sent: it holds a line break or another control character",
                "misconfigured",
            )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        headers["Accept-Encoding"] = "gzip, deflate"  # what `_read` decodes under its cap
        # no redirects: a 30x must not carry the key elsewhere
        self._http = httpx.Client(headers=headers, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    # ---- the whole job ---------------------------------------------------------------------

    def embed(
        self,
        texts: Sequence[str],
        deadline_at: float,
        progress: Callable[[int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> np.ndarray:
        """Vectors (len(texts) × dim, float32) in the order of `texts`; raises EndpointFailed."""
        out: np.ndarray | None = None
        done = 0
        for batch in batches(texts, self._batch_texts, BATCH_CHARS):
            if stop is not None and stop():
                raise EndpointFailed("stopped before the vectors were ready", "stopped")
            vecs = self._batch(batch, deadline_at, stop)
            if out is None:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[done : done + len(batch)] = vecs
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return out if out is not None else np.zeros((0, self.dim or 0), dtype=np.float32)

    def _batch(
        self, batch: list[str], deadline_at: float, stop: Callable[[], bool] | None
    ) -> np.ndarray:
        """One batch, retried on 429 / 5xx / connection trouble with backoff (doubling from
        BACKOFF_FIRST to BACKOFF_MAX, or the Retry-After asked for), in the deadline: a pause
        that would pass it is not taken, and the failure is said at once."""
        if deadline_at - self._clock() <= 0:
            raise EndpointFailed(
                f"{self.shown} did not answer in time (the deadline passed)", "deadline"
            )
        backoff = wait_exponential(multiplier=BACKOFF_FIRST, max=BACKOFF_MAX)

        def pause(state: RetryCallState) -> float:
            asked = _retry_of(state).wait
            return asked if asked is not None else backoff(state)

        def give_up(state: RetryCallState) -> bool:
            late = self._clock() + state.upcoming_sleep >= deadline_at
            return state.attempt_number >= MAX_ATTEMPTS or late or bool(stop and stop())

        def failed(state: RetryCallState) -> np.ndarray:
            retry = _retry_of(state)
            if state.attempt_number >= MAX_ATTEMPTS:
                line = f"{self.shown} {retry.why}, {MAX_ATTEMPTS} times in a row"
            elif self._clock() + state.upcoming_sleep >= deadline_at:
                after = f" (it asks to wait {retry.wait:g} s)" if retry.wait is not None else ""
                line = f"{self.shown} {retry.why}{after}, and the deadline comes first"
            else:
                raise EndpointFailed("stopped before the vectors were ready", "stopped")
            raise EndpointFailed(line, retry.kind)

        retrying = Retrying(
            retry=retry_if_exception_type(_Retry),
            wait=pause,
            stop=give_up,
            sleep=self._sleep,
            retry_error_callback=failed,
        )
        return retrying(self._post, batch, deadline_at)

    # ---- one request -----------------------------------------------------------------------

    def _post(self, batch: list[str], deadline_at: float) -> np.ndarray:
        sent = [text if text.strip() else " " for text in batch]  # as Letta sends a blank text
        payload = {"model": self.model, "input": sent, "encoding_format": "base64"}
        left = max(0.001, deadline_at - self._clock())
        timeout = httpx.Timeout(min(REQUEST_TIMEOUT, left), connect=min(CONNECT_TIMEOUT, left))
        limit = len(batch) * MAX_EMBEDDING_DIM * BYTES_PER_VALUE + 65_536
        self.requests += 1
        try:
            with self._http.stream("POST", self.endpoint, json=payload, timeout=timeout) as resp:
                body = self._read(resp, limit, deadline_at)
                status, headers = resp.status_code, resp.headers
        except httpx.TimeoutException:
            raise _Retry("did not answer in time", "offline") from None
        except (httpx.LocalProtocolError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise EndpointFailed(  # (cannot heal: the request itself cannot be sent)
                f"{self.shown} cannot be asked ({self._cause(exc)})", "misconfigured"
            ) from None
        except httpx.HTTPError as exc:
            if _caused_by(exc, ssl.SSLError):  # (cannot heal: no TLS there, or a bad certificate)
                raise EndpointFailed(
                    f"{self.shown} failed its TLS handshake ({self._cause(exc)}): is the"
                    " endpoint plain http, or its certificate not trusted?",
                    "misconfigured",
                ) from None
            raise _Retry(f"cannot be reached ({self._cause(exc)})", "offline") from None
        if status == 429:
            raise _Retry("is rate-limiting (HTTP 429)", "rate-limited", retry_after(headers))
        if status >= 500:
            raise _Retry(f"failed (HTTP {status})", "offline", retry_after(headers))
        if status != 200:
            raise EndpointFailed(
                f"{self.shown} refused the request (HTTP {status}: {self._detail(body)})",
                "refused",
            )
        return self._vectors(body, len(batch))

    def _read(self, resp: httpx.Response, limit: int, deadline_at: float) -> bytes:
        """The answer's bytes, decoded (gzip, deflate), at most `limit` of them before and after
        decoding, before the deadline (a server dripping a byte at a time resets httpx's read
        timeout on every byte). The raw bytes are decoded here, each piece only up to what the
        cap still allows: httpx's own decoder inflates a whole piece first (a 1 GiB gzip bomb
        peaked at 187 MB)."""
        decoder = self._decoder(resp.headers.get("content-encoding", ""))
        chunks, raw_size, size = [], 0, 0
        for raw in resp.iter_raw():
            raw_size += len(raw)
            chunk = raw if decoder is None else decoder.decompress(raw, limit + 1 - size)
            size += len(chunk)
            if size > limit or raw_size > limit:
                raise EndpointFailed(
                    f"{self.shown} sent more than {limit:,} bytes in one answer: more than"
                    " any batch of embeddings needs",
                    "wrong-shape",
                )
            if self._clock() > deadline_at:
                raise httpx.ReadTimeout("deadline")
            chunks.append(chunk)
        return b"".join(chunks)

    def _decoder(self, encoding: str) -> Any:
        """A decoder of the answer's Content-Encoding: none for identity, zlib for gzip and
        deflate (zlib-wrapped, as HTTP names it); any other is refused in one line."""
        name = encoding.strip().lower()
        if name in ("", "identity"):
            return None
        if name in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        if name == "deflate":
            return zlib.decompressobj()
        raise EndpointFailed(
            f"{self.shown} answered in an encoding this tool does not read"
            f" ({mask(name)[:40]!r}; it asks for gzip or deflate)",
            "wrong-shape",
        )

    def _vectors(self, body: bytes, count: int) -> np.ndarray:
        """The answer's vectors, checked: `count` of them, in order, one dimension, finite."""
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise self._wrong("something that is not JSON") from None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise self._wrong(f"{got} embeddings for {count} texts")
        rows = [_vector(item) for item in data]
        if any(row is None for row in rows):
            raise self._wrong("an embedding that is neither base64 float32 nor a list of numbers")
        dim = self._dimension({len(row) for row in rows})
        order = [item.get("index") for item in data]
        if any(type(i) is not int for i in order) or order != list(range(count)):
            raise self._wrong(  # (mapped by position they would sit on other texts: never used)
                f"embeddings whose index fields are not 0…{count - 1} in order: a misbehaving"
                " endpoint"
            )
        matrix = np.stack(rows)
        if not np.isfinite(matrix).all():
            raise self._wrong("embeddings with NaN or infinite values")
        self.dim = dim
        return matrix

    def _dimension(self, dims: set[int]) -> int:
        """The answer's one dimension, when it is one, Letta's range and the expected one."""
        if len(dims) != 1:
            raise self._wrong(
                f"embeddings of several dimensions ({sorted(dims)})", "wrong-dimension"
            )
        dim = dims.pop()
        if not 0 < dim <= MAX_EMBEDDING_DIM:
            raise self._wrong(
                f"{dim}-dimensional embeddings (Letta takes 1–4096)", "wrong-dimension"
            )
        if self.dim is not None and dim != self.dim:
            raise self._wrong(f"{dim}-dimensional embeddings, not {self.dim}", "wrong-dimension")
        return dim

    def _wrong(self, what: str, kind: str = "wrong-shape") -> EndpointFailed:
        return EndpointFailed(f"{self.shown} answered {what}", kind)

    def _detail(self, body: bytes) -> str:
        """The server's own reason, short, one line, without the key."""
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            document = body.decode("utf-8", "replace")
        if isinstance(document, dict):
            error = document.get("error", document.get("detail", document))
            document = error.get("message", error) if isinstance(error, dict) else error
        text = " ".join(mask(str(document)).split())
        return text[:DETAIL_CHARS] + ("…" if len(text) > DETAIL_CHARS else "") or "no reason given"

    def _cause(self, exc: Exception) -> str:
        inner: BaseException = exc
        while inner.__cause__ is not None or inner.__context__ is not None:
            inner = inner.__cause__ or inner.__context__  # type: ignore[assignment]
        text = str(inner) or type(inner).__name__
        if "refused" in text.lower():
            return "connection refused"
        return mask(text.splitlines()[0][:120])


def _retry_of(state: RetryCallState) -> _Retry:
    exc = state.outcome.exception() if state.outcome is not None else None
    assert isinstance(exc, _Retry)  # (only a _Retry is retried)
    return exc


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    for _ in range(16):  # (a chain is short; a cycle must not loop)
        if seen is None:
            return False
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _vector(item: object) -> np.ndarray | None:
    """One `data` item's embedding: base64 little-endian float32 (Letta's way) or numbers."""
    value = item.get("embedding") if isinstance(item, dict) else None
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return None
        if not raw or len(raw) % 4:
            return None
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if isinstance(value, list) and value:
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return None
        try:
            return np.asarray(value, dtype=np.float64).astype(np.float32)  # as pgvector stores it
        except OverflowError:  # an integer past a float's range (1e400 written out)
            return None
    return None


def embeddings_url(url: str) -> str:
    """`{url}/embeddings`, the path extended and any ?query kept after it (`…/v1?api-version=…`
    becomes `…/v1/embeddings?api-version=…`, not a query ending in /embeddings)."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return str(url).rstrip("/") + "/embeddings"  # refused by httpx with one line, later
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/embeddings", fragment=""))


def retry_after(headers: httpx.Headers) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), or None."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def batches(texts: Sequence[str], most: int, chars: int) -> list[list[str]]:
    """Consecutive batches of at most `most` texts and (unless one text alone) `chars` chars."""
    out: list[list[str]] = []
    current: list[str] = []
    size = 0
    for text in texts:
        if current and (len(current) >= most or size + len(text) > chars):
            out.append(current)
            current, size = [], 0
        current.append(text)
        size += len(text)
    if current:
        out.append(current)
    return out
