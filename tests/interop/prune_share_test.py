#!/usr/bin/env python3
"""Interop test (issue 28): Flashback shares a SQLite file with the LangGraph program that owns it.

The REAL `SqliteSaver` on Python's `sqlite3` (its default 5 s busy timeout, the connection
kept open as a running program keeps it: lockprobe.py) puts a checkpoint every 20 ms while:

  * `flashback prune DB --older-than 1s --strategy delete --yes` deletes a large file's
    threads: in short transactions, so no put waits long (the longest must stay under 1 s,
    a fifth of the program's timeout) and none fails; the report counts the transactions;
  * `flashback prune DB … --vacuum` previews the VACUUM (how long it stops every writer) and
    says the program has the file open; `--vacuum --yes` is refused with one line (exit 1)
    and prunes nothing; with the program stopped it runs and returns the bytes.
  * A VACUUM that fails after the prune committed (a full disk: the process may write no file
    past 1 MB, `RLIMIT_FSIZE`, and VACUUM's copy of a larger file hits it) leaves the prune
    committed, prints the report and the failure (`--json`: the report with `vacuum_error`),
    and exits 1.

The large file is written by the REAL `SqliteSaver` too: THREADS threads of CHECKPOINTS
checkpoints, each holding a ~BYTES-byte value.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/prune_share_test.py
Prints one line per failed check and finally `N passed, M failed`.
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))

from langgraph.checkpoint.base import empty_checkpoint  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from lockprobe import Probe  # noqa: E402
from results import Results  # noqa: E402

THREADS = int(os.environ.get("FLASHBACK_SHARE_THREADS", "600"))
CHECKPOINTS = 6
BYTES = 40_000  # ~140 MB in all


def flashback(*args: str, file_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        # A full disk: no file written past `file_limit` bytes (a short write, then EFBIG;
        # SIGXFSZ ignored so the write fails rather than the process dying).
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=limit if file_limit else None)


def write_large(path: str) -> None:
    rng = random.Random(28)
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    for t in range(THREADS):
        config = {"configurable": {"thread_id": f"old-{t:04d}", "checkpoint_ns": ""}}
        for step in range(CHECKPOINTS):
            cp = empty_checkpoint()
            cp["channel_values"] = {"notes": rng.randbytes(BYTES).hex()[:BYTES]}
            cp["channel_versions"] = {"notes": step + 1}
            config = saver.put(config, cp, {"source": "loop", "step": step}, {"notes": step + 1})
    conn.close()


def threads(path: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    finally:
        conn.close()


def main() -> int:
    r = Results()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "large.sqlite")
        started = time.monotonic()
        write_large(path)
        size = os.path.getsize(path)
        r.note(f"wrote {THREADS} threads, {size / 1e6:.0f} MB in {time.monotonic() - started:.1f} s")
        time.sleep(1.1)  # every thread older than 1s

        # ---- a large prune beside the program ----
        probe = Probe(path).start()
        time.sleep(0.2)
        p = flashback("prune", path, "--older-than", "1s", "--strategy", "delete", "--yes", "--json")
        time.sleep(0.2)
        seen = probe.stop()
        if r.check("prune", "exits 0", p.returncode == 0, p.stderr.strip()):
            report = json.loads(p.stdout)
            r.check("prune", "every old thread goes", report["totals"]["threads"] - report["totals"]["skipped"] == THREADS, str(report["totals"]))
            r.check("prune", "in several short transactions", report["transactions"] > 1 and report["longest_transaction_ms"] < 1000,
                    f'{report["transactions"]} transactions, longest {report["longest_transaction_ms"]} ms')
            r.note(f'prune: {report["transactions"]} transactions, the longest {report["longest_transaction_ms"]} ms; '
                   f'the program put {seen["puts"]} checkpoints, the longest put {seen["longest_s"]} s')
        r.check("prune", "the program never failed", not seen["errors"], "; ".join(seen["errors"][:3]))
        r.check("prune", "no put waited a second", seen["longest_s"] < 1.0, str(seen))
        r.check("prune", "only the program's thread is left", threads(path) == {probe.thread_id}, str(sorted(threads(path))[:5]))

        # ---- VACUUM: previewed, refused while the program has the file open, then run ----
        probe = Probe(path).start()
        time.sleep(0.2)
        p = flashback("prune", path, "--older-than", "1s", "--vacuum", "--json")
        if r.check("vacuum preview", "exits 0", p.returncode == 0, p.stderr.strip()):
            v = json.loads(p.stdout)["vacuum_preview"]
            r.check("vacuum preview", "says it stops every writer, for how long", v["blocks_writers"] and v["seconds"] >= 1, str(v))
            r.check("vacuum preview", "says another program has the file open", os.getpid() in (v["open_elsewhere"] or []), str(v))
        before = os.path.getsize(path)
        p = flashback("prune", path, "--older-than", "1s", "--vacuum", "--yes")
        r.check("vacuum refused", "exits 1 with one line", p.returncode == 1 and p.stderr.count("\n") == 1 and "VACUUM refused" in p.stderr,
                f"exit {p.returncode}: {p.stderr!r}")
        r.check("vacuum refused", "nothing was written", os.path.getsize(path) == before and p.stdout == "")
        seen = probe.stop()
        r.check("vacuum refused", "the program never failed", not seen["errors"], "; ".join(seen["errors"][:3]))
        p = flashback("prune", path, "--older-than", "1s", "--vacuum", "--yes", "--json")
        if r.check("vacuum", "runs once the program stopped", p.returncode == 0, p.stderr.strip()):
            v = json.loads(p.stdout)["vacuum"]
            r.check("vacuum", "gives the space back", v["bytes_returned"] > size // 2, str(v))

        # ---- a VACUUM failing after the prune committed ----
        conn = sqlite3.connect(path)
        saver = SqliteSaver(conn)
        for thread, size in (("late-1", 10_000), ("late-2", 10_000), ("ballast", 3_000_000)):
            # The ballast stays: VACUUM's copy of it outgrows the limit below.
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            for step in range(2):
                cp = empty_checkpoint()
                cp["channel_values"] = {"notes": "x" * size}
                config = saver.put(config, cp, {"step": step}, {})
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        time.sleep(1.1)
        for late, json_flag in (("late-1", ["--json"]), ("late-2", [])):
            p = flashback("prune", path, late, "--older-than", "1s", "--strategy", "delete", "--vacuum", "--yes", *json_flag, file_limit=1_000_000)
            where = "vacuum fails" + (" --json" if json_flag else "")
            r.check(where, "exits 1", p.returncode == 1, f"exit {p.returncode}: {p.stderr!r}")
            r.check(where, "says the prune committed and the VACUUM failed", "VACUUM failed" in p.stderr and "committed" in p.stderr, p.stderr)
            if json_flag:
                report = json.loads(p.stdout) if p.stdout.strip() else {}
                r.check(where, "the report is printed with the failure", bool(report.get("vacuum_error")) and report.get("totals", {}).get("checkpoints") == 2, p.stdout[:300])
            else:
                r.check(where, "both lines are printed", "pruned 1 thread: 2 checkpoints go" in p.stdout and "VACUUM failed" in p.stdout, p.stdout)
            conn = sqlite3.connect(path)
            left = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (late,)).fetchone()[0]
            conn.close()
            r.check(where, "the prune is committed", left == 0, f"{left} checkpoints left")
    print(f"{r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
