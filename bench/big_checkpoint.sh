#!/usr/bin/env bash
# Issue 36 item 4: one enormous checkpoint. Thread `big` (a head checkpoint of ~80 MB: 3,000
# messages, 125 base64 images of 0.3–1 MB) and `big-10k` (a 10,000-message `messages`
# channel), written by the real LangGraph (bench/big_checkpoint.py) into SQLite and Postgres.
# For each: opening the thread in the app (`flashback serve` + headless Chromium,
# bench/thread_open.mjs, until the head's detail and its paged message list are shown),
# `flashback state DB THREAD --json` (the whole checkpoint, as before) and
# `state --path messages --limit 100 --json` (a page), with their peak RSS, beside Python's
# `graph.get_state(config)`. Min/median/max over RUNS.
#   bench/big_checkpoint.sh [RUNS]      (default 5)
# Data: bench/out/big.sqlite and the Postgres database flashback_big ($FLASHBACK_BENCH_BIG_DB)
# on $FLASHBACK_BENCH_PG_BASE (default postgresql://postgres@127.0.0.1:5432), written on first
# use (~30 s). Results: bench/out/big_checkpoint.jsonl; the Markdown table printed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
# shellcheck source=bench/lib.sh
. bench/lib.sh
pg_base="${FLASHBACK_BENCH_PG_BASE:-postgresql://postgres@127.0.0.1:5432}"
bin="${FLASHBACK_BIN:-${CARGO_TARGET_DIR:-target}/release/flashback}"
if [ ! -x "$bin" ]; then
    [ -d ui/dist ] || npm --prefix ui run build
    cargo build --release -p flashback-cli
fi
sqlite_db="$out/big.sqlite"
pg_name="${FLASHBACK_BENCH_BIG_DB:-flashback_big}"
pg_db="$pg_base/$pg_name?sslmode=disable"
if [ ! -s "$sqlite_db" ] || ! psql "$pg_db" -tAc "SELECT 1 FROM checkpoints WHERE thread_id = 'big-10k' LIMIT 1" 2>/dev/null | grep -q 1; then
    echo "writing the enormous checkpoints with the Python library…"
    psql "$pg_base/postgres" -qc "DROP DATABASE IF EXISTS flashback_big" -c "CREATE DATABASE flashback_big" >/dev/null
    rm -f "$sqlite_db"
    "$py" bench/big_checkpoint.py --sqlite "$sqlite_db" --pg "$pg_db"
fi
results="$out/big_checkpoint.jsonl"
: >"$results"
record() { # BACKEND THREAD WHAT JSON
    "$py" -c 'import json, sys; r = json.loads(sys.argv[4]); r.update(backend=sys.argv[1], thread=sys.argv[2], what=sys.argv[3]); print(json.dumps(r))' "$@" | tee -a "$results"
}
for target in "sqlite $sqlite_db" "postgres $pg_db"; do
    read -r backend location <<<"$target"
    "$py" bench/big_checkpoint.py "--${backend/postgres/pg}" "$location" --time --runs "$runs" | while read -r line; do
        thread=$(echo "$line" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["thread"])')
        record "$backend" "$thread" "python get_state" "$line"
    done
    for thread in big big-10k; do
        json=$(node bench/thread_open.mjs --bin "$bin" --db "$location" --thread "$thread" --runs "$runs" --steps 0 --wait paged-list) || true
        record "$backend" "$thread" "app: open" "$(echo "${json:-{\}}" | "$py" -c 'import json, sys; r = json.load(sys.stdin); o = r.get("open", {}); print(json.dumps({"seconds": [o.get("min"), o.get("median"), o.get("max")], "error": r.get("error")}))')"
        record "$backend" "$thread" "state --json" "$("$py" bench/rss_time.py "$runs" -- "$bin" state "$location" "$thread" --json)"
        record "$backend" "$thread" "state --path messages --limit 100 --json" \
            "$("$py" bench/rss_time.py "$runs" -- "$bin" state "$location" "$thread" --path messages --limit 100 --json)"
        record "$backend" "$thread" "state --path messages --find 2999: --json" \
            "$("$py" bench/rss_time.py "$runs" -- "$bin" state "$location" "$thread" --path messages --limit 100 --find "2999:" --json)"
    done
done
echo
"$py" - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
fmt = lambda xs: " / ".join("–" if x is None else f"{x:.2f}" for x in xs) if xs else "–"
print("| backend | thread | what | seconds min / median / max | peak RSS MB (median) |")
print("|---|---|---|---|---|")
for r in rows:
    rss = r.get("rss_mb")
    print(f"| {r['backend']} | {r['thread']} | {r['what']} | {fmt(r.get('seconds'))} | {'' if not rss else f'{rss[1]:.0f}'} |")
PY
