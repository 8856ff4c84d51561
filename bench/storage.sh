#!/usr/bin/env bash
# Issue 15 item 4: the storage report at scale. Generates (once) a LangGraph SQLite file of GB
# gigabytes — many chat threads of 20–300 checkpoints, the whole message list at every
# checkpoint, tool calls, base64 PNG images, a system prompt shared by all threads
# (`flashback-bench storage-db`, through Flashback's byte-compatible LangGraph saver) — then times,
# RUNS times each, with wall time and peak RSS (/usr/bin/time):
#   * the whole-database report: `flashback storage DB --json > /dev/null`;
#   * the one-thread report of the largest thread: `flashback storage DB THREAD --json`;
#   * Python's baseline for that thread (bench/storage_py.py: what a one-off script does,
#     `SqliteSaver.list()` summing `len(serde.dumps_typed(v)[1])` per channel), and for the
#     whole database once when its estimate (from the thread's rate) is under 10 minutes.
#   bench/storage.sh [GB] [RUNS]      (default 10 and 3)
# The file lives in $FLASHBACK_BENCH_DIR (default ~/.cache/flashback/bench) and is reused while
# GB and the generator's sources are unchanged. Nothing is dropped from the page cache: an
# untimed warm-up report runs first, so every figure is a warm-cache one (the machine needs RAM
# for the file). Writes bench/out/storage/results.jsonl and prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
gb=${1:-10}
runs=${2:-3}
# shellcheck source=bench/lib.sh
. bench/lib.sh
cargo build --quiet --release -p flashback-cli -p flashback-bench
rel="${CARGO_TARGET_DIR:-target}/release"
fb="$rel/flashback"
bench="$rel/flashback-bench"
dir="${FLASHBACK_BENCH_DIR:-$HOME/.cache/flashback/bench}"
mkdir -p "$dir" "$out/storage"
db="$dir/storage-${gb}gb.sqlite"
stamp="gb=$gb generator=$(cat crates/flashback-bench/src/chat.rs crates/flashback-bench/src/storage_db.rs | sha256sum | cut -c1-16)"
if [ ! -f "$db.json" ] || [ "$(cat "$db.params" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$db" "$db-wal" "$db-shm" "$db.json" "$db.params"
    "$bench" storage-db "$db" "$gb" >"$db.json.tmp"
    mv "$db.json.tmp" "$db.json"
    echo "$stamp" >"$db.params"
fi
res="$out/storage/results.jsonl"
: >"$res"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timed() { # label command… : appends {"label", "seconds", "rss_kib"} to $res
    local label=$1
    shift
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >/dev/null
    read -r s kib <"$tmp/time"
    printf '{"label": "%s", "seconds": %s, "rss_kib": %s}\n' "$label" "$s" "$kib" >>"$res"
    echo "  $label: $s s, $((kib / 1024)) MB" >&2
}
json() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# Warm-up (untimed): fills the page cache, and names the largest thread.
"$fb" storage "$db" --json >"$tmp/report.json"
thread=$(json "$tmp/report.json" 'd["by_thread"][0]["key"]')
threads=$(json "$tmp/report.json" 'd["thread_count"]')
checkpoints=$(json "$tmp/report.json" 'd["totals"]["checkpoints"]["count"]')
writes=$(json "$tmp/report.json" 'd["totals"]["writes"]["count"]')
total=$(json "$tmp/report.json" 'd["totals"]["total_bytes"]')
"$fb" storage "$db" "$thread" --json >"$tmp/thread.json"
t_checkpoints=$(json "$tmp/thread.json" 'd["totals"]["checkpoints"]["count"]')
t_total=$(json "$tmp/thread.json" 'd["totals"]["total_bytes"]')
size=$(stat -c %s "$db")
echo "file $db: $size bytes ($((size / 1000000)) MB), $threads threads, $checkpoints checkpoints, $writes writes" >&2
echo "largest thread $thread: $t_checkpoints checkpoints, $((t_total / 1000000)) MB" >&2

for run in $(seq "$runs"); do
    echo "run $run/$runs" >&2
    timed "whole database" "$fb" storage "$db" --json
    timed "one thread" "$fb" storage "$db" "$thread" --json
    timed "one thread, Python" "$py" bench/storage_py.py "$db" "$thread"
done

# Python over the whole database, once, if the thread's rate says it takes under 10 minutes.
py_thread=$("$py" -c 'import json,statistics,sys
print(statistics.median(json.loads(l)["seconds"] for l in open(sys.argv[1]) if "Python" in l))' "$res")
estimate=$("$py" -c "print(round($py_thread * $total / $t_total))")
if [ "$estimate" -le 600 ]; then
    timed "whole database, Python" "$py" bench/storage_py.py "$db"
else
    echo "  whole database, Python: skipped (estimated ${estimate} s from the one-thread rate)" >&2
fi

"$py" - "$res" "$size" "$threads" "$checkpoints" "$t_checkpoints" "$t_total" "$estimate" <<'EOF'
import json, statistics, sys
res, size, threads, checkpoints, t_cp, t_total, estimate = sys.argv[1:]
rows = {}
for line in open(res):
    r = json.loads(line)
    rows.setdefault(r["label"], []).append(r)
def mmm(xs, fmt):
    return " / ".join(fmt(x) for x in (min(xs), statistics.median(xs), max(xs)))
print(f"file: {int(size) / 1e9:.2f} GB, {threads} threads, {checkpoints} checkpoints; "
      f"largest thread: {t_cp} checkpoints, {int(t_total) / 1e6:.0f} MB")
print()
print("| report | wall time (min / median / max) | peak RSS (min / median / max) |")
print("|---|---|---|")
for label, rs in rows.items():
    secs = [r["seconds"] for r in rs]
    rss = [r["rss_kib"] / 1024 for r in rs]
    print(f"| {label} | {mmm(secs, lambda s: f'{s:.2f}')} s | {mmm(rss, lambda m: f'{m:.0f}')} MB |")
if "whole database, Python" not in rows:
    print(f"| whole database, Python | skipped (estimated {estimate} s) | |")
EOF
