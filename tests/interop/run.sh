#!/usr/bin/env bash
# Interop tests against the real Python LangGraph (called by scripts/test after its venv step).
#
#   fork_resume.py: LangGraph resumes from `flashback fork` copy forks exactly as from its own
#   time travel, on SQLite and on PostgreSQL; with --three-table the same on Flashback's
#   three-table store (the fixture converted by `flashback convert --to three-table`, LangGraph
#   storing through `flashback bridge`), on SQLite and on PostgreSQL (the same two databases).
#   delta_test.py: DeltaChannel values rebuilt as `graph.get_state` shows them, at every
#   checkpoint, and forks of DeltaChannel threads that Python resumes, on both backends.
#   encrypted_test.py: databases written with EncryptedSerializer (AES): read as Python reads
#   them with the key, listed without it, forks written encrypted and resumed, on both backends;
#   and sealed with custom CipherProtocols (`kms`; one `des` row among AES ones): the cipher
#   named, every write refused and nothing written (Postgres: databases <db>_kms and <db>_mixed
#   beside the one given, dropped after), the AES rows still forked and resumed.
#   activity_test.py: what each step did (nodes that ran, failures, retries that recovered,
#   interrupts, resumes) as `flashback graph` marks it, against Python's state history; the
#   human tables fit 100 columns, on both backends.
#   store_test.py: LangGraph's memory Store (SqliteStore / PostgresStore) as `flashback store`
#   shows it, items it writes and deletes as Python then sees them, and mixed databases.
#   prune_race_test.py (issue 28): the real LangGraph program resumes old threads, a checkpoint
#   every ~20 ms, while `flashback prune` (retention delete and keep_latest) and `delete-branch`
#   run, 20 runs each: no committed checkpoint lost, no orphan but the documented window, on
#   SQLite and on PostgreSQL (per-run databases <db>_race_<pid>_<random>_<n> made from
#   a template beside the server's URL, dropped at the end).
#   prune_share_test.py (issue 28): the real SqliteSaver (5 s busy timeout) puts beside a
#   large prune (short transactions: no put waits a second) and a VACUUM (previewed, refused
#   while the program has the file open, its failure after a committed prune reported).
#   devserver_test.py (issue 30): the real `langgraph dev` server (langgraph-cli[inmem]) runs the
#   tests/devserver scenario and is stopped with SIGINT; its `.langgraph_api/` pickles read by
#   LangGraph's own InMemorySaver and by `flashback threads/history/state` as the server showed
#   them, and a `flashback fork --set` resumed by the restarted server as its own time travel.
#   The Flashback half skips with one line while `flashback threads DIR` answers that a folder
#   is not a database. One server start and one restart, ~20 s.
#   agentserver_test.py (issue 31): the real `langgraph dev` server, RUNNING, as the location
#   http://127.0.0.1:PORT: threads, history, state, diff, replay, watch, search, export/verify
#   and the Store as langgraph_sdk answers; fork, edit fork and a resumed interrupt through the
#   CLI as the SDK then sees them (and a copy, a busy thread, a thread never run);
#   unreachable / hanging / non-LangGraph servers and a second
#   server with custom auth (no key, wrong key, LANGGRAPH_API_KEY / LANGSMITH_API_KEY) each one
#   line within 15 s, the key never printed. (The reads and checks shared with devserver_test.py
#   are in serverreads.py.) Skips with one line while the CLI takes http:// for a file path.
#   agents.sh (issue 32, its own venv from tests/interop/requirements-agents.txt: langchain 1.5
#   needs a newer langchain-core): agents_test.py writes threads of langchain `create_agent` with
#   middleware (HITL batched and per-call, summarization, call limits, structured output, tool
#   retry, parallel calls), deepagents (todos, files, a `task` sub-agent, a wait inside one),
#   langgraph-supervisor and langgraph-swarm (scripted fake models, agents_fixture.py) and checks
#   every checkpoint and every live state of every namespace against get_state /
#   get_state_history, tokens, names, HITL approvals and resuming with their payload, on
#   SQLite and on the Postgres server found here (a fresh database, dropped at exit).
#   index_test.py (issue 36): `flashback index --create all --yes` on databases the real
#   SqliteSaver / PostgresSaver wrote; their setup() again, writes and reads through a real
#   graph, `threads` and `--where` as before; `--drop all --yes` leaves no flashback_ index and
#   every LangGraph one. conformance.sh sqlite/postgres run once more on an indexed database
#   (FLASHBACK_CONFORMANCE_INDEXED=1, tests/interop/index_seed.py).
#   mcp_test.py (issue 35): `flashback mcp` through the official MCP Python SDK (`mcp`, pinned in
#   tests/fixtures/requirements.txt) over stdio: tools listed, writes absent without the flag,
#   threads/history/state/graph/diff/search equal to `flashback … --json`, bad arguments as tool
#   errors, a fork (dry_run=false) read back by SqliteSaver, a 200 MB value never flooding an
#   answer. tests/js-fixtures/mcp.mjs does the reads and errors with the TypeScript SDK.
#   tests/js-fixtures/interop.mjs (Node, after the Python suites): the real LangGraph.js
#   (SqliteSaver / PostgresSaver, pinned in tests/js-fixtures/package-lock.json) resumes the
#   forks `flashback fork` writes into LangGraph.js databases as it resumes its own updateState
#   and time travel: edit and copy forks, interrupts resumed with Command, messages revived as
#   message instances, the stored rows in JS's format, edits JS cannot read refused. Needs
#   `npm ci --prefix tests/js-fixtures` (scripts/test does it); its Postgres part uses the
#   server found here (fresh databases flashback_jsinterop_<pid>_<random>_<n>, dropped at exit).
#   tests/js-fixtures/edge.mjs (the same way): a string cut inside an emoji (a lone surrogate),
#   a value nested 200 levels and numbers beyond float64, written by the real JS savers, read by
#   `flashback state`, forked, and read back by JS exactly as stored, on both backends.
#
# Environment:
#   FLASHBACK_PYTHON   the Python with tests/fixtures/requirements.txt installed
#                      (default: python3 on PATH)
#   CARGO_TARGET_DIR   where cargo builds (default: what `cargo metadata` says, else target/)
#   FLASHBACK_TEST_PG  a postgres:// URL of a server where the role may create databases
#                      (default postgresql://postgres@127.0.0.1:5432/postgres; `throwaway`
#                      skips straight to a throwaway cluster). Databases
#                      flashback_interop_<pid>_<random>_{a,…,g} are created there and dropped
#                      at exit. As in flashback-testkit: when FLASHBACK_TEST_PG is unset and the
#                      default server does not answer, a throwaway cluster is started with
#                      initdb/pg_ctl if they are installed.
#   node               Node 20+ for tests/js-fixtures/interop.mjs (its packages installed)
#   CI / FLASHBACK_REQUIRE_PG
#                      when CI=true (or FLASHBACK_REQUIRE_PG=1), no PostgreSQL is a failure;
#                      otherwise the Postgres part is skipped with a line saying so.
set -euo pipefail
cd "$(dirname "$0")/../.."

python="${FLASHBACK_PYTHON:-python3}"
export PYTHONHASHSEED=0 # generate.py re-execs the importing process unless this is 0
export PYTHONDONTWRITEBYTECODE=1

is_true() {
    case "${1:-}" in 1 | true | TRUE | True) return 0 ;; *) return 1 ;; esac
}
require_pg() {
    case "${FLASHBACK_REQUIRE_PG:-}" in
    1 | true | TRUE | True) return 0 ;;
    0 | false | FALSE | False) return 1 ;;
    esac
    is_true "${CI:-}"
}

# ---- the CLI ------------------------------------------------------------------------------
# shellcheck source=lib/flashback_bin.sh
. tests/interop/lib/flashback_bin.sh
echo "flashback: $FLASHBACK_BIN"
echo "python: $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"

status=0

# ---- SQLite -------------------------------------------------------------------------------
echo
echo "== fork_resume.py: SQLite"
"$python" tests/interop/fork_resume.py || status=1
echo
echo "== fork_resume.py: three-table SQLite"
"$python" tests/interop/fork_resume.py --three-table || status=1
echo
echo "== delta_test.py: SQLite"
"$python" tests/interop/delta_test.py || status=1
echo
echo "== encrypted_test.py: SQLite"
"$python" tests/interop/encrypted_test.py || status=1
echo
echo "== store_test.py: SQLite"
"$python" tests/interop/store_test.py || status=1
echo
echo "== activity_test.py: SQLite"
"$python" tests/interop/activity_test.py || status=1
echo
echo "== prune_race_test.py: SQLite"
"$python" tests/interop/prune_race_test.py || status=1
echo
echo "== prune_share_test.py: SQLite"
"$python" tests/interop/prune_share_test.py || status=1
echo
echo "== devserver_test.py: langgraph dev's .langgraph_api folder"
"$python" tests/interop/devserver_test.py || status=1
echo
echo "== agentserver_test.py: a running langgraph dev at http://127.0.0.1:PORT"
"$python" tests/interop/agentserver_test.py || status=1
echo
echo "== mcp_test.py: flashback mcp through the official MCP Python SDK (stdio)"
"$python" tests/interop/mcp_test.py || status=1
echo
echo "== index_test.py: Flashback's indexes under the real SqliteSaver"
"$python" tests/interop/index_test.py || status=1

# ---- PostgreSQL ---------------------------------------------------------------------------
echo
echo "== fork_resume.py: PostgreSQL"

# shellcheck source=lib/pg_admin.sh
. tests/interop/lib/pg_admin.sh

# with_db URL NAME: URL with its database replaced by NAME.
with_db() {
    "$python" -c 'import sys; from urllib.parse import urlsplit, urlunsplit
p = urlsplit(sys.argv[1]); print(urlunsplit(p._replace(path="/" + sys.argv[2])))' "$1" "$2"
}

# shellcheck source=../../scripts/lib/pg.sh
. scripts/lib/pg.sh
pg_url=""
db_a=""
db_b=""
db_c=""
db_d=""
db_e=""
db_f=""
db_g=""

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    if [ -n "$pg_url" ] && [ -n "$db_a" ]; then
        pg_admin "$pg_url" "DROP DATABASE IF EXISTS \"$db_a\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"$db_b\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"${db_c:-$db_b}\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"${db_d:-$db_b}\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"${db_e:-$db_b}\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"${db_f:-$db_b}\" WITH (FORCE)" \
            "DROP DATABASE IF EXISTS \"${db_g:-$db_b}\" WITH (FORCE)" >/dev/null 2>&1 ||
            echo "warning: could not drop $db_a / $db_b" >&2
    fi
    pg_throwaway_stop
}
trap cleanup EXIT

# start_cluster: a throwaway cluster (scripts/lib/pg.sh); sets pg_url.
start_cluster() {
    pg_throwaway_start || return 1
    pg_url="$PG_THROWAWAY_URL"
}

pg_reason=""
if [ "${FLASHBACK_TEST_PG:-}" = "throwaway" ]; then
    start_cluster || pg_reason="could not start a throwaway cluster"
elif [ -n "${FLASHBACK_TEST_PG:-}" ]; then
    pg_url="$FLASHBACK_TEST_PG"
    pg_admin "$pg_url" "SELECT 1" 2>/dev/null || { pg_reason="FLASHBACK_TEST_PG does not answer"; pg_url=""; }
else
    pg_url="postgresql://postgres@127.0.0.1:5432/postgres"
    if ! pg_admin "$pg_url" "SELECT 1" 2>/dev/null; then
        pg_url=""
        echo "nothing answers at postgresql://postgres@127.0.0.1:5432/postgres"
        start_cluster || pg_reason="no server at 127.0.0.1:5432 and no throwaway cluster"
    fi
fi

if [ -n "$pg_reason" ] || [ -z "$pg_url" ]; then
    if require_pg; then
        echo "FAIL postgres: ${pg_reason:-no PostgreSQL} (CI=true / FLASHBACK_REQUIRE_PG=1: required)"
        status=1
    else
        echo "skip postgres: ${pg_reason:-no PostgreSQL} (set FLASHBACK_TEST_PG=postgres://... to run it)"
    fi
else
    tag="$$_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
    db_a="flashback_interop_${tag}_a"
    db_b="flashback_interop_${tag}_b"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_a\"" "CREATE DATABASE \"$db_b\""; then
        "$python" tests/interop/fork_resume.py --no-sqlite \
            --pg "$(with_db "$pg_url" "$db_a")" --pg "$(with_db "$pg_url" "$db_b")" || status=1
        echo
        echo "== fork_resume.py: three-table PostgreSQL"
        "$python" tests/interop/fork_resume.py --three-table --no-sqlite \
            --pg "$(with_db "$pg_url" "$db_a")" --pg "$(with_db "$pg_url" "$db_b")" || status=1
    else
        echo "FAIL postgres: could not create the two throwaway databases"
        status=1
    fi
    echo
    echo "== delta_test.py: PostgreSQL"
    db_c="flashback_interop_${tag}_c"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_c\""; then
        "$python" tests/interop/delta_test.py --no-sqlite --pg "$(with_db "$pg_url" "$db_c")" || status=1
    else
        echo "FAIL postgres: could not create a throwaway database for delta_test.py"
        status=1
    fi
    echo
    echo "== store_test.py: PostgreSQL"
    db_d="flashback_interop_${tag}_d"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_d\""; then
        "$python" tests/interop/store_test.py --no-sqlite --pg "$(with_db "$pg_url" "$db_d")" || status=1
    else
        echo "FAIL postgres: could not create a throwaway database for store_test.py"
        status=1
    fi
    echo
    echo "== encrypted_test.py: PostgreSQL"
    db_e="flashback_interop_${tag}_e"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_e\""; then
        "$python" tests/interop/encrypted_test.py --no-sqlite --pg "$(with_db "$pg_url" "$db_e")" || status=1
    else
        echo "FAIL postgres: could not create a throwaway database for encrypted_test.py"
        status=1
    fi
    echo
    echo "== activity_test.py: PostgreSQL"
    db_f="flashback_interop_${tag}_f"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_f\""; then
        "$python" tests/interop/activity_test.py --no-sqlite --pg "$(with_db "$pg_url" "$db_f")" || status=1
    else
        echo "FAIL postgres: could not create a throwaway database for activity_test.py"
        status=1
    fi
    echo
    echo "== index_test.py: Flashback's indexes under the real PostgresSaver"
    db_g="flashback_interop_${tag}_g"
    if pg_admin "$pg_url" "CREATE DATABASE \"$db_g\""; then
        "$python" tests/interop/index_test.py --no-sqlite --pg "$(with_db "$pg_url" "$db_g")" || status=1
    else
        echo "FAIL postgres: could not create a throwaway database for index_test.py"
        status=1
    fi
    echo
    echo "== prune_race_test.py: PostgreSQL"
    "$python" tests/interop/prune_race_test.py --no-sqlite --pg "$pg_url" || status=1
fi

# ---- flashback rerun with the example runner ----------------------------------------------
echo
echo "== rerun_test.py"
"$python" tests/interop/rerun_test.py || status=1

# ---- langgraph-checkpoint-conformance 0.0.2 against the Rust saver -----------------------
echo
echo "== conformance.sh sqlite"
bash tests/interop/conformance.sh sqlite || status=1
echo "== conformance.sh sqlite on a database with Flashback's indexes"
FLASHBACK_CONFORMANCE_INDEXED=1 bash tests/interop/conformance.sh sqlite || status=1
echo "== conformance.sh three-table-sqlite (Flashback's own store, method B)"
bash tests/interop/conformance.sh three-table-sqlite || status=1
echo
echo "== conformance.sh postgres"
if [ -n "$pg_url" ] && [ -z "$pg_reason" ]; then
    FLASHBACK_TEST_PG="$pg_url" bash tests/interop/conformance.sh postgres || status=1
elif require_pg; then
    echo "FAIL conformance postgres: ${pg_reason:-no PostgreSQL}"
    status=1
else
    echo "skip conformance postgres: ${pg_reason:-no PostgreSQL}"
fi
echo "== conformance.sh postgres on a database with Flashback's indexes"
if [ -n "$pg_url" ] && [ -z "$pg_reason" ]; then
    FLASHBACK_CONFORMANCE_INDEXED=1 FLASHBACK_TEST_PG="$pg_url" bash tests/interop/conformance.sh postgres || status=1
elif require_pg; then
    echo "FAIL conformance postgres indexed: ${pg_reason:-no PostgreSQL}"
    status=1
fi
echo "== conformance.sh three-table-postgres (Flashback's own store on Postgres, method B)"
if [ -n "$pg_url" ] && [ -z "$pg_reason" ]; then
    FLASHBACK_TEST_PG="$pg_url" bash tests/interop/conformance.sh three-table-postgres || status=1
elif require_pg; then
    echo "FAIL conformance three-table-postgres: ${pg_reason:-no PostgreSQL}"
    status=1
else
    echo "skip conformance three-table-postgres: ${pg_reason:-no PostgreSQL}"
fi

# ---- today's agents (issue 32), in their own venv -----------------------------------------
echo
echo "== agents.sh: create_agent middleware, deepagents, supervisor, swarm (SQLite and PostgreSQL)"
# The server found above; without one agents.sh skips its Postgres part (or fails it on CI).
FLASHBACK_TEST_PG="${pg_url:-${FLASHBACK_TEST_PG:-}}" bash tests/interop/agents.sh || status=1

# ---- LangGraph.js: forks resumed by the real JS library -------------------------------------
echo
echo "== tests/js-fixtures/interop.mjs: LangGraph.js, SQLite and PostgreSQL"
if ! command -v node >/dev/null 2>&1; then
    echo "FAIL js interop: no node on PATH"
    status=1
elif [ ! -d tests/js-fixtures/node_modules/@langchain/langgraph ]; then
    echo "FAIL js interop: no tests/js-fixtures/node_modules (run: npm ci --prefix tests/js-fixtures)"
    status=1
else
    # The server found above (or the throwaway cluster); without one the script skips or fails
    # its Postgres part itself (CI / FLASHBACK_REQUIRE_PG).
    FLASHBACK_TEST_PG="${pg_url:-${FLASHBACK_TEST_PG:-}}" node tests/js-fixtures/interop.mjs || status=1
    echo
    echo "== tests/js-fixtures/edge.mjs: what JS reads and Rust's types cannot hold"
    FLASHBACK_TEST_PG="${pg_url:-${FLASHBACK_TEST_PG:-}}" node tests/js-fixtures/edge.mjs || status=1
    echo
    echo "== tests/js-fixtures/mcp.mjs: flashback mcp through the MCP TypeScript SDK (stdio)"
    node tests/js-fixtures/mcp.mjs || status=1
fi

echo
if [ "$status" -eq 0 ]; then
    echo "interop: all passed"
else
    echo "interop: FAILED"
fi
exit "$status"
