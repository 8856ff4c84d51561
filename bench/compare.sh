#!/usr/bin/env bash
# Compare loading a long thread's full decoded history: Flashback vs Python's savers, on the
# same SQLite file and the same Postgres database.
#   bench/compare.sh [CHECKPOINTS]     (default 2500)
# Needs the Python venv from tests/fixtures/requirements.txt (created if missing) and Postgres
# (FLASHBACK_BENCH_PG, default postgresql://postgres@127.0.0.1:5432/flashback_bench).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2500}
# shellcheck source=bench/lib.sh
. bench/lib.sh
pg="${FLASHBACK_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/flashback_bench}"
admin="${pg%/*}/postgres"
db="${pg##*/}"
psql "$admin" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null

cargo build --quiet --release -p flashback-bench
bench="${CARGO_TARGET_DIR:-target}/release/flashback-bench"

rm -f "$out/bench.sqlite"
echo "building a $n-checkpoint thread with the Python library…"
"$py" tests/fixtures/bench_long_thread.py --sqlite "$out/bench.sqlite" --pg "$pg" --checkpoints "$n"

ratio() { "$py" -c "import json,sys; p=json.loads(sys.argv[1]); r=json.loads(sys.argv[2]); s=r['seconds'][1]; v=r['seconds_with_json_view'][1]; print(f\"{p['backend']}: python {p['seconds_best_of_5']*1000:.1f} ms (best), flashback {s*1000:.1f} ms ({v*1000:.1f} ms incl. JSON view, medians; peak {r['peak_rss_mb']} MiB) -> {p['seconds_best_of_5']/s:.1f}x faster\")" "$1" "$2"; }
py_sqlite=$("$py" tests/fixtures/bench_long_thread.py --sqlite "$out/bench.sqlite" --time)
rs_sqlite=$("$bench" "$out/bench.sqlite" bench 5)
py_pg=$("$py" tests/fixtures/bench_long_thread.py --pg "$pg" --time)
rs_pg=$("$bench" "$pg" bench 5)
{
    echo "$py_sqlite"; echo "$rs_sqlite"; echo "$py_pg"; echo "$rs_pg"
} >"$out/results.jsonl"
ratio "$py_sqlite" "$rs_sqlite"
ratio "$py_pg" "$rs_pg"
