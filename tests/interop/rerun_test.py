"""End to end: `flashback rerun` forks a checkpoint, runs the example runner
(examples/counter_agent.py, real LangGraph), and reports each checkpoint as it lands."""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile

from langgraph.checkpoint.sqlite import SqliteSaver

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN") or str(
    pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "flashback"
)
EXAMPLE = ROOT / "examples" / "counter_agent.py"
passed = failed = 0


def check(what: str, ok: bool, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   rerun: {what}", flush=True)
    else:
        failed += 1
        print(f"FAIL rerun: {what}" + (f"\n       {detail}" if detail else ""), flush=True)


def flashback(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def main() -> int:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="flashback-rerun-"))
    db = str(tmp / "demo.sqlite")
    subprocess.run([sys.executable, str(EXAMPLE), "--init", db, "demo"], check=True, capture_output=True)
    hist = json.loads(flashback("history", db, "demo", "--json").stdout)
    x = next(h for h in hist if h["metadata"]["step"] == 2)
    runner = f"{sys.executable} {EXAMPLE} --delay 0.2"
    p = flashback("rerun", db, "demo", "--checkpoint", x["checkpoint_id"], "--runner", runner, "--json")
    check("exits 0", p.returncode == 0, p.stderr[-2000:])
    events = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    cps = [e for e in events if e.get("type") == "checkpoint"]
    check("the first event is the fork of X", bool(cps) and cps[0]["source"] == "fork"
          and cps[0]["parent_checkpoint_id"] == x["checkpoint_id"], json.dumps(cps[:1]))
    check("then one event per step the program ran (steps 4, 5, 6, source loop)",
          [(c["step"], c["source"]) for c in cps[1:]] == [(4, "loop"), (5, "loop"), (6, "loop")],
          json.dumps(cps))
    check("each event's parent is the previous checkpoint",
          all(b["parent_checkpoint_id"] == a["checkpoint_id"] for a, b in zip(cps, cps[1:])), json.dumps(cps))
    check("a finished event with the fork closes the stream", bool(events) and events[-1].get("type") == "finished", p.stdout[-500:])
    conn = sqlite3.connect(db, check_same_thread=False)
    head = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": "demo"}})
    values = head.checkpoint["channel_values"]
    check("the program resumed from X: final state as Python computes it",
          values.get("count") == 5 and values.get("log") == ["start", "bump 1", "bump 2", "bump 3", "bump 4", "bump 5"],
          repr(values))
    check("the head is the last reported checkpoint", bool(cps) and head.config["configurable"]["checkpoint_id"] == cps[-1]["checkpoint_id"])
    conn.close()

    p = flashback("rerun", db, "demo", "--checkpoint", x["checkpoint_id"], "--runner", "exit 3")
    check("a failing runner: non-zero exit and one clear line", p.returncode != 0 and "runner failed" in p.stderr, p.stderr)
    p = flashback("rerun", db, "demo", "--checkpoint", x["checkpoint_id"], "--runner", "sleep 30", "--timeout", "1")
    check("a hanging runner is stopped at the timeout", p.returncode != 0 and "did not finish within 1 s" in p.stderr, p.stderr)
    p = flashback("rerun", db, "demo", "--checkpoint", "nope", "--runner", "true")
    check("an unknown checkpoint is refused before anything runs", p.returncode == 3, p.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
