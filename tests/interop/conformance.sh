#!/usr/bin/env bash
# langgraph-checkpoint-conformance 0.0.2 (81 tests, 8 capabilities) against Flashback's Rust
# saver, driven through `flashback bridge` by tests/interop/saver_adapter.py.
#
#   tests/interop/conformance.sh sqlite|postgres|three-table-sqlite|three-table-postgres
#
# three-table-sqlite / three-table-postgres: the same on Flashback's three-table store
# (docs/three-table.md), created by `flashback bridge DB --create --schema three-table`
# (FLASHBACK_BRIDGE_BLOBS=whole for method A; default incremental, method B); the Postgres one
# on a fresh database as the `postgres` target.
#
# Creates (once) a virtualenv from tests/interop/requirements-conformance.txt, builds the CLI,
# runs tests/interop/conformance_test.py on a temporary SQLite file or on a fresh Postgres
# database (dropped at exit), and ends with the line `N passed, M failed`. Exit status 0 only
# when all 81 pass.
#
# Environment:
#   FLASHBACK_CONFORMANCE_VENV  the virtualenv (default $HOME/.cache/flashback/venv-conformance;
#                               recreated when the requirements file changes)
#   FLASHBACK_BOOTSTRAP_PYTHON  the Python that creates it (default python3; 3.10+)
#   FLASHBACK_TEST_PG           postgres mode: a server where the role may create databases
#                               (default postgresql://postgres@127.0.0.1:5432/postgres)
#   CARGO_TARGET_DIR            where cargo builds (default: what `cargo metadata` says)
#   FLASHBACK_CONFORMANCE_VERBOSE=1  one line per test
#   FLASHBACK_CONFORMANCE_INDEXED=1  sqlite/postgres: on a database the real saver set up and
#                               `flashback index --create all --yes` indexed; dropped after, and
#                               none may be left (tests/interop/index_seed.py)
set -euo pipefail
cd "$(dirname "$0")/../.."

backend="${1:-}"
case "$backend" in
sqlite | postgres) ;;
three-table-sqlite | three-table-postgres)
    export FLASHBACK_BRIDGE_ARGS="--schema three-table --blobs ${FLASHBACK_BRIDGE_BLOBS:-incremental}"
    ;;
*)
    echo "usage: $0 sqlite|postgres|three-table-sqlite|three-table-postgres" >&2
    exit 2
    ;;
esac

export PYTHONDONTWRITEBYTECODE=1

# ---- the virtualenv -----------------------------------------------------------------------
venv="${FLASHBACK_CONFORMANCE_VENV:-$HOME/.cache/flashback/venv-conformance}"
req="tests/interop/requirements-conformance.txt"
stamp="$venv/.flashback-requirements"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$stamp"; then
    echo "creating the virtualenv $venv"
    "${FLASHBACK_BOOTSTRAP_PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    cp "$req" "$stamp"
fi
python="$venv/bin/python"

# ---- the CLI ------------------------------------------------------------------------------
# shellcheck source=lib/flashback_bin.sh
. tests/interop/lib/flashback_bin.sh

# ---- the database -------------------------------------------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/flashback-conformance-XXXXXX")"
pg_admin_url=""
pg_db=""

# shellcheck source=lib/pg_admin.sh
. tests/interop/lib/pg_admin.sh

# shellcheck disable=SC2317  # invoked by the EXIT trap and before the summary
cleanup() {
    if [ -n "$pg_db" ]; then
        pg_admin "$pg_admin_url" "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" >/dev/null 2>&1 ||
            echo "warning: could not drop the database $pg_db" >&2
        pg_db=""
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$backend" = sqlite ] || [ "$backend" = three-table-sqlite ]; then
    db="$tmp/conformance.sqlite"
else
    pg_admin_url="${FLASHBACK_TEST_PG:-postgresql://postgres@127.0.0.1:5432/postgres}"
    if ! pg_admin "$pg_admin_url" "SELECT 1" 2>/dev/null; then
        echo "ERROR: PostgreSQL does not answer at ${pg_admin_url%%@*}@… (set FLASHBACK_TEST_PG)" >&2
        echo "0 passed, 81 failed"
        exit 1
    fi
    name="flashback_conformance_$$_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
    pg_admin "$pg_admin_url" "CREATE DATABASE \"$name\""
    pg_db="$name"
    db="$("$python" -c 'import sys; from urllib.parse import urlsplit, urlunsplit
p = urlsplit(sys.argv[1]); print(urlunsplit(p._replace(path="/" + sys.argv[2])))' "$pg_admin_url" "$pg_db")"
fi

# ---- run ----------------------------------------------------------------------------------
echo "conformance: $backend, flashback $FLASHBACK_BIN, python $("$python" -c 'import sys; print(sys.version.split()[0])')"
args=("$db" --summary-file "$tmp/summary")
case "${FLASHBACK_CONFORMANCE_VERBOSE:-}" in 1 | true) args+=(--verbose) ;; esac
status=0
# FLASHBACK_CONFORMANCE_INDEXED=1: on a database set up by the real saver and indexed by
# `flashback index --create all --yes` (tests/interop/index_seed.py), then every index dropped.
indexed="${FLASHBACK_CONFORMANCE_INDEXED:-}"
if [ "$indexed" = 1 ]; then
    case "$backend" in
    sqlite | postgres) "$python" tests/interop/index_seed.py create "$db" || status=1 ;;
    *) echo "FLASHBACK_CONFORMANCE_INDEXED applies to sqlite and postgres" >&2; exit 2 ;;
    esac
fi
"$python" tests/interop/conformance_test.py "${args[@]}" || status=$?
if [ "$indexed" = 1 ]; then
    "$python" tests/interop/index_seed.py drop "$db" || status=1
fi

summary="$(cat "$tmp/summary" 2>/dev/null || echo "0 passed, 81 failed")"
cleanup
trap - EXIT
echo "$summary"
exit "$status"
