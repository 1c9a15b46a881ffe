"""The run's own embedding model: which endpoint and model rank as the run's Letta server did.

Letta 0.16.7 embeds every passage and every query through the agent's `embedding_config`; for
the handles ARI uses that is an OpenAI-compatible `POST {endpoint}/embeddings` (read in Letta's
`schemas/providers/*` and `schemas/embedding_config.py`):

| handle | endpoint | model | dim |
|---|---|---|---|
| `letta/letta-free` (ARI's `letta-default`) | https://embeddings.letta.com/ | letta-free | 1536 |
| `openai/<model>` | https://api.openai.com/v1 | <model> | 1536 (3-small, ada-002), 3072 (3-large) |
| `ollama/<model>` | http://localhost:11434/v1 (Ollama's OpenAI-compatible route) | <model> | the model's |

vLLM and TEI servers have no embedding handle of their own in Letta 0.16.7: a run reaches them
as `openai/<model>` with the server's OPENAI_BASE_URL pointing at them, so `--embed-url` names
them here. Nothing here talks to anyone: this module only decides where a ranker WOULD send
texts, so that it can be said before anything is sent. Kept free of heavy imports (the CLI
builds these options at start-up).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ari_mem_tui.model.secrets import remember, safe_url, url_problem, url_secrets

KEY_ENV = "ARI_MEM_TUI_EMBED_API_KEY"  # the endpoint's API key: only ever from here
DEFAULT_DEADLINE = 600.0  # seconds for the whole build (every passage and start-up query)
MAX_EMBEDDING_DIM = 4096  # Letta 0.16.7 pads every vector to this; a longer one fails there

LETTA_FREE = ("https://embeddings.letta.com/", "letta-free", 1536)
OPENAI_URL = "https://api.openai.com/v1"
OPENAI_DIMS = {
    "text-embedding-ada-002": 1536,
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
}
OLLAMA_URL = "http://localhost:11434/v1"


class EmbedSetupError(ValueError):
    """The run's embedding endpoint cannot be named (no handle, no --embed-url): one line."""


@dataclass(frozen=True)
class EmbedOptions:
    """What the user asked of the run's embedding model (flags or the config file)."""

    url: str | None = None  # --embed-url; None: the handle's endpoint
    model: str | None = None  # --embed-model; None: the handle's model
    deadline: float = DEFAULT_DEADLINE  # seconds for every vector the build needs
    checkpoint_hash: str | None = None  # the run's hash, in every footer (default: the path's)


@dataclass(frozen=True)
class AgentEmbedding:
    """A live agent's `embedding_config`: the server's own answer to "which endpoint"."""

    handle: str | None
    endpoint: str | None
    model: str | None
    dim: int | None


@dataclass(frozen=True)
class EndpointPlan:
    """Where the run ranker sends texts, and why there: said on screen before any call."""

    url: str  # as given (may hold credentials: never shown; `shown_url` is)
    model: str
    handle: str | None  # the run's embedding handle (settings.json or the agent), if known
    dim: int | None  # the dimension expected (None: learnt from the first answer)
    how: str  # where url and model came from, in words
    key_set: bool  # whether $KEY_ENV holds a key (the key itself is never kept here)

    @property
    def shown_url(self) -> str:
        return safe_url(self.url)

    @property
    def matches_handle(self) -> bool | None:
        """Whether the model is the handle's (None: the run's handle is unknown)."""
        if not self.handle:
            return None
        return handle_model(self.handle) == self.model

    def describe(self) -> str:
        """`text-embedding-3-small at https://api.openai.com/v1 (handle …; key from $…)`."""
        key = f"key from ${KEY_ENV}" if self.key_set else f"no key (${KEY_ENV} is not set)"
        return f"{self.model} at {self.shown_url} ({self.how}; {key})"


def api_key(env: dict[str, str] | None = None) -> str | None:
    """The endpoint's API key: only ever from $ARI_MEM_TUI_EMBED_API_KEY (never a flag, never
    shown: messages mask it, and no result holds it)."""
    key = (os.environ if env is None else env).get(KEY_ENV) or None
    remember(key)  # masked in every message from now on, in every form
    return key


def canonical_handle(handle: str | None) -> str | None:
    """ARI's `letta-default` is `letta/letta-free` (docs/ari-format.md §3.7)."""
    if not handle:
        return None
    handle = handle.strip()
    return "letta/letta-free" if handle == "letta-default" else handle or None


def handle_model(handle: str) -> str:
    """The model part of `<provider>/<model>` (letta/letta-free's is `letta-free`)."""
    handle = canonical_handle(handle) or ""
    return handle.split("/", 1)[1] if "/" in handle else handle


def handle_defaults(handle: str | None) -> tuple[str | None, str | None, int | None]:
    """(endpoint, model, dim) Letta 0.16.7 uses for this handle; None where it cannot say."""
    handle = canonical_handle(handle)
    if not handle:
        return None, None, None
    provider, _, model = handle.partition("/")
    if not model:
        return None, handle, None
    if handle == "letta/letta-free":
        return LETTA_FREE
    if provider == "openai":
        return OPENAI_URL, model, OPENAI_DIMS.get(model)
    if provider == "ollama":
        return OLLAMA_URL, model, None
    return None, model, None


def check_embed_url(url: str) -> str:
    """`url` if it is an http(s) URL; else the one line that says so (shown without secrets).
    Its user info and query values are registered as secrets first."""
    remember(*url_secrets(url))
    problem = url_problem(url)
    if problem:
        raise EmbedSetupError(f"--embed-url {safe_url(url)} is {problem}")
    return url


def plan_endpoint(
    options: EmbedOptions,
    handle: str | None,
    agent: AgentEmbedding | None = None,
    env: dict[str, str] | None = None,
) -> EndpointPlan:
    """Endpoint and model: the flags, else the live agent's config, else the handle's defaults.

    `handle` is settings.json's `letta_embedding_config`; a live agent's handle wins over it
    (the agent's config is what the server actually used).
    """
    env = os.environ if env is None else env
    handle = canonical_handle((agent.handle if agent else None) or handle)
    url, model, dim, how = _chosen_endpoint(options, handle, agent)
    if not url or not model:
        raise EmbedSetupError(
            "--embedder run: cannot tell the run's embedding endpoint"
            + (f" for handle {handle}" if handle else " (settings.json names no handle)")
            + ": give --embed-url URL and --embed-model NAME"
        )
    check_embed_url(url)
    key_set = bool(_sendable_key(env))
    return EndpointPlan(url=url, model=model, handle=handle, dim=dim, how=how, key_set=key_set)


def _chosen_endpoint(
    options: EmbedOptions, handle: str | None, agent: AgentEmbedding | None
) -> tuple[str | None, str | None, int | None, str]:
    """(endpoint, model, dim) and how they were chosen: the handle's defaults, over them the
    live agent's config, over that the flags (another model's dimension is not known)."""
    url, model, dim = handle_defaults(handle)
    how = f"the run's handle {handle}" if handle else "no handle known"
    if agent is not None and agent.endpoint and agent.model:
        url, model, dim = agent.endpoint, agent.model, agent.dim
        how = f"the agent's embedding_config ({handle or agent.model})"
    if options.model:
        if options.model != model:
            dim = None
        model = options.model
        how = f"--embed-model; {how}"
    if options.url:
        url = options.url
        how = f"--embed-url; {how}"
    return url, model, dim, how


def _sendable_key(env: dict[str, str]) -> str | None:
    """The endpoint's API key (None: none set); an error, before any call, for one an HTTP
    header cannot carry."""
    key = api_key(env)
    if key and not key.isascii():
        raise EmbedSetupError(
            f"the API key in ${KEY_ENV} cannot be sent: it holds characters other than ASCII,"
            " which an HTTP header cannot carry"
        )
    return key
