#!/usr/bin/env bash
# Every figure of the README's "Benchmark" section that issue 12 asks for, in one command:
#   bench/all.sh [RUNS]     (default 5)
# 1. bench/scale.sh: thread lists of 20k × 5 and 100k × 10 (1M) checkpoints on SQLite and
#    Postgres — Flashback cold/warm, over TLS or not, the app's first paint, Python's savers
#    and the SQL floor (databases generated on first use, about a minute; the Python figures
#    take about an hour at 1M checkpoints: pass --skip-python through SCALE_ARGS to leave
#    them out).
# 2. bench/chat.sh: the 2,800-checkpoint growing chat thread (~800 MB in SQLite) — full decoded
#    history, alone and streamed to the JSON view, beside Python's saver.list(), with peak RSS.
# 3. bench/app.sh: the app opening a 10,000-checkpoint thread and stepping through it.
# Each prints its Markdown table / JSON lines; the results stay in bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
# shellcheck disable=SC2086 # SCALE_ARGS is a list of words on purpose
bench/scale.sh --runs "$runs" ${SCALE_ARGS:-}
bench/chat.sh "$runs"
bench/app.sh "$runs"
