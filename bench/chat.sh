#!/usr/bin/env bash
# Issue 12's growing chat thread (2,800 checkpoints, ~800 MB in SQLite): Python's saver.list()
# vs Flashback's full decoded history, alone and streamed to the JSON view, on SQLite and
# Postgres, min/median/max over RUNS.
#   bench/chat.sh [RUNS]      (default 5; builds the databases first if bench/out/chat.sqlite
#                              is missing, which takes ~15 minutes)
# Needs the Python venv from tests/fixtures/requirements.txt and Postgres
# (FLASHBACK_BENCH_PG, default postgresql://postgres@127.0.0.1:5432/flashback_chat?sslmode=disable).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
# shellcheck source=bench/lib.sh
. bench/lib.sh
pg="${FLASHBACK_BENCH_PG:-postgresql://postgres@127.0.0.1:5432/flashback_chat?sslmode=disable}"
cargo build --quiet --release -p flashback-bench
bench="${CARGO_TARGET_DIR:-target}/release/flashback-bench"
if [ ! -f "$out/chat.sqlite" ]; then
    base="${pg%%\?*}"
    psql "${base%/*}/postgres" -qc "DROP DATABASE IF EXISTS ${base##*/}" -c "CREATE DATABASE ${base##*/}" >/dev/null
    "$py" bench/chat_thread.py --sqlite "$out/chat.sqlite" --pg "$pg"
fi
{
    "$py" bench/chat_thread.py --sqlite "$out/chat.sqlite" --time --runs "$runs"
    "$bench" "$out/chat.sqlite" chat "$runs"
    "$py" bench/chat_thread.py --pg "$pg" --time --runs "$runs"
    "$bench" "$pg" chat "$runs"
} | tee "$out/chat.jsonl"
