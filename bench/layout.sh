#!/usr/bin/env bash
# Lane layout of wide and long threads, release build: time and peak RSS.
#   bench/layout.sh [SIBLINGS] [LONG] [LATE]      (defaults 5000, 100000 and LONG)
#
# Three generated threads (crates/flashback-bench/src/layout.rs):
#   siblings    one checkpoint forked SIBLINGS times (an eval harness), SIBLINGS+1 lanes;
#   forked      a LONG-checkpoint line with a two-checkpoint fork every 50, written right after
#               its fork point (2 lanes);
#   late-forks  a LATE-checkpoint line whose forks are all written after the whole line
#               (LATE/50+1 lanes).
# For each: the engine in process (`flashback-bench layout`: DAG, layout, JSON, text), then end
# to end on a SQLite file: `flashback graph --json`, `flashback graph` (text) and `serve`'s
# `thread_graph` over HTTP. Results go to bench/out/layout.jsonl and a table on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
siblings=${1:-5000}
long=${2:-100000}
late=${3:-$long}
out=bench/out
mkdir -p "$out"
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p flashback-bench -p flashback-cli
bench="$target/release/flashback-bench"
cli="$target/release/flashback"
work=$(mktemp -d)
serve_pid=
cleanup() {
    if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
results="$out/layout.jsonl"
: >"$results"

# `measure NAME CMD...`: wall seconds, peak RSS (KiB) and stdout bytes of one run.
measure() {
    local name=$1
    shift
    local bytes
    # Counted, not kept: the old layout's JSON of a wide thread ran to gigabytes.
    bytes=$(/usr/bin/time -f '%e %M' -o "$work/time" "$@" | wc -c)
    read -r secs kib <"$work/time"
    printf '{"run":"%s","seconds":%s,"peak_rss_kib":%s,"output_bytes":%s}\n' "$name" "$secs" "$kib" "$bytes" | tee -a "$results"
}

# `serve_graph NAME DB`: `flashback serve DB`, then one `thread_graph` request: its wall time,
# the server's peak RSS and the response size.
serve_graph() {
    local name=$1 db=$2
    "$cli" serve "$db" --port 0 >"$work/serve.log" &
    serve_pid=$!
    for _ in $(seq 100); do
        grep -q 'token=' "$work/serve.log" 2>/dev/null && break
        sleep 0.1
    done
    local url base token handle start end kib bytes
    url=$(grep -o 'http://[^ ]*' "$work/serve.log")
    base=${url%%/#*}
    token=${url##*#token=}
    call() {
        curl -sf -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            --data "$2" "$base/api/$1"
    }
    handle=$(call app_info '{}' | jq -r .initial.db)
    start=$(date +%s.%N)
    bytes=$(call thread_graph "{\"req\":{\"db\":\"$handle\",\"thread_id\":\"t\"}}" | wc -c)
    end=$(date +%s.%N)
    kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$serve_pid/status")
    kill "$serve_pid"
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=
    printf '{"run":"%s","seconds":%s,"peak_rss_kib":%s,"output_bytes":%s}\n' "$name" \
        "$(echo "$end - $start" | bc)" "$kib" "$bytes" | tee -a "$results"
}

for spec in "siblings $siblings" "forked $long" "late-forks $late"; do
    set -- $spec
    shape=$1
    n=$2
    "$bench" layout "$shape" "$n" | tee -a "$results"
    db="$work/$shape.sqlite"
    "$bench" graph-db "$db" "$shape" "$n" >/dev/null
    measure "$shape $n: flashback graph --json" "$cli" graph "$db" t --json
    measure "$shape $n: flashback graph" "$cli" graph "$db" t
    serve_graph "$shape $n: serve thread_graph" "$db"
done
