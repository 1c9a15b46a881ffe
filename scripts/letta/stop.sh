#!/usr/bin/env bash
# Stop what start.sh started, each process by the PID it recorded; Postgres with pg_ctl stop.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
. "$HERE/common.sh"

stop_pid() {  # name pidfile: TERM the process group start.sh made (setsid), then KILL if needed
    local name=$1 file=$2 pid
    [[ -f "$file" ]] || return 0
    pid="$(cat "$file")"
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping $name (pid $pid)"
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
        fi
    fi
    rm -f "$file"
}

stop_pid "letta server" "$ARI_LETTA_RUN/letta.pid"
stop_pid "embedding server" "$ARI_LETTA_RUN/embed.pid"
if [[ -f "$PG_DATA/postmaster.pid" && -x "$PG_BIN/pg_ctl" ]]; then
    log "stopping Postgres"
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -w -m fast stop >/dev/null
fi
exit 0
