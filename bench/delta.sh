#!/usr/bin/env bash
# DeltaChannel history: Flashback's rebuilt values vs Python's get_state_history, on the same
# SQLite file and Postgres database (a chat thread written by the real library).
#   bench/delta.sh [CHECKPOINTS] [PYTHON_RUNS]     (default 2000 and 1: Python's rebuild is
#                                                   quadratic, about 3 minutes a run at 2000)
# Needs the venv of tests/fixtures/requirements.txt (created if missing) and Postgres
# (FLASHBACK_BENCH_PG, default postgresql://postgres@127.0.0.1:5432/flashback_bench_delta).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
py_runs=${2:-1}
# shellcheck source=bench/lib.sh
. bench/lib.sh
pg="${FLASHBACK_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/flashback_bench_delta}"
admin="${pg%/*}/postgres"
db="${pg##*/}"
psql "$admin" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null

cargo build --quiet --release -p flashback-bench
bench="${CARGO_TARGET_DIR:-target}/release/flashback-bench"

rm -f "$out/delta.sqlite"
echo "building a $n-checkpoint DeltaChannel chat thread with the Python library…"
"$py" bench/delta_thread.py --sqlite "$out/delta.sqlite" --checkpoints "$n"
"$py" bench/delta_thread.py --pg "$pg" --checkpoints "$n"

show() {
    "$py" -c '
import json, sys
p, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ms = lambda xs: "/".join(f"{x*1000:.0f}" for x in xs)
print(f"{p[\"backend\"]}: {r[\"checkpoints\"]} checkpoints; python get_state_history {ms(p[\"seconds\"])} ms, "
      f"flashback {ms(r[\"seconds\"])} ms ({ms(r[\"seconds_with_json_view\"])} ms with the JSON view) "
      f"-> {p[\"seconds\"][1]/r[\"seconds\"][1]:.0f}x (medians); one step {ms(r[\"step_seconds\"])} ms "
      "(min/median/max)")' "$1" "$2"
}
py_sqlite=$("$py" bench/delta_thread.py --sqlite "$out/delta.sqlite" --time --runs "$py_runs")
rs_sqlite=$("$bench" delta "$out/delta.sqlite" delta 5)
py_pg=$("$py" bench/delta_thread.py --pg "$pg" --time --runs "$py_runs")
rs_pg=$("$bench" delta "$pg" delta 5)
printf '%s\n' "$py_sqlite" "$rs_sqlite" "$py_pg" "$rs_pg" >"$out/delta.jsonl"
show "$py_sqlite" "$rs_sqlite"
show "$py_pg" "$rs_pg"
