#!/usr/bin/env bash
# Issue 14: a long, growing chat thread (bench/chat_thread.py, written by the real LangGraph
# graph) stored by LangGraph's SqliteSaver / PostgresSaver vs Flashback's three-table store
# (method B, and method A for reference), on SQLite and Postgres, min/median/max over RUNS:
#   * bytes on disk: the SQLite file (with its -wal; no VACUUM), on Postgres the total relation
#     size (heap + TOAST + indexes) of the checkpoint tables;
#   * put throughput (checkpoints/s): the thread written again into a fresh database, oldest
#     first, one `put` + its `put_writes` per checkpoint — Python's savers
#     (bench/three_table.py replay) vs Flashback's savers (`flashback-bench put`: three-table
#     A and B, and LangGraph's schema through Flashback's own LangGraph saver);
#   * full-history read (s): Python's saver.list() on LangGraph's schema, Flashback's
#     list_tuples (`flashback-bench DB chat`) on LangGraph's schema and on the three-table
#     store (the databases written by the last put run).
#   bench/three_table.sh [RUNS] [CHECKPOINTS]     (default 5 and 2000)
# Writes bench/out/three_table/results.jsonl (or in $FLASHBACK_BENCH_DIR) and prints the
# Markdown tables. Needs the Python
# venv (tests/fixtures/requirements.txt) and Postgres (FLASHBACK_BENCH_PG_SERVER, default
# postgresql://postgres@127.0.0.1:5432): it creates and drops databases named flashback_bench_*.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
n=${2:-2000}
# shellcheck source=bench/lib.sh
. bench/lib.sh
server="${FLASHBACK_BENCH_PG_SERVER:-postgresql://postgres@127.0.0.1:5432}"
pg() { echo "$server/$1?sslmode=disable"; }
fresh_pg() {
    psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
}
cargo build --quiet --release -p flashback-bench
bench="${CARGO_TARGET_DIR:-target}/release/flashback-bench"
d="${FLASHBACK_BENCH_DIR:-$out/three_table}"
mkdir -p "$d"
res="$d/results.jsonl"
: >"$res"
record() { # measure label value
    printf '{"measure": "%s", "label": "%s", "value": %s}\n' "$1" "$2" "$3" >>"$res"
}
field() { "$py" -c 'import json,sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }

# The thread, written by the real library (rebuilt when missing or of another length).
lg_sqlite="$d/langgraph.sqlite"
lg_pg=$(pg flashback_bench_langgraph)
have=$(sqlite3 "$lg_sqlite" "SELECT count(*) FROM checkpoints WHERE thread_id = 'chat'" 2>/dev/null || echo 0)
if [ "$have" != "$n" ]; then
    rm -f "$lg_sqlite"
    fresh_pg flashback_bench_langgraph
    "$py" bench/chat_thread.py --checkpoints "$n" --sqlite "$lg_sqlite" --pg "$lg_pg"
fi
"$py" bench/three_table.py size --sqlite "$lg_sqlite" --label "LangGraph SqliteSaver (the graph run)" >>"$res"
"$py" bench/three_table.py size --pg "$lg_pg" --label "LangGraph PostgresSaver (the graph run)" >>"$res"

for run in $(seq "$runs"); do
    echo "run $run/$runs" >&2
    # Python's savers replaying the thread.
    rm -f "$d/py.sqlite" "$d/py.sqlite-wal" "$d/py.sqlite-shm"
    line=$("$py" bench/three_table.py replay "$lg_sqlite" --sqlite "$d/py.sqlite")
    record put "LangGraph SqliteSaver (Python)" "$(field checkpoints_per_second <<<"$line")"
    "$py" bench/three_table.py size --sqlite "$d/py.sqlite" --label "LangGraph SqliteSaver (Python)" >>"$res"
    fresh_pg flashback_bench_py
    line=$("$py" bench/three_table.py replay "$lg_sqlite" --pg "$(pg flashback_bench_py)")
    record put "LangGraph PostgresSaver (Python)" "$(field checkpoints_per_second <<<"$line")"
    "$py" bench/three_table.py size --pg "$(pg flashback_bench_py)" --label "LangGraph PostgresSaver (Python)" >>"$res"
    # Flashback's savers writing the same tuples.
    for schema in three-table-b three-table-a langgraph; do
        case $schema in
            three-table-b) name="three-table method B" ;;
            three-table-a) name="three-table method A" ;;
            langgraph) name="LangGraph schema (Flashback's saver)" ;;
        esac
        f="$d/fb-$schema.sqlite"
        rm -f "$f" "$f-wal" "$f-shm"
        line=$("$bench" put "$lg_sqlite" chat "$f" "$schema")
        record put "$name, SQLite (Flashback)" "$(field checkpoints_per_second <<<"$line")"
        "$py" bench/three_table.py size --sqlite "$f" --label "$name, SQLite (Flashback)" >>"$res"
        db="flashback_bench_fb_${schema//-/_}"
        fresh_pg "$db"
        line=$("$bench" put "$lg_sqlite" chat "$(pg "$db")" "$schema")
        record put "$name, Postgres (Flashback)" "$(field checkpoints_per_second <<<"$line")"
        "$py" bench/three_table.py size --pg "$(pg "$db")" --label "$name, Postgres (Flashback)" >>"$res"
    done
done

# Full-history reads: each tool runs RUNS times after a warm-up and reports min/median/max.
read_line() { # label, then the command printing {"seconds": [min, median, max]}
    local label=$1
    shift
    "$@" | "$py" -c 'import json,sys
r = json.loads(sys.stdin.readline())
print(json.dumps({"measure": "read", "label": sys.argv[1], "spread": r["seconds"], "runs": r["runs"]}))' "$label" >>"$res"
}
read_line "Python SqliteSaver.list, LangGraph schema" "$py" bench/chat_thread.py --sqlite "$lg_sqlite" --time --runs "$runs"
read_line "Python PostgresSaver.list, LangGraph schema" "$py" bench/chat_thread.py --pg "$lg_pg" --time --runs "$runs"
"$bench" "$lg_sqlite" chat 1 >/dev/null # warm-up (file cache)
read_line "Flashback, LangGraph schema, SQLite" "$bench" "$lg_sqlite" chat "$runs"
read_line "Flashback, LangGraph schema, Postgres" "$bench" "$lg_pg" chat "$runs"
for schema in three-table-b three-table-a; do
    name="three-table method $(tr a-z A-Z <<<"${schema: -1}")"
    "$bench" "$d/fb-$schema.sqlite" chat 1 >/dev/null
    read_line "Flashback, $name, SQLite" "$bench" "$d/fb-$schema.sqlite" chat "$runs"
    read_line "Flashback, $name, Postgres" "$bench" "$(pg "flashback_bench_fb_${schema//-/_}")" chat "$runs"
done
"$py" bench/three_table.py table "$res" | tee "$d/results.md"
