#!/usr/bin/env python3
"""Interop test (issue 31): a running Agent Server as a Flashback location. The real
`langgraph dev` server (tests/devserver/drive.py) runs the scenario; while it RUNS, the
`flashback` CLI reads and writes it at `http://127.0.0.1:PORT` and every answer is checked
against the server's own (langgraph_sdk):

  1. reads     threads (statuses, the server's status/metadata/runs), history of every root and
               subgraph namespace (ids in order, parents, metadata; pages with --limit/--before),
               state of every checkpoint (values in the API's JSON, next, interrupts, failed
               tasks): tests/interop/serverreads.py, shared with devserver_test.py; then diff,
               replay, watch, search, export + verify and store ls/get, against what the SDK
               answered (recorded by drive.record()).
  2. writes    `flashback fork URL T --checkpoint X` (a copy) and `--set messages=... --as-node
               model` (an edit: the AIMessage's tool call sent to Lima) as threads.get_history
               then shows them (and a run from the edit calls the tool for Lima);
               `flashback rerun URL approval-waiting --checkpoint H --resume '"approved"'` and
               the SDK sees the run succeed and the thread idle; a thread created and never
               run is listed as threads.search lists it; a run pending (after_seconds) makes
               the thread `busy` with the run listed; `flashback copy URL T X` is a thread the
               SDK shows with the same history.
  3. errors    each one line on stderr, a non-zero exit, within 15 s: nothing listening; a
               server that accepts and never answers; a plain HTTP server (http.server); and a
               second `langgraph dev` with custom auth (drive.start(auth=True)): no key (asks
               for it), a wrong LANGGRAPH_API_KEY (refused), the right one (threads listed),
               LANGSMITH_API_KEY as the fallback, and the key never in any output.

While `flashback threads http://…` does not know the location kind at all (the CLI before
issue 31 takes the URL for a file), parts 1-3 are skipped with one line.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/agentserver_test.py [--keep]
   or: FLASHBACK_BIN=... pytest tests/interop/agentserver_test.py   (one test, test_agentserver)
Prints one line per failed check and finally `N passed, M failed`; exits 1 on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime
from typing import Any, Optional

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "devserver"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))

import drive  # noqa: E402
from results import Results  # noqa: E402
from serverreads import (  # noqa: E402
    api_form, check_reads, finish, first_difference, flashback, main, namespaces, run_bin, same_values)

# What the CLI before issue 31 says of an http:// location (location::Location::parse).
UNKNOWN_LOCATION = re.compile(r"is not a file path or a postgres:// URL", re.I)
CONNECT_LIMIT = 15.0  # every error case answers within this (the contract's connect timeout: 10 s)
KEY_ENV = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
WRONG_KEY = "wrong-key-5e1f9c"


def env_with(**keys: str) -> dict:
    """The environment without any API key, plus `keys`."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENV}
    env.update(keys)
    return env


def cli(*args: str) -> tuple[int, Any, str]:
    """flashback() without any API key from this environment."""
    return flashback(*args, env=env_with())


def json_lines(*args: str) -> tuple[int, list, str]:
    """A job's JSON lines (rerun/search --json): (exit status, the objects, stderr)."""
    p = run_bin(*args, env=env_with(), timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip().startswith("{")]
    return p.returncode, rows, p.stderr.strip()


def errors(stderr: str) -> list[str]:
    """The error lines of stderr (`flashback: …`; a location's `note:` lines are not errors)."""
    return [x for x in stderr.splitlines() if x.startswith("flashback:")]


def by_id(history: list) -> dict:
    return {s["checkpoint_id"]: s for s in history}


def branch(history: list, tip: str) -> list[str]:
    """The ids from the root to `tip` along parent links, root first."""
    known = by_id(history)
    out = []
    at: Optional[str] = tip
    while at is not None and at in known:
        out.append(at)
        at = known[at]["parent_checkpoint_id"]
    return out[::-1]


def at_path(values: dict, path: list) -> Any:
    v: Any = values
    for p in path:
        if isinstance(v, dict) and isinstance(p, str) and p in v:
            v = v[p]
        elif isinstance(v, list) and isinstance(p, int) and -len(v) <= p < len(v):
            v = v[p]
        else:
            return None
    return v


def holds(v: Any, text: str) -> bool:
    """Whether a value holds `text`, any case, in a key or a string or number value (what
    `flashback search` looks for)."""
    if isinstance(v, dict):
        return any(text in k.lower() or holds(x, text) for k, x in v.items())
    if isinstance(v, list):
        return any(holds(x, text) for x in v)
    if isinstance(v, bool) or v is None:
        return False
    return text in str(v).lower()


def when(ts: Optional[str]) -> Optional[datetime]:
    if not ts:
        return None
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return None


# ---------------------------------------------------------------------------
# 1. Reads beyond threads/history/state
# ---------------------------------------------------------------------------


def check_server_threads(r: Results, threads: dict, rec: dict) -> None:
    """What `flashback threads URL --json` says of each thread's server side (`server`)."""
    for name, t in rec["threads"].items():
        fb = (threads.get(t["thread_id"]) or {}).get("server")
        if not r.check(f"threads {name}", "has the server's thread (`server`)", isinstance(fb, dict), str(fb)):
            continue
        want = t["thread"]
        r.check(f"threads {name}", f"server status {want['status']!r}", fb.get("status") == want["status"], str(fb.get("status")))
        r.check(f"threads {name}", "server metadata", fb.get("metadata") == want["metadata"], f"{fb.get('metadata')}\n       vs {want['metadata']}")
        r.check(f"threads {name}", "graph and assistant",
                (fb.get("graph_id"), fb.get("assistant_id")) == (want["metadata"].get("graph_id"), want["metadata"].get("assistant_id")),
                f"{fb.get('graph_id')} {fb.get('assistant_id')}")
        r.check(f"threads {name}", "created/updated as the server's",
                (when(fb.get("created_at")), when(fb.get("updated_at"))) == (when(want["created_at"]), when(want["updated_at"])),
                f"{fb.get('created_at')} {fb.get('updated_at')} vs {want['created_at']} {want['updated_at']}")
        got_runs = sorted((x.get("run_id"), x.get("status")) for x in fb.get("runs", []))
        want_runs = sorted((x["run_id"], x["status"]) for x in t["runs"])
        r.check(f"threads {name}", f"runs ({len(want_runs)}) and their statuses", got_runs == want_runs, f"{got_runs} vs {want_runs}")


def typed(v: Any) -> bool:
    """Whether a JSON view holds a `$type` marker anywhere."""
    if isinstance(v, dict):
        return "$type" in v or any(typed(x) for x in v.values())
    return isinstance(v, list) and any(typed(x) for x in v)


def check_plain(r: Results, url: str, rec: dict) -> None:
    """The values are the API's JSON as it is (no JSON-view `$type` markers to strip)."""
    for name in ("chat-tools", "approval-waiting", "research"):
        t = rec["threads"][name]
        code, st, err = cli("state", url, t["thread_id"], "--json")
        r.check(f"plain {name}", "state values exactly the server's (no $type markers)",
                code == 0 and not typed(st["values"]) and same_values(st["values"], t["state"]["values"]), err)


def check_paging(r: Results, url: str, rec: dict) -> None:
    heads = sorted(rec["threads"].values(), key=lambda t: t["state"]["created_at"], reverse=True)
    code, page, err = cli("threads", url, "--limit", "2", "--json")
    if r.check("paging", "threads --limit 2", code == 0, err):
        r.check("paging", "threads --limit 2: the two latest", [t["thread_id"] for t in page] == [t["thread_id"] for t in heads[:2]],
                f"{[t['thread_id'] for t in page]} vs {[t['thread_id'] for t in heads[:2]]}")
    t = rec["threads"]["chat-tools"]
    ids = [s["checkpoint_id"] for s in t["history"]]
    code, h1, err = cli("history", url, t["thread_id"], "--limit", "3", "--json")
    code2, h2, err2 = cli("history", url, t["thread_id"], "--before", ids[2], "--limit", "3", "--json")
    if r.check("paging", "history --limit / --before", code == 0 and code2 == 0, err or err2):
        r.check("paging", "history --limit 3 then --before the third",
                [h["checkpoint_id"] for h in h1 + h2] == ids[:6], f"{[h['checkpoint_id'] for h in h1 + h2]} vs {ids[:6]}")
    code, same, err = cli("threads", url + "/", "--json")
    r.check("paging", "the URL with a trailing slash lists the same threads",
            code == 0 and {x["thread_id"] for x in same} == {x["thread_id"] for x in rec["threads"].values()}, err)


def check_busy(r: Results, url: str, client, rec: dict) -> None:
    """A run waiting to start (after_seconds) makes the thread busy: Flashback says so, with the
    pending run. The run is cancelled after."""
    tid = rec["threads"]["approval-resumed"]["thread_id"]
    run = client.runs.create(tid, "approval", input={"request": "later", "log": []}, after_seconds=30)
    try:
        want = client.threads.get(tid)["status"]
        code, threads, err = cli("threads", url, "--json")
        fb = next((t for t in threads or [] if t["thread_id"] == tid), {}).get("server") or {}
        r.check("busy", f"a thread with a run pending: the server's status ({want})", code == 0 and fb.get("status") == want, err or str(fb.get("status")))
        runs = {x.get("run_id"): x.get("status") for x in fb.get("runs", [])}
        r.check("busy", "its pending run listed", runs.get(run["run_id"]) == "pending", str(runs))
    finally:
        client.runs.cancel(tid, run["run_id"])


def check_copy(r: Results, url: str, client, rec: dict) -> None:
    """`flashback copy URL T X`: the server makes the copy (and names it); the SDK shows it."""
    t = rec["threads"]["research"]
    code, rep, err = cli("copy", url, t["thread_id"], drive.thread_id("research-copy"), "--json")
    if not r.check("copy", "flashback copy URL T X --json", code == 0 and bool((rep or {}).get("thread_id")), err or str(rep)):
        return
    state = client.threads.get_state(rep["thread_id"])
    r.check("copy", "threads.get_state of the copy: the thread's values and next",
            (state["values"], state["next"]) == (t["state"]["values"], t["state"]["next"]), f"{state['values']} {state['next']}")
    got = [s["values"] for s in client.threads.get_history(rep["thread_id"], limit=1000)]
    r.check("copy", f"the copy's history: the thread's {len(t['history'])} checkpoints' values",
            got == [s["values"] for s in t["history"]], first_difference(got, [s["values"] for s in t["history"]]))
    # Deleting it is the server's DELETE /threads/{id}: previewed, then gone from the SDK's view.
    code, preview, err = cli("delete", url, rep["thread_id"], "--json")
    r.check("delete", "flashback delete URL T (no --yes): a preview counting the copy's checkpoints",
            code == 0 and (preview or {}).get("dry_run") is True and (preview or {}).get("checkpoints") == len(t["history"]) + sum(len(v) for v in t["subgraph_history"].values()),
            err or str(preview))
    code, done, err = cli("delete", url, rep["thread_id"], "--yes", "--json")
    gone = not any(x["thread_id"] == rep["thread_id"] for x in client.threads.search(limit=1000))
    r.check("delete", "flashback delete URL T --yes: the server no longer lists the thread",
            code == 0 and gone, err or str(done))


def check_empty_thread(r: Results, url: str, client) -> None:
    """A thread created and never run has no checkpoint to show: it is not in the thread list
    (as on a database, and as for a dev folder), and the note says the server lists it."""
    tid = drive.thread_id("created-never-run")
    client.threads.create(thread_id=tid, metadata={"fixture": "created-never-run"}, if_exists="do_nothing")
    code, threads, err = cli("threads", url, "--json")
    listed = any(t["thread_id"] == tid for t in threads or [])
    r.check("empty thread", "a thread never run is not listed, and a note says the server lists it",
            code == 0 and not listed and "1 thread without checkpoints (created, never run)" in (err or ""),
            f"exit {code}, listed={listed}, stderr {err!r}")
    # The newest thread has no checkpoint: a first page of 2 is still 2 threads (a short page
    # reads as the whole list).
    code, page, err = cli("threads", url, "--limit", "2", "--json")
    r.check("empty thread", "threads --limit 2 with a never-run thread newest: still 2 threads",
            code == 0 and len(page) == 2, f"exit {code}, {len(page or [])} threads listed")
    client.threads.delete(tid)


def changed_channels(a: dict, b: dict) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k) and not (k not in a and b.get(k) in ([], {})))


def check_diff(r: Results, url: str, rec: dict) -> None:
    for name in ("chat-tools", "approval-resumed", "chat-fork"):
        t = rec["threads"][name]
        hist = t["history"]
        a, b = hist[-1], hist[0]  # the root and the head
        where = f"diff {name}"
        code, d, err = cli("diff", url, t["thread_id"], a["checkpoint_id"], b["checkpoint_id"], "--json")
        if not r.check(where, "diff --json", code == 0, err):
            continue
        got = sorted(c["channel"] for c in d["channels"] if c["change"] != "unchanged" and not c["control"])
        want = changed_channels(a["values"], b["values"])
        r.check(where, f"changed channels as the SDK's values differ {want}", got == want, f"{got}")
        for c in d["channels"]:
            if c["channel"] in b["values"] and c["change"] in ("added", "changed"):
                r.check(where, f"{c['channel']}: B's value as the server's", api_form(c["b"]) == b["values"][c["channel"]],
                        f"{api_form(c['b'])}\n       vs {b['values'][c['channel']]}")


def check_replay(r: Results, url: str, rec: dict) -> None:
    for name, t in rec["threads"].items():
        for ns, hist in namespaces(t):
            where = f"replay {name}" + (f" {ns.split(':')[0]}" if ns else "")
            code, steps, err = cli("replay", url, t["thread_id"], "--ns", ns, "--json")
            if not r.check(where, "replay --json", code == 0, err):
                continue
            want = branch(hist, hist[0]["checkpoint_id"])
            r.check(where, f"the head's branch, root first ({len(want)})", [s["checkpoint_id"] for s in steps] == want,
                    first_difference([s["checkpoint_id"] for s in steps], want))
            known = by_id(hist)
            nexts = [(s["checkpoint_id"], s["tasks"]["next"]) for s in steps]
            want_n = [(c, known[c]["next"]) for c in want]
            r.check(where, "each step's next as the server's", nexts == want_n, first_difference(nexts, want_n))


def check_watch(r: Results, url: str, rec: dict) -> None:
    for name, path, keys in (("chat-tools", "turns", ["turns"]), ("chat-fork", "messages[-1].content", ["messages", -1, "content"]),
                             ("approval-resumed", "decision", ["decision"])):
        t = rec["threads"][name]
        code, w, err = cli("watch", url, t["thread_id"], path, "--json")
        if not r.check(f"watch {name}", f"watch {path} --json", code == 0, err):
            continue
        known = by_id(t["history"])
        want = []
        for s in t["history"]:
            parent = known.get(s["parent_checkpoint_id"] or "")
            before = at_path(parent["values"], keys) if parent else None
            now = at_path(s["values"], keys)
            if now != before:
                want.append(s["checkpoint_id"])
        got = [c["checkpoint_id"] for c in w["changes"]]
        r.check(f"watch {name}", f"{path} changes where the SDK's values change ({len(want)})", sorted(got) == sorted(want),
                f"{sorted(got)} vs {sorted(want)}")
        for c in w["changes"]:
            v = (c.get("value") or {}).get("value")
            want_v = at_path(known[c["checkpoint_id"]]["values"], keys) if c["checkpoint_id"] in known else None
            r.check(f"watch {name}", f"value at {c['checkpoint_id'][-8:]} as the server's", api_form(v) == want_v, f"{v} vs {want_v}")


def check_search(r: Results, url: str, rec: dict) -> None:
    for text in ("paris", "bergen", "refund", "draft", "gathered", "no-such-text-anywhere"):
        code, rows, err = json_lines("search", url, text, "--json")
        if not r.check(f"search {text!r}", "search --json", code == 0, err):
            continue
        got = sorted(x["thread_id"] for x in rows if x.get("type") == "search_hit")
        want = sorted(t["thread_id"] for t in rec["threads"].values() if holds(t["state"]["values"], text))
        names = {t["thread_id"]: n for n, t in rec["threads"].items()}
        r.check(f"search {text!r}", f"the threads whose state holds it {[names[x] for x in want]}", got == want,
                f"{[names.get(x, x) for x in got]}")
        finished = [x for x in rows if x.get("type") == "finished"]
        r.check(f"search {text!r}", "ends with the summary", bool(finished) and finished[-1]["result"]["threads_matched"] == len(want),
                str(finished[-1:]))


def check_export(r: Results, url: str, rec: dict, tmp: pathlib.Path) -> None:
    for name, t in rec["threads"].items():
        out = tmp / f"{name}.json"
        code, res, err = cli("export", url, t["thread_id"], "-o", str(out), "--json")
        if not r.check(f"export {name}", "export --json", code == 0, err):
            continue
        want = {(ns, s["checkpoint_id"]): s for ns, hist in namespaces(t) for s in hist}
        r.check(f"export {name}", f"every checkpoint of every namespace ({len(want)})", res["checkpoints"] == len(want), str(res["checkpoints"]))
        bundle = json.loads(out.read_text())
        got = {(c["checkpoint_ns"], c["checkpoint_id"]): c for c in bundle["checkpoints"]}
        r.check(f"export {name}", "the bundle's checkpoints are the server's", set(got) == set(want), f"{sorted(got)} vs {sorted(want)}")
        bad = [k for k, c in got.items() if k in want and not (
            same_values(api_form(c["values"]), want[k]["values"]) and c["parent_checkpoint_id"] == want[k]["parent_checkpoint_id"]
            and c["metadata"] == want[k]["metadata"])]
        r.check(f"export {name}", "values, parents and metadata as the server's", not bad,
                f"{bad[:1]}: {got[bad[0]] if bad else ''}\n       vs {want[bad[0]] if bad else ''}")
        code, rep, err = cli("verify", str(out), "--json")
        r.check(f"export {name}", "verify: the bundle is intact", code == 0 and rep.get("ok") is True, err)


def check_store(r: Results, url: str, rec: dict) -> None:
    want = {(tuple(i["namespace"]), i["key"]): i for i in rec["store"]["items"]}
    code, items, err = cli("store", "ls", url, "--json")
    if r.check("store", "store ls --json", code == 0, err):
        items = items.get("items", items) if isinstance(items, dict) else items
        got = {(tuple(i["namespace"]), i["key"]): i for i in items}
        r.check("store", f"store ls: the server's {len(want)} items", set(got) == set(want), f"{sorted(got)} vs {sorted(want)}")
        for k in set(got) & set(want):
            r.check("store", f"{'/'.join(k[0])} {k[1]}: value and times as the server's",
                    (got[k]["value"], when(got[k]["created_at"]), when(got[k]["updated_at"]))
                    == (want[k]["value"], when(want[k]["created_at"]), when(want[k]["updated_at"])), f"{got[k]} vs {want[k]}")
    for (ns, key), item in want.items():
        code, got, err = cli("store", "get", url, "/".join(ns), key, "--json")
        r.check("store", f"store get {'/'.join(ns)} {key}", code == 0 and got.get("value") == item["value"], err or str(got))
    code, _, err = cli("store", "get", url, "users/u-1", "no-such-key", "--json")
    r.check("store", "store get of a missing key: not found (exit 3), one error line", code == 3 and len(errors(err)) == 1, f"{code} {err}")


# ---------------------------------------------------------------------------
# 2. Writes
# ---------------------------------------------------------------------------


def check_copy_fork(r: Results, url: str, client, rec: dict) -> None:
    t = rec["threads"]["chat-tools"]
    x = next(s for s in reversed(t["history"]) if s["next"] == ["tools"])
    code, fork, err = cli("fork", url, t["thread_id"], "--checkpoint", x["checkpoint_id"], "--json")
    if not r.check("copy fork", "flashback fork URL T --checkpoint X --json", code == 0, err):
        return
    hist = by_id(client.threads.get_history(t["thread_id"], limit=1000))
    f = hist.get(fork["checkpoint_id"])
    if not r.check("copy fork", "threads.get_history lists the fork", f is not None, fork["checkpoint_id"]):
        return
    r.check("copy fork", "the fork's values are X's", f["values"] == x["values"], f"{f['values']}\n       vs {x['values']}")
    r.check("copy fork", "the fork waits on X's next", f["next"] == x["next"], f"{f['next']} vs {x['next']}")
    code, mine, err = cli("history", url, t["thread_id"], "--limit", "1", "--json")
    r.check("copy fork", "flashback history shows the fork as the head",
            code == 0 and [h["checkpoint_id"] for h in mine] == [fork["checkpoint_id"]], err or str(mine))


def check_edit_fork(r: Results, url: str, client, rec: dict) -> None:
    t = rec["threads"]["chat-fork"]
    tid = t["thread_id"]
    x = by_id(t["history"])[rec["scenario"]["fork"]["source_checkpoint_id"]]
    msgs = json.loads(json.dumps(x["values"]["messages"]))
    msgs[-1]["tool_calls"] = [dict(msgs[-1]["tool_calls"][0], args={"city": "Lima"})]
    code, fork, err = cli("fork", url, tid, "--checkpoint", x["checkpoint_id"], "--as-node", "model",
                          "--set", "messages=" + json.dumps(msgs), "--json")
    if not r.check("edit fork", "flashback fork --set messages=... --as-node model (tool call to Lima)", code == 0, err):
        return
    hist = by_id(client.threads.get_history(tid, limit=1000))
    f = hist.get(fork["checkpoint_id"])
    if not r.check("edit fork", "threads.get_history lists the edit", f is not None, fork["checkpoint_id"]):
        return
    def shown(messages: list) -> list:  # AI messages by the fields the API coerces, others by id
        return [drive.api_message(m) if m.get("type") == "ai" else m.get("id") for m in messages]

    got, want = shown(f["values"]["messages"]), shown(msgs)
    r.check("edit fork", "the server's messages are the edited ones", got == want, f"{got}\n       vs {want}")
    r.check("edit fork", "made as `model` from X: parent X, source update, next tools",
            (f["parent_checkpoint_id"], f["metadata"].get("source"), f["next"]) == (x["checkpoint_id"], "update", ["tools"]),
            f"{f['parent_checkpoint_id']} {f['metadata'].get('source')} {f['next']}")
    done = client.runs.wait(tid, "chat", input=None, checkpoint_id=fork["checkpoint_id"])
    last = (done.get("messages") or [{}])[-1]
    r.check("edit fork", "a run from the edit calls the tool for Lima",
            last.get("content") == "The tool said: It is sunny in Lima, 21 C.", str(last))


def check_resume(r: Results, url: str, client, rec: dict) -> None:
    t = rec["threads"]["approval-waiting"]
    tid = t["thread_id"]
    head = t["state"]["checkpoint"]["checkpoint_id"]
    runs_before = {x["run_id"] for x in t["runs"]}
    code, rows, err = json_lines("rerun", url, tid, "--checkpoint", head, "--resume", '"approved"', "--json")
    if not r.check("resume", "flashback rerun URL approval-waiting --checkpoint H --resume '\"approved\"'", code == 0, err):
        return
    runs = [x for x in client.runs.list(tid, limit=100) if x["run_id"] not in runs_before]
    r.check("resume", "the server ran one new run and it succeeded", [x["status"] for x in runs] == ["success"], str(runs))
    thread = client.threads.get(tid)
    r.check("resume", "the thread is idle", thread["status"] == "idle", thread["status"])
    state = client.threads.get_state(tid)
    r.check("resume", "the graph finished with the decision",
            (state["next"], state["values"].get("decision"), state["values"].get("log", [])[-1:])
            == ([], "approved", ["finished (approved)"]), f"{state['next']} {state['values']}")
    hist = by_id(client.threads.get_history(tid, limit=1000))
    new = [x["checkpoint_id"] for x in rows if x.get("type") == "checkpoint"]
    r.check("resume", "the checkpoints it reported are the server's, the last its head",
            bool(new) and all(c in hist for c in new) and new[-1] == state["checkpoint"]["checkpoint_id"],
            f"{new} vs head {state['checkpoint']['checkpoint_id']}")
    r.check("resume", "it ends with `finished`", any(x.get("type") == "finished" for x in rows), str(rows[-1:]))


# ---------------------------------------------------------------------------
# 3. Errors
# ---------------------------------------------------------------------------


def one_line_error(r: Results, what: str, url: str, pattern: str, env: Optional[dict] = None,
                   secrets: tuple = ()) -> None:
    t0 = time.monotonic()
    p = run_bin("threads", url, "--json", env=env or env_with(), timeout=60)
    took = time.monotonic() - t0
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    r.check(what, "a non-zero exit", p.returncode != 0, str(p.returncode))
    r.check(what, "one line on stderr", len(lines) == 1, p.stderr)
    r.check(what, f"says {pattern!r}", re.search(pattern, p.stderr, re.I) is not None, p.stderr.strip())
    r.check(what, f"within {CONNECT_LIMIT:.0f} s", took <= CONNECT_LIMIT, f"{took:.1f} s")
    for s in secrets:
        r.check(what, "the key is in no output", s not in p.stdout + p.stderr, "the key was printed")


@contextlib.contextmanager
def silent_server():
    """A TCP server that accepts every connection and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list = []
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(sock.accept()[0])

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        th.join(2)
        for c in held:
            c.close()
        sock.close()


@contextlib.contextmanager
def plain_http_server(tmp: pathlib.Path):
    """python -m http.server serving a directory."""
    (tmp / "www").mkdir(exist_ok=True)
    (tmp / "www" / "index.html").write_text("<h1>not LangGraph</h1>\n")
    port = drive.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp / "www")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1):
                    break
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def check_errors(r: Results, tmp: pathlib.Path) -> None:
    one_line_error(r, "unreachable", f"http://127.0.0.1:{drive.free_port()}",
                   r"(?=.*http://127\.0\.0\.1:\d+)(?=.*cannot reach)(?=.*connection refused)")
    with silent_server() as port:
        one_line_error(r, "hang", f"http://127.0.0.1:{port}", r"did not answer.* within")
    with plain_http_server(tmp) as port:
        one_line_error(r, "not LangGraph", f"http://127.0.0.1:{port}", r"is not a LangGraph Agent Server")


def check_auth(r: Results) -> None:
    srv = drive.start(auth=True)
    try:
        tid = drive.thread_id("auth-listed")
        c = srv.client()
        c.threads.create(thread_id=tid, metadata={"fixture": "auth-listed"})
        c.runs.wait(tid, "approval", input={"request": "a key", "log": []})
        key = srv.api_key
        one_line_error(r, "auth: no key", srv.url, r"needs (a password|an API key)|API key", secrets=(key,))
        one_line_error(r, "auth: wrong key", srv.url, r"refused the API key", env=env_with(LANGGRAPH_API_KEY=WRONG_KEY),
                       secrets=(key, WRONG_KEY))
        one_line_error(r, "auth: LANGGRAPH_API_KEY before LANGSMITH_API_KEY", srv.url, r"refused the API key",
                       env=env_with(LANGGRAPH_API_KEY=WRONG_KEY, LANGSMITH_API_KEY=key), secrets=(key, WRONG_KEY))
        for var in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY"):
            env = env_with(**{var: key})
            p = run_bin("threads", srv.url, "--json", env=env, timeout=60)
            listed = p.returncode == 0 and tid in [t["thread_id"] for t in json.loads(p.stdout)]
            r.check(f"auth: {var}=the key", "threads listed", listed, p.stderr.strip())
            r.check(f"auth: {var}=the key", "the key is in no output", key not in p.stdout + p.stderr)
            p = run_bin("state", srv.url, drive.thread_id("no-such-thread"), "--json", env=env, timeout=60)
            r.check(f"auth: {var}=the key", "a missing thread: not found (exit 3), the key not in it",
                    p.returncode == 3 and key not in p.stdout + p.stderr, f"{p.returncode} {p.stderr.strip()}")
    finally:
        srv.stop()
        shutil.rmtree(srv.workdir, ignore_errors=True)


# ---------------------------------------------------------------------------


def run(keep: bool = False) -> int:
    r = Results(verbose=False)
    t0 = time.monotonic()
    srv = drive.start()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="flashback-agentserver-"))
    try:
        client = srv.client()
        rec = drive.record(client, drive.run_scenario(client))
        print(f"info: scenario ran in {time.monotonic() - t0:.1f}s at {srv.url}", flush=True)
        code, _, err = cli("threads", srv.url, "--json")
        if code != 0 and UNKNOWN_LOCATION.search(err):
            print(f"skip agentserver: `flashback threads {srv.url}` does not know the location "
                  f"(exit {code}: {err.splitlines()[0] if err else ''})", flush=True)
            shutil.rmtree(tmp, ignore_errors=True)
            return 0
        threads = check_reads(r, srv.url, rec, "reads")
        if threads is not None:
            check_server_threads(r, threads, rec)
        check_plain(r, srv.url, rec)
        check_paging(r, srv.url, rec)
        check_diff(r, srv.url, rec)
        check_replay(r, srv.url, rec)
        check_watch(r, srv.url, rec)
        check_search(r, srv.url, rec)
        check_export(r, srv.url, rec, tmp)
        check_store(r, srv.url, rec)
        check_copy_fork(r, srv.url, client, rec)
        check_edit_fork(r, srv.url, client, rec)
        check_resume(r, srv.url, client, rec)
        check_empty_thread(r, srv.url, client)
        check_busy(r, srv.url, client, rec)
        check_copy(r, srv.url, client, rec)
    except BaseException:
        print(srv.log_text(), file=sys.stderr)
        raise
    finally:
        srv.stop()
        if not keep:
            shutil.rmtree(srv.workdir, ignore_errors=True)
        else:
            print(f"kept {srv.workdir}")
    try:
        check_errors(r, tmp)
        check_auth(r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish(r, t0)


def test_agentserver() -> None:
    """The same under pytest (`pytest tests/interop/agentserver_test.py`)."""
    assert run() == 0


if __name__ == "__main__":
    sys.exit(main(run))
