#!/usr/bin/env bash
# LangGraph.js databases: loading a long thread's full decoded history with Flashback vs the JS
# savers' own `list()`, on the same SQLite file and the same Postgres database.
#   bench/js.sh [CHECKPOINTS] [RUNS]     (defaults 2500, 5)
# The thread is written by the real LangGraph.js (tests/js-fixtures/bench.mjs: a window of 20
# messages with tool calls, lc envelopes, plus a counter). Needs `npm ci --prefix
# tests/js-fixtures` and Postgres (FLASHBACK_BENCH_PG, default
# postgresql://postgres@127.0.0.1:5432/flashback_bench_js).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2500}
runs=${2:-5}
out=bench/out
mkdir -p "$out"
pg="${FLASHBACK_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/flashback_bench_js}"
admin="${pg%/*}/postgres"
db="${pg##*/}"
psql "$admin" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
[ -d tests/js-fixtures/node_modules/@langchain/langgraph ] || npm ci --prefix tests/js-fixtures --no-audit --no-fund --loglevel=error

cargo build --quiet --release -p flashback-bench
bench="${CARGO_TARGET_DIR:-target}/release/flashback-bench"

rm -f "$out/js.sqlite"
echo "building a $n-checkpoint thread with LangGraph.js…"
node tests/js-fixtures/bench.mjs build --sqlite "$out/js.sqlite" --checkpoints "$n"
node tests/js-fixtures/bench.mjs build --pg "$pg" --checkpoints "$n"

show() {
    python3 - "$1" "$2" <<'PY'
import json, sys
js, rs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ms = lambda xs: " / ".join(f"{x * 1000:.1f}" for x in xs)
ratio = js["seconds"][1] / rs["seconds"][1]
print(f"{js['backend']}, {js['checkpoints']} checkpoints: LangGraph.js list() {ms(js['seconds'])} ms; "
      f"flashback {ms(rs['seconds'])} ms ({ms(rs['seconds_with_json_view'])} ms incl. the JSON view; "
      f"peak {rs['peak_rss_mb']} MiB) -> {ratio:.1f}x (medians)")
PY
}
js_sqlite=$(node tests/js-fixtures/bench.mjs time --sqlite "$out/js.sqlite" --runs "$runs")
rs_sqlite=$("$bench" "$out/js.sqlite" bench "$runs")
js_pg=$(node tests/js-fixtures/bench.mjs time --pg "$pg" --runs "$runs")
rs_pg=$("$bench" "$pg" bench "$runs")
printf '%s\n' "$js_sqlite" "$rs_sqlite" "$js_pg" "$rs_pg" >"$out/js-results.jsonl"
echo "min / median / max:"
show "$js_sqlite" "$rs_sqlite"
show "$js_pg" "$rs_pg"
