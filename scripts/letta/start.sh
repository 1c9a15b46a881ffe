#!/usr/bin/env bash
# Start a real Letta 0.16.7 server offline, everything on 127.0.0.1 (docs/letta.md):
#   Postgres 16 + pgvector (from the pgserver wheel, run as the `postgres` user),
#   a local deterministic /v1/embeddings server (embed_server.py),
#   `letta server`, with HOME/LETTA_DIR in a scratch dir.
# Prints the server URL on stdout when /v1/health/ answers. Stop everything with stop.sh.
# The database starts empty each time (a migrated template is kept to make warm starts fast).
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/common.sh"

"$HERE/install.sh"

if [[ -f "$ARI_LETTA_RUN/letta.pid" ]] && kill -0 "$(cat "$ARI_LETTA_RUN/letta.pid")" 2>/dev/null; then
    log "already running (pid $(cat "$ARI_LETTA_RUN/letta.pid")); stop it with stop.sh first"
    exit 1
fi

id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
mkdir -p "$ARI_LETTA_RUN"
chmod 755 "$ARI_LETTA_RUN"
on_error() { log "start failed; stopping what was started"; "$HERE/stop.sh" || true; }
trap on_error ERR

# --- Postgres --------------------------------------------------------------------------------
site="$LETTA_VENV/lib/python3.11/site-packages"
if [[ ! -x "$PG_BIN/postgres" ]]; then
    log "copying Postgres binaries to $ARI_LETTA_RUN (the postgres user cannot enter $HOME)"
    # same layout as in the wheel: the binaries find their libraries at $ORIGIN/../../../pgserver.libs
    rm -rf "$ARI_LETTA_RUN/pg"
    mkdir -p "$ARI_LETTA_RUN/pg/pgserver"
    cp -a "$site/pgserver/pginstall" "$ARI_LETTA_RUN/pg/pgserver/"
    cp -a "$site/pgserver.libs" "$ARI_LETTA_RUN/pg/"
    chown -R postgres: "$ARI_LETTA_RUN/pg"
fi
template="$ARI_LETTA_RUN/pgdata-template"
stamp="$(cat "$LETTA_VENV/.ari-installed")"
fresh_db=1
rm -rf "$PG_DATA"
if [[ -f "$template/.ari-stamp" && "$(cat "$template/.ari-stamp")" == "$stamp" ]]; then
    cp -a "$template" "$PG_DATA"
    fresh_db=0
else
    rm -rf "$template"
    mkdir -p "$PG_DATA"
    chown postgres: "$PG_DATA"
    as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 \
        --locale=C.UTF-8 >"$ARI_LETTA_RUN/initdb.log" 2>&1
fi
mkdir -p "$ARI_LETTA_RUN/pgrun" && chown postgres: "$ARI_LETTA_RUN/pgrun"
log "starting Postgres on 127.0.0.1:$ARI_LETTA_PG_PORT"
as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$ARI_LETTA_RUN/pgrun/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $ARI_LETTA_PG_PORT -k $ARI_LETTA_RUN/pgrun" start >/dev/null
psql_() { as_postgres "$PG_BIN/psql" -h 127.0.0.1 -p "$ARI_LETTA_PG_PORT" -U postgres -v ON_ERROR_STOP=1 -q "$@"; }
pg_uri="postgresql://letta:letta@127.0.0.1:$ARI_LETTA_PG_PORT/letta"

if [[ $fresh_db == 1 ]]; then
    psql_ -d postgres -c "CREATE ROLE letta LOGIN PASSWORD 'letta'" -c "CREATE DATABASE letta OWNER letta"
    psql_ -d letta -c "CREATE EXTENSION IF NOT EXISTS vector"
    log "running Letta's database migrations (alembic, from the sdist)"
    (cd "$ARI_LETTA_HOME/migrations" && LETTA_PG_URI="$pg_uri" \
        "$LETTA_VENV/bin/alembic" upgrade head >"$ARI_LETTA_RUN/alembic.log" 2>&1)
    # keep a migrated, empty copy: the next start skips initdb and the 167 migrations
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -w -m fast stop >/dev/null
    cp -a "$PG_DATA" "$template"
    echo "$stamp" >"$template/.ari-stamp"
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$ARI_LETTA_RUN/pgrun/postgres.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $ARI_LETTA_PG_PORT -k $ARI_LETTA_RUN/pgrun" start >/dev/null
fi

# --- local embeddings ------------------------------------------------------------------------
log "starting the local embedding server on 127.0.0.1:$ARI_LETTA_EMBED_PORT"
setsid "$LETTA_VENV/bin/python" "$HERE/embed_server.py" --port "$ARI_LETTA_EMBED_PORT" \
    >"$ARI_LETTA_RUN/embed.log" 2>&1 </dev/null &
echo $! >"$ARI_LETTA_RUN/embed.pid"

# --- Letta -----------------------------------------------------------------------------------
scratch="$ARI_LETTA_RUN/home"
mkdir -p "$scratch/.letta"
log "starting letta server on $LETTA_URL"
(
    cd "$scratch"
    export HOME="$scratch" LETTA_DIR="$scratch/.letta" LETTA_PG_URI="$pg_uri"
    export OPENAI_API_KEY="sk-local-embeddings-only" \
        OPENAI_BASE_URL="http://127.0.0.1:$ARI_LETTA_EMBED_PORT/v1"
    export NO_PROXY="127.0.0.1,localhost" no_proxy="127.0.0.1,localhost"
    exec setsid "$LETTA_VENV/bin/letta" server --host 127.0.0.1 --port "$ARI_LETTA_PORT"
) >"$ARI_LETTA_RUN/letta.log" 2>&1 </dev/null &
echo $! >"$ARI_LETTA_RUN/letta.pid"

deadline=$((SECONDS + ${ARI_LETTA_START_TIMEOUT:-180}))
until curl -fsS --max-time 2 "$LETTA_URL/v1/health/" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$ARI_LETTA_RUN/letta.pid")" 2>/dev/null; then
        log "letta server exited; last lines of $ARI_LETTA_RUN/letta.log:"
        tail -n 20 "$ARI_LETTA_RUN/letta.log" >&2
        false
    fi
    if ((SECONDS > deadline)); then
        log "letta server not healthy in time; see $ARI_LETTA_RUN/letta.log"
        false
    fi
    sleep 1
done
trap - ERR
log "healthy: $(curl -fsS "$LETTA_URL/v1/health/")"
echo "$LETTA_URL"
