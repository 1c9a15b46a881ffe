# Shared settings of scripts/letta/*.sh (sourced, not run).
# Everything lives outside the repo; every port is on 127.0.0.1.
ARI_LETTA_HOME="${ARI_LETTA_HOME:-$HOME/.cache/ari-mem-tui-letta}"   # venv + sdist (kept)
# run state (Postgres data, logs, pids): under /tmp because Postgres runs as the `postgres`
# user, which cannot enter root's home
ARI_LETTA_RUN="${ARI_LETTA_RUN:-/tmp/ari-mem-tui-letta-run}"
ARI_LETTA_PORT="${ARI_LETTA_PORT:-58283}"
ARI_LETTA_PG_PORT="${ARI_LETTA_PG_PORT:-58284}"
ARI_LETTA_EMBED_PORT="${ARI_LETTA_EMBED_PORT:-58285}"
LETTA_VENV="$ARI_LETTA_HOME/venv"
LETTA_URL="http://127.0.0.1:$ARI_LETTA_PORT"
PG_BIN="$ARI_LETTA_RUN/pg/pgserver/pginstall/bin"
PG_DATA="$ARI_LETTA_RUN/pgdata"

log() { printf '[letta-server] %s\n' "$*" >&2; }
as_postgres() { runuser -u postgres -- "$@"; }
