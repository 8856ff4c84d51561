#!/usr/bin/env bash
# The app on a long thread (issue 12): opening a 10,000-checkpoint thread from the thread list
# and stepping back through it, on SQLite and Postgres, in `flashback serve` and headless
# Chromium (bench/thread_open.mjs), min/median/max over RUNS (each a fresh server and browser
# context; every step of every run counts as one step figure).
#   bench/app.sh [RUNS] [CHECKPOINTS]      (defaults 5 and 10000)
# The thread is written by the real library (tests/fixtures/bench_long_thread.py) on first use:
# bench/out/long_N.sqlite and the Postgres database flashback_long_N on
# $FLASHBACK_BENCH_PG_BASE (default postgresql://postgres@127.0.0.1:5432), about 5 minutes.
# Results: appended to bench/out/app.jsonl (or $FLASHBACK_BENCH_RESULTS); the table printed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
n=${2:-10000}
# shellcheck source=bench/lib.sh
. bench/lib.sh
results=${FLASHBACK_BENCH_RESULTS:-$out/app.jsonl}
pg_base="${FLASHBACK_BENCH_PG_BASE:-postgresql://postgres@127.0.0.1:5432}"
bin="${FLASHBACK_BIN:-${CARGO_TARGET_DIR:-target}/release/flashback}"
if [ ! -x "$bin" ]; then
    [ -d ui/dist ] || npm --prefix ui run build
    cargo build --release -p flashback-cli
fi
sqlite_db="$out/long_$n.sqlite"
pg_db="$pg_base/flashback_long_$n"

# count LOCATION: the thread's checkpoints there (0 when missing)
count() {
    case "$1" in
        postgres*) psql "$1" -tAc "SELECT count(*) FROM checkpoints WHERE thread_id = 'bench'" 2>/dev/null || echo 0 ;;
        *) [ -f "$1" ] && "$py" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", ("bench",)).fetchone()[0])' "$1" || echo 0 ;;
    esac
}
if [ "$(count "$sqlite_db")" != "$n" ] || [ "$(count "$pg_db")" != "$n" ]; then
    echo "writing a $n-checkpoint thread with the Python library…"
    psql "$pg_base/postgres" -qc "DROP DATABASE IF EXISTS flashback_long_$n" -c "CREATE DATABASE flashback_long_$n" >/dev/null
    rm -f "$sqlite_db"
    "$py" tests/fixtures/bench_long_thread.py --sqlite "$sqlite_db" --pg "$pg_db" --checkpoints "$n" >/dev/null
fi

label="1 thread × $n"
for target in "sqlite $sqlite_db" "postgres $pg_db?sslmode=disable"; do
    read -r backend location <<<"$target"
    echo "== $label $backend: $location"
    json=$(node bench/thread_open.mjs --bin "$bin" --db "$location" --thread bench --runs "$runs") || true
    if [ -z "$json" ]; then json='{"error": "thread_open.mjs printed nothing"}'; fi
    for part in "open open the thread" "step step to the previous checkpoint"; do
        read -r key what <<<"$part"
        echo "$json" | "$py" bench/scale_time.py record --out "$results" --db "$label" --backend "$backend" \
            --tool app --what "$what" --part "$key"
    done
done
echo
"$py" bench/scale_time.py table "$results"
