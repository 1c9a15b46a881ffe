#!/usr/bin/env bash
# The live contract suite against a REAL Letta 0.16.7 server, offline, all on 127.0.0.1:
# start the server (start.sh), restore a small demo checkpoint into it, run
# `pytest -m letta_live` (phase "up": the demo's tests, and an ARI-faithful run recorded against
# the server by tests/ari_like, once, then replayed in Letta mode and from its files through the
# embedding server with --embedder run), then stop the embedding server (phase "embed-down")
# and the Letta server (phase "stopped") to check the error messages. Everything started is
# stopped at the end, also on failure. Run from anywhere: bash scripts/letta/live-tests.sh
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
. "$HERE/common.sh"
PY="${PYTHON:-python}"

work="$(mktemp -d "${TMPDIR:-/tmp}/ari-letta-live.XXXXXX")"
cleanup() {
    "$HERE/stop.sh" || true
    rm -rf "$work"
}
trap cleanup EXIT

t0=$SECONDS
url="$("$HERE/start.sh")"
log "server up in $((SECONDS - t0)) s at $url"

cd "$REPO"
ckpt="$work/ckpt"
"$PY" -m ari_mem_tui demo --out "$ckpt" --nodes 12 --entries 120 >&2
t1=$SECONDS
"$PY" -m ari_mem_tui letta-restore "$ckpt" --letta-url "$url"
log "restored in $((SECONDS - t1)) s"

export LETTA_LIVE_URL="$url" LETTA_LIVE_CKPT="$ckpt"
export LETTA_LIVE_EMBED_URL="http://127.0.0.1:$ARI_LETTA_EMBED_PORT/v1"
status=0
LETTA_LIVE_PHASE=up "$PY" -m pytest -q -p no:cacheprovider -m letta_live \
    -k "not embedding_endpoint_down and not stopped_server" \
    tests/test_letta_live.py tests/test_ari_like_live.py || status=$?

log "stopping the embedding server: searches must now fail with one clear line"
kill -TERM "$(cat "$ARI_LETTA_RUN/embed.pid")" && rm -f "$ARI_LETTA_RUN/embed.pid"
LETTA_LIVE_PHASE=embed-down "$PY" -m pytest -q -p no:cacheprovider -m letta_live \
    -k embedding_endpoint_down tests/test_letta_live.py || status=$?

log "stopping the Letta server: the tool must say it cannot reach it"
"$HERE/stop.sh"
LETTA_LIVE_PHASE=stopped "$PY" -m pytest -q -p no:cacheprovider -m letta_live \
    -k stopped_server tests/test_letta_live.py || status=$?

log "live suite done in $((SECONDS - t0)) s (exit $status)"
exit "$status"
