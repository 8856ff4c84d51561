"""What the `flashback` CLI shows of a `langgraph dev` server's threads, checked against the
server's own answers (tests/devserver/drive.py's record()): shared by devserver_test.py (the
server's `.langgraph_api/` folder) and agentserver_test.py (the running server's URL).

  flashback(*args, env=None)   runs FLASHBACK_BIN: (exit status, parsed JSON or None, stderr)
  run_bin(*args, env=None)     runs it: the CompletedProcess
  api_form(view)               the JSON view (docs/json-view.md) in the API's JSON form
  same_values(got, want)       channel values as the server shows them
  finish(r, t0) / main(run)    the scripts' last lines: `N passed, M failed` and the exit status;
                               the command line (--keep: keep the server's temp folder)
  check_reads(r, location, rec, label)
                               `flashback threads/history/state LOCATION --json` against the
                               recording: threads and statuses, every namespace's history (ids
                               in order, parents, metadata) and every checkpoint's values, next,
                               interrupts and failed tasks
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import time
from typing import Any, Callable, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# The server's thread status -> Flashback's (ThreadStatus).
STATUS = {"idle": "finished", "error": "failed", "interrupted": "interrupted", "busy": "pending"}


def run_bin(*args: str, env: Optional[dict] = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs the CLI (`env`: its whole environment; default this one's)."""
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=env)


def flashback(*args: str, env: Optional[dict] = None, timeout: float = 120) -> tuple[int, Any, str]:
    """Runs the CLI: (exit status, its JSON on stdout when it succeeded, stderr stripped)."""
    p = run_bin(*args, env=env, timeout=timeout)
    out: Any = None
    if p.returncode == 0 and p.stdout.strip().startswith(("{", "[")):
        out = json.loads(p.stdout)
    return p.returncode, out, p.stderr.strip()


def cfg(tid: str, ns: str = "") -> dict:
    return {"configurable": {"thread_id": tid, "checkpoint_ns": ns}}


def api_form(v: Any) -> Any:
    """The JSON view (docs/json-view.md) in the API's JSON form: objects lose `$type` (a
    message is its fields, as the server sends it), `$value` wrappers their wrapper, an
    Interrupt is {id, value}. Plain JSON (what an Agent Server location shows) is unchanged."""
    if isinstance(v, dict):
        t = v.get("$type")
        if t == "langgraph.types.Interrupt":
            return {"id": v.get("id"), "value": api_form(v.get("value"))}
        if t is not None and "$value" in v:
            return api_form(v["$value"])
        if t is not None and "$args" in v:
            return [api_form(x) for x in v["$args"]]
        return {k: api_form(x) for k, x in v.items() if k != "$type"}
    if isinstance(v, list):
        return [api_form(x) for x in v]
    return v


def same_values(got: dict, want: dict) -> bool:
    """As encrypted_test.py compares `flashback state` with Python: every channel the server
    shows, with its value; Python (and so the server) shows an aggregate channel holding
    nothing yet as its empty default, which a reader of the stored channels may leave out."""
    want = {k: x for k, x in want.items() if k in got or x not in ([], {})}
    return {k: got.get(k) for k in want} == want


def interrupts_of(tasks: list) -> list:
    return [[(i["value"] if isinstance(i, dict) else i) for i in t.get("interrupts", [])] for t in tasks]


def failed_tasks(tasks: list) -> list:
    """The names of the tasks that raised (an `error`), sorted."""
    return sorted(t["name"] for t in tasks if t.get("error"))


def mask(v: Any) -> Any:
    """Values with random uuid ids (ToolMessage ids from ToolNode) masked."""
    if isinstance(v, dict):
        return {k: ("<uuid>" if k == "id" and isinstance(x, str) and UUID_RE.match(x) else mask(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [mask(x) for x in v]
    return v


def namespaces(t: dict) -> list[tuple[str, list]]:
    """A recorded thread's histories: [("", root), (ns, subgraph history), ...]."""
    return [("", t["history"]), *t["subgraph_history"].items()]


def check_reads(r, location: str, rec: dict, label: str = "flashback") -> Optional[dict]:
    """`flashback threads/history/state LOCATION --json` against the recording; returns the
    threads by id as `flashback threads` listed them (None when it failed)."""
    code, threads, err = flashback("threads", location, "--json")
    if not r.check(label, "threads LOCATION --json", code == 0, err):
        return None
    by_id = {t["thread_id"]: t for t in threads}
    want = {t["thread_id"]: t for t in rec["threads"].values()}
    r.check(label, f"threads: the server's {len(want)}", set(by_id) == set(want), f"{sorted(by_id)} vs {sorted(want)}")
    for name, t in rec["threads"].items():
        fb = by_id.get(t["thread_id"])
        if fb is None:
            continue
        r.check(f"{label} {name}", f"status as the server's {t['thread']['status']!r}",
                fb.get("status") == STATUS.get(t["thread"]["status"]), str(fb.get("status")))
        r.check(f"{label} {name}", "latest checkpoint as the server's state",
                fb.get("latest_checkpoint_id") == t["state"]["checkpoint"]["checkpoint_id"],
                f"{fb.get('latest_checkpoint_id')} vs {t['state']['checkpoint']['checkpoint_id']}")
        for ns, server in namespaces(t):
            where = f"{label} {name}" + (f" {ns.split(':')[0]}" if ns else "")
            code, hist, err = flashback("history", location, t["thread_id"], "--ns", ns, "--json")
            if not r.check(where, "history --json", code == 0, err):
                continue
            r.check(where, f"history ids in order ({len(server)})",
                    [h["checkpoint_id"] for h in hist] == [s["checkpoint_id"] for s in server],
                    f"{[h['checkpoint_id'] for h in hist]}\n       vs {[s['checkpoint_id'] for s in server]}")
            r.check(where, "history parents and metadata",
                    [(h["parent_checkpoint_id"], h["metadata"]) for h in hist]
                    == [(s["parent_checkpoint_id"], s["metadata"]) for s in server],
                    first_difference([(h["parent_checkpoint_id"], h["metadata"]) for h in hist],
                                     [(s["parent_checkpoint_id"], s["metadata"]) for s in server]))
            for want_s in server:
                check_state(r, location, t["thread_id"], ns, want_s, f"{where} step {want_s['metadata'].get('step')}")
    return by_id


def check_state(r, location: str, tid: str, ns: str, want_s: dict, at: str) -> None:
    """`flashback state --checkpoint C --json` against one checkpoint of the server's history."""
    code, st, err = flashback("state", location, tid, "--ns", ns, "--checkpoint", want_s["checkpoint_id"], "--json")
    if not r.check(at, "state --json", code == 0, err):
        return
    vals = api_form(st["values"])
    r.check(at, "values as the server's", same_values(vals, want_s["values"]),
            f"{vals}\n       vs {want_s['values']}")
    r.check(at, "next, parent, metadata as the server's",
            (st["tasks"]["next"], st["parent_checkpoint_id"], st["metadata"])
            == (want_s["next"], want_s["parent_checkpoint_id"], want_s["metadata"]),
            f"{st['tasks']['next']} {st['parent_checkpoint_id']} {st['metadata']}\n"
            f"       vs {want_s['next']} {want_s['parent_checkpoint_id']} {want_s['metadata']}")
    got_i = [[api_form(i)["value"] for i in x.get("interrupts", [])] for x in st["tasks"]["tasks"] if x["name"] in want_s["next"]]
    r.check(at, "interrupts as the server's", [i for i in got_i if i] == [i for i in interrupts_of(want_s["tasks"]) if i],
            f"{got_i} vs {interrupts_of(want_s['tasks'])}")
    r.check(at, "failed tasks as the server's", failed_tasks(st["tasks"]["tasks"]) == failed_tasks(want_s["tasks"]),
            f"{failed_tasks(st['tasks']['tasks'])} vs {failed_tasks(want_s['tasks'])}")


def first_difference(got: list, want: list) -> str:
    """Where two lists first differ, for a failure's detail line."""
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"[{i}] {a}\n       vs {b}"
    return f"{len(got)} items vs {len(want)}"


def finish(r, t0: float) -> int:
    """The final lines (time, `N passed, M failed`); the exit status."""
    print(f"info: {time.monotonic() - t0:.1f}s", flush=True)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


def main(run: Callable[[bool], int]) -> int:
    """The command line of the server tests: `run(keep)`."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", action="store_true", help="keep the server's temp folder")
    return run(ap.parse_args().keep)
