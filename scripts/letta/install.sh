#!/usr/bin/env bash
# Install the real Letta 0.16.7 server into its own venv outside the repo (idempotent: a venv
# whose stamp matches constraints.txt is reused). Cold: ~2 min and ~1.2 GB.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/common.sh"

stamp="$LETTA_VENV/.ari-installed"
want="$(sha1sum "$HERE/constraints.txt" | cut -c1-40)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -d "$ARI_LETTA_HOME/migrations/alembic" ]]; then
    log "venv ready: $LETTA_VENV"
    exit 0
fi

mkdir -p "$ARI_LETTA_HOME"
PY="${ARI_LETTA_PYTHON:-python3.11}"
command -v "$PY" >/dev/null || PY=python3
log "creating venv $LETTA_VENV with $PY"
"$PY" -m venv --clear "$LETTA_VENV"
# pip 23.x's resolver crashes on letta's dependency tree: upgrade it first
"$LETTA_VENV/bin/python" -m pip install -q --upgrade pip
log "installing letta[server,postgres]==0.16.7 (pinned by constraints.txt)"
"$LETTA_VENV/bin/python" -m pip install -q -c "$HERE/constraints.txt" \
    'letta[server,postgres]==0.16.7' 'pgserver==0.1.4'

# the wheel ships no database migrations: take alembic/ from the sdist
log "fetching the letta 0.16.7 sdist for its alembic migrations"
sdist="$ARI_LETTA_HOME/sdist"
rm -rf "$sdist" "$ARI_LETTA_HOME/migrations"
mkdir -p "$sdist" "$ARI_LETTA_HOME/migrations"
"$LETTA_VENV/bin/python" -m pip download -q --no-deps --no-binary :all: letta==0.16.7 -d "$sdist"
tar -xzf "$sdist"/letta-0.16.7.tar.gz -C "$sdist"
cp -r "$sdist"/letta-0.16.7/alembic "$sdist"/letta-0.16.7/alembic.ini "$ARI_LETTA_HOME/migrations/"
echo "$want" > "$stamp"
log "installed"
