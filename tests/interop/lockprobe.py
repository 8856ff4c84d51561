#!/usr/bin/env python3
"""A LangGraph program writing beside Flashback, timed: the REAL `SqliteSaver` (Python's
`sqlite3` with its default 5 s busy timeout) puts a small checkpoint on its own thread every
`interval` seconds and records how long each `put` took and any error ("database is locked").

Used by prune_share_test.py; run it by hand to measure how long a Flashback write holds the
lock on a large file (issue 28):

    python tests/interop/lockprobe.py DB SECONDS [-- flashback prune DB ... --yes]

starts the probe, runs the command after 0.2 s (if given), keeps probing SECONDS in all and
prints the longest put, the 99th percentile, the number of puts and the errors as JSON.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
import uuid

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver


class Probe:
    """Puts a checkpoint on thread `probe-<uuid>` every `interval` s until stopped."""

    def __init__(self, path: str, interval: float = 0.02) -> None:
        self.path = path
        self.interval = interval
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.thread_id = f"probe-{uuid.uuid4().hex[:8]}"

    def _run(self) -> None:
        # The program's connection stays open, as a running LangGraph program's does.
        conn = sqlite3.connect(self.path, check_same_thread=False)  # timeout: 5 s, Python's default
        saver = SqliteSaver(conn)
        config = {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ""}}
        try:
            while not self._stop.is_set():
                cp = empty_checkpoint()
                start = time.monotonic()
                try:
                    config = saver.put(config, cp, {"source": "loop", "step": len(self.latencies)}, {})
                    self.latencies.append(time.monotonic() - start)
                except Exception as e:  # noqa: BLE001 - what the program would die of
                    self.errors.append(f"{type(e).__name__}: {e}")
                self._stop.wait(self.interval)
        finally:
            conn.close()

    def start(self) -> "Probe":
        self._thread.start()
        return self

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        lat = sorted(self.latencies)
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else 0.0
        return {
            "puts": len(lat),
            "longest_s": round(lat[-1], 3) if lat else 0.0,
            "p99_s": round(p99, 3),
            "errors": self.errors,
        }


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, seconds = argv[0], float(argv[1])
    command = argv[3:] if len(argv) > 2 and argv[2] == "--" else []
    probe = Probe(path).start()
    time.sleep(0.2)
    ran = None
    t0 = time.monotonic()
    if command:
        p = subprocess.run(command, capture_output=True, text=True)
        ran = {"exit": p.returncode, "seconds": round(time.monotonic() - t0, 2), "stderr": p.stderr.strip()[-500:]}
        try:
            report = json.loads(p.stdout)
            ran.update({k: report.get(k) for k in ("transactions", "longest_transaction_ms")})
        except ValueError:
            pass
    time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
    print(json.dumps({"probe": probe.stop(), "command": ran}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
