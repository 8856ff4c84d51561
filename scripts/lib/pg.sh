# Shared by scripts/test, tests/interop/run.sh and .ci/run (source it): finding PostgreSQL's
# initdb/pg_ctl and running a throwaway trust-auth cluster on a free port of 127.0.0.1, like
# flashback-testkit does for the Rust tests.
#
#   pg_bindir            prints the directory holding initdb and pg_ctl (non-zero if none)
#   pg_throwaway_start   starts a cluster; sets PG_THROWAWAY_URL (a superuser URL of its
#                        `postgres` database); non-zero with a reason on stdout if it cannot
#   pg_throwaway_stop    stops it and removes its directory (safe to call when none runs)
#
# As root, the cluster runs as the `postgres` user (initdb refuses root).

PG_THROWAWAY_DIR=""
PG_THROWAWAY_BINDIR=""
PG_THROWAWAY_USER=""
PG_THROWAWAY_URL=""

pg_bindir() {
    local d
    for d in ${FLASHBACK_PG_BINDIR:-} $(printf '%s' "$PATH" | tr ':' ' ') /usr/lib/postgresql/*/bin /usr/local/bin /usr/local/pgsql/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

_pg_as_user() {
    if [ -n "$PG_THROWAWAY_USER" ]; then
        runuser -u "$PG_THROWAWAY_USER" -- "$@"
    else
        "$@"
    fi
}

pg_throwaway_start() {
    PG_THROWAWAY_BINDIR="$(pg_bindir)" || { echo "no initdb/pg_ctl found"; return 1; }
    if [ "$(id -u)" -eq 0 ]; then
        if ! id postgres >/dev/null 2>&1 || ! command -v runuser >/dev/null 2>&1; then
            echo "running as root without a postgres user (or runuser) for initdb"
            return 1
        fi
        PG_THROWAWAY_USER=postgres
    fi
    PG_THROWAWAY_DIR="$(mktemp -d "${TMPDIR:-/tmp}/flashback-pg-XXXXXX")"
    [ -z "$PG_THROWAWAY_USER" ] || chown "$PG_THROWAWAY_USER" "$PG_THROWAWAY_DIR"
    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')" ||
        { echo "cannot pick a free port"; return 1; }
    echo "starting a throwaway cluster ($PG_THROWAWAY_BINDIR) on port $port"
    _pg_as_user "$PG_THROWAWAY_BINDIR/initdb" -D "$PG_THROWAWAY_DIR/data" -A trust -U postgres -E UTF8 --locale=C \
        >"$PG_THROWAWAY_DIR/initdb.log" 2>&1 || { cat "$PG_THROWAWAY_DIR/initdb.log"; return 1; }
    _pg_as_user "$PG_THROWAWAY_BINDIR/pg_ctl" -D "$PG_THROWAWAY_DIR/data" -l "$PG_THROWAWAY_DIR/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_THROWAWAY_DIR -c fsync=off" start >/dev/null ||
        { cat "$PG_THROWAWAY_DIR/server.log"; return 1; }
    PG_THROWAWAY_URL="postgresql://postgres@127.0.0.1:$port/postgres"
}

pg_throwaway_stop() {
    if [ -n "$PG_THROWAWAY_DIR" ]; then
        _pg_as_user "$PG_THROWAWAY_BINDIR/pg_ctl" -D "$PG_THROWAWAY_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$PG_THROWAWAY_DIR"
        PG_THROWAWAY_DIR=""
        PG_THROWAWAY_URL=""
    fi
}
