#!/usr/bin/env python3
"""Run a command RUNS times (after one untimed warm-up), its stdout thrown away, and print one
JSON line: {"seconds": [min, median, max], "rss_mb": [min, median, max], "runs"} — wall time
and the peak resident memory of the process (its own `wait4` rusage).

    python bench/rss_time.py RUNS -- CMD ARG…
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time


def main() -> None:
    runs = int(sys.argv[1])
    cmd = sys.argv[sys.argv.index("--") + 1 :]
    seconds, rss = [], []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        with open(os.devnull, "wb") as null:
            p = subprocess.Popen(cmd, stdout=null)
            _, status, usage = os.wait4(p.pid, 0)
        elapsed = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            print(json.dumps({"error": f"exit {p.returncode}: {' '.join(cmd)}"}))
            sys.exit(1)
        if i:
            seconds.append(elapsed)
            rss.append(usage.ru_maxrss / 1024)

    def mmm(xs: list[float], digits: int) -> list[float]:
        return [round(min(xs), digits), round(statistics.median(xs), digits), round(max(xs), digits)]

    print(json.dumps({"seconds": mmm(seconds, 3), "rss_mb": mmm(rss, 1), "runs": runs}))


if __name__ == "__main__":
    main()
