#!/usr/bin/env bash
# Issue 32: today's agents (langchain create_agent + middleware, deepagents, langgraph-supervisor,
# langgraph-swarm; scripted fake models, no network) as `flashback` shows them, against Python's
# get_state / get_state_history, on SQLite and PostgreSQL (tests/interop/agents_test.py, threads
# from tests/interop/agents_fixture.py).
#
#   tests/interop/agents.sh
#   tests/interop/agents.sh --make-sqlite OUT   only write the threads to a new SQLite file (the
#                                               browser e2e and the README's screenshots use it)
#
# Creates (or updates) a virtualenv from tests/interop/requirements-agents.txt (langchain 1.5
# needs langchain-core >= 1.8, newer than the pin of tests/fixtures/requirements.txt, so it is a
# venv of its own; pip runs only when the requirements or the Python version changed), builds the
# CLI, runs the test on a temporary SQLite file and on a fresh Postgres database (dropped at
# exit), and ends with the line `N passed, M failed`.
#
# Environment:
#   FLASHBACK_AGENTS_VENV       the virtualenv (default $HOME/.cache/flashback/venv-agents)
#   FLASHBACK_BOOTSTRAP_PYTHON  the Python that creates it (default python3; 3.11+)
#   FLASHBACK_TEST_PG           a server where the role may create databases (default
#                               postgresql://postgres@127.0.0.1:5432/postgres); without one the
#                               Postgres part is skipped with a line, or fails when CI=true /
#                               FLASHBACK_REQUIRE_PG=1
#   CARGO_TARGET_DIR            where cargo builds (default: what `cargo metadata` says)
#   FLASHBACK_AGENTS_VERBOSE=1  one line per check
set -euo pipefail
cd "$(dirname "$0")/../.."

export PYTHONDONTWRITEBYTECODE=1

# ---- the virtualenv -----------------------------------------------------------------------
venv="${FLASHBACK_AGENTS_VENV:-${HOME:-/root}/.cache/flashback/venv-agents}"
req="tests/interop/requirements-agents.txt"
bootstrap="${FLASHBACK_BOOTSTRAP_PYTHON:-python3}"
if ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    echo "creating the virtualenv $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$bootstrap" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$({ cat "$req"; "$venv/bin/python" --version; } | sha256sum | cut -d' ' -f1)"
if [ "$want" != "$(cat "$stamp" 2>/dev/null || true)" ]; then
    echo "installing $req into $venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
    echo "$want" >"$stamp"
fi
python="$venv/bin/python"
if [ "${1:-}" = "--make-sqlite" ]; then
    [ -n "${2:-}" ] || { echo "usage: $0 --make-sqlite OUT" >&2; exit 2; }
    exec "$python" tests/interop/agents_fixture.py --sqlite "$2"
fi

# ---- the CLI ------------------------------------------------------------------------------
# shellcheck source=lib/flashback_bin.sh
. tests/interop/lib/flashback_bin.sh

# ---- the Postgres database ----------------------------------------------------------------
# shellcheck source=lib/pg_admin.sh
. tests/interop/lib/pg_admin.sh

admin_url="${FLASHBACK_TEST_PG:-postgresql://postgres@127.0.0.1:5432/postgres}"
pg_db=""
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    if [ -n "$pg_db" ]; then
        pg_admin "$admin_url" "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" >/dev/null 2>&1 ||
            echo "warning: could not drop the database $pg_db" >&2
    fi
}
trap cleanup EXIT

args=()
case "${FLASHBACK_AGENTS_VERBOSE:-}" in 1 | true) args+=(--verbose) ;; esac
status=0
if pg_admin "$admin_url" "SELECT 1" 2>/dev/null; then
    name="flashback_agents_$$_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
    pg_admin "$admin_url" "CREATE DATABASE \"$name\""
    pg_db="$name"
    args+=(--pg "$("$python" -c 'import sys; from urllib.parse import urlsplit, urlunsplit
p = urlsplit(sys.argv[1]); print(urlunsplit(p._replace(path="/" + sys.argv[2])))' "$admin_url" "$pg_db")")
else
    case "${CI:-}${FLASHBACK_REQUIRE_PG:-}" in
    *true* | *1*)
        echo "FAIL postgres: nothing answers at ${admin_url%%@*}@… (CI=true / FLASHBACK_REQUIRE_PG=1: required)"
        status=1
        ;;
    *) echo "skip postgres: nothing answers at ${admin_url%%@*}@… (set FLASHBACK_TEST_PG=postgres://... to run it)" ;;
    esac
fi

echo "agents: flashback $FLASHBACK_BIN, python $("$python" -c 'import sys; print(sys.version.split()[0])')"
"$python" tests/interop/agents_test.py "${args[@]}" || status=1
exit "$status"
