"""A tiny OpenAI-compatible `/v1/embeddings` server for running Letta offline on 127.0.0.1.

Letta embeds every passage and every search query through an OpenAI-style endpoint; the default
one needs the internet. This one is deterministic and needs nothing: a hashed bag of words
(lower-cased word tokens and their character trigrams, signed feature hashing with real
weights, plus a small dense component seeded by the text, L2-normalised): no two texts tie.
Similar texts get similar vectors, which is all a contract test of ARI's search path needs.

    python embed_server.py --port 58285 [--dim 1536]

Accepts `input` as a string or a list of strings (token-id lists are hashed as words too),
`encoding_format` "float" (default) or "base64" (little-endian float32, what the openai client
asks for), and `dimensions`. Stdlib only: it runs under any Python 3.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import random
import re
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORD_RE = re.compile(r"\w+", re.UNICODE)
MODEL = "ari-hashed-bow-v2"
DENSE = 0.5  # the dense component's share of the norm, before the final normalisation


def features(text: str) -> list[str]:
    words = WORD_RE.findall(text.lower())
    feats = list(words)
    for word in words:
        padded = f"#{word}#"
        feats.extend(padded[i : i + 3] for i in range(len(padded) - 2))
    return feats


def embed(text: str, dim: int) -> list[float]:
    # Every feature gets a real weight and every text a small dense component of its own: with
    # integer counts alone, unrelated texts score exactly 0 against a query, and Postgres orders
    # such ties by where the rows happen to lie, so a restored copy could rank them differently
    # from the run that recorded the search. A real embedder never ties; neither does this one.
    vec = [0.0] * dim
    for feat in features(text):
        digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vec[index] += sign * (0.5 + digest[5] / 255.0)
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    seed = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    noise = random.Random(seed).gauss
    dense = [noise(0.0, 1.0) for _ in range(dim)]
    dense_norm = math.sqrt(sum(v * v for v in dense)) or 1.0
    vec = [v / norm + DENSE * d / dense_norm for v, d in zip(vec, dense, strict=True)]
    total = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / total for v in vec]


def _texts(raw: object) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        if raw and all(isinstance(x, int) for x in raw):  # one pre-tokenised input
            return [" ".join(f"t{x}" for x in raw)]
        return [x if isinstance(x, str) else " ".join(f"t{t}" for t in x) for x in raw]
    raise ValueError("input must be a string or a list")


class Handler(BaseHTTPRequestHandler):
    dim = 1536
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:  # quiet: Letta calls us a lot
        pass

    def _send(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = [MODEL, "text-embedding-3-small"]
            data = [{"id": m, "object": "model", "owned_by": "local"} for m in models]
            self._send(200, {"object": "list", "data": data})
        elif self.path.rstrip("/") in ("/health", ""):
            self._send(200, {"status": "ok"})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            texts = _texts(request.get("input"))
            dim = int(request.get("dimensions") or self.dim)
            fmt = request.get("encoding_format") or "float"
            if fmt not in ("float", "base64"):
                raise ValueError(f"unknown encoding_format {fmt!r}")
        except (ValueError, TypeError) as exc:
            self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
            return
        data = []
        for i, text in enumerate(texts):
            vec = embed(text, dim)
            if fmt == "base64":
                value: object = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode()
            else:
                value = vec
            data.append({"object": "embedding", "index": i, "embedding": value})
        tokens = sum(len(WORD_RE.findall(t)) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.get("model") or MODEL,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dim", type=int, default=1536, help="default vector size")
    args = parser.parse_args(argv)
    Handler.dim = args.dim
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"embed server on http://{args.host}:{args.port}/v1 dim={args.dim}", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
