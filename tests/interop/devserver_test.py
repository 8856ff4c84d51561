#!/usr/bin/env python3
"""Interop test: the `langgraph dev` server's state folder (`.langgraph_api/`, the pickles of
langgraph-runtime-inmem) read by Flashback as the server itself shows it, and a Flashback fork
written into it that the restarted server resumes as its own time travel.

One real server (`langgraph dev --no-browser --no-reload`, tests/devserver/drive.py) runs the
scenario of drive.py (tools, a failed run, an interrupt waiting and one resumed, a Send
fan-out into a subgraph, an update_state fork, a Store item, thread metadata), its answers are
recorded over HTTP (threads.get_history / get_state / runs.list ...), then it is stopped with
SIGINT so that it writes its pickles. Then:

  1. python    LangGraph's own InMemorySaver over the folder (PersistentDict, as the server
               loads it) and the project's graphs: get_state_history of every thread and
               subgraph namespace == the server's answers (ids in order, parent, metadata,
               next, values, tasks and interrupts). This proves the folder holds what the
               server showed, and checks this test's comparisons without Flashback.
  2. flashback `flashback threads DIR --json` lists the server's threads (statuses as the
               server's), `flashback history DIR T [--ns NS] --json` has the server's
               checkpoints (ids in order, parents, metadata), and `flashback state DIR T
               --ns NS --checkpoint C --json` every checkpoint's values, next, interrupts
               and failed tasks as the server's history shows them (values compared in the
               API's JSON form: the JSON view's `$type` markers dropped; serverreads.py, shared
               with agentserver_test.py, which reads the running server's URL).
  3. fork      `flashback fork DIR chat-fork --checkpoint X --set messages=...` (X: the
               checkpoint waiting on `tools`; the AIMessage's tool call edited to Lima), the
               server restarted on the folder: threads.get_history lists the fork, and
               runs.wait(checkpoint_id=<fork>, input=None) ends with the values LangGraph's
               own time travel gives (threads.update_state(checkpoint_id=X) with the same
               message as `model`, then runs.wait from it), ToolMessage ids masked.

Until Flashback reads this format, parts 2 and 3's Flashback half are skipped with one line
when `flashback threads DIR` answers that the location is not a database ("is a directory,
not a regular file" / "is not a SQLite database"); part 1 and the restarted server's own time travel always run.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/devserver_test.py [--keep]
   or: FLASHBACK_BIN=... pytest tests/interop/devserver_test.py   (one test, test_devserver)
Prints one line per check and finally `N passed, M failed`; exits 1 on failure. ~20 s
(tests/interop/run.sh runs it after the SQLite suites).
"""

from __future__ import annotations

import copy
import json
import pathlib
import re
import shutil
import sys
import time

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "devserver"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))

import drive  # noqa: E402
from jsonview import view  # noqa: E402
from results import Results  # noqa: E402
from serverreads import api_form, cfg, check_reads, finish, flashback, interrupts_of, main, mask, namespaces  # noqa: E402

# What `flashback threads DIR` says for a folder before the .langgraph_api reader exists: a
# SQLite location that is a directory ("X is a directory, not a regular file", exit 2, from
# location::ensure_regular_file; or "X is not a SQLite database (it is a directory)", exit 4).
NOT_A_DATABASE = re.compile(r"is a directory, not a regular file|is not a (SQLite |LangGraph )?database", re.I)


# ---------------------------------------------------------------------------
# 1. LangGraph's own saver over the folder
# ---------------------------------------------------------------------------


def check_python(r: Results, state_dir: pathlib.Path, rec: dict) -> None:
    graphs = drive.python_graphs(drive.python_saver(state_dir))
    for name, t in rec["threads"].items():
        g = graphs[t["thread"]["metadata"]["graph_id"]]
        for ns, server in namespaces(t):
            where = f"python {name}" + (f" {ns.split(':')[0]}" if ns else "")
            py = list(g.get_state_history(cfg(t["thread_id"], ns)))
            r.check(where, f"history ids in order ({len(server)})",
                    [s.config["configurable"]["checkpoint_id"] for s in py] == [s["checkpoint_id"] for s in server],
                    f"{len(py)} vs {len(server)}")
            for snap, want in zip(py, server):
                at = f"{where} step {want['metadata'].get('step')}"
                parent = (snap.parent_config or {}).get("configurable", {}).get("checkpoint_id")
                ok = (parent == want["parent_checkpoint_id"] and snap.metadata == want["metadata"]
                      and list(snap.next) == want["next"])
                r.check(at, "parent, metadata, next as the server's", ok,
                        f"{parent} {list(snap.next)} vs {want['parent_checkpoint_id']} {want['next']}")
                vals = api_form(json.loads(json.dumps(view(snap.values))))
                r.check(at, "values as the server's", vals == want["values"], f"{vals}\n       vs {want['values']}")
                tasks = [{"name": x.name, "interrupts": [api_form(view(i)) for i in x.interrupts], "error": x.error}
                         for x in snap.tasks]
                ok = ([x["name"] for x in tasks] == [x["name"] for x in want["tasks"]]
                      and interrupts_of(tasks) == interrupts_of(want["tasks"])
                      and [bool(x["error"]) for x in tasks] == [bool(x["error"]) for x in want["tasks"]])
                r.check(at, "tasks, interrupts, errors as the server's", ok, f"{tasks} vs {want['tasks']}")


# ---------------------------------------------------------------------------
# 2. Flashback
# ---------------------------------------------------------------------------


def check_flashback(r: Results, d: str, rec: dict) -> None:
    check_reads(r, d, rec)


# ---------------------------------------------------------------------------
# 3. The fork, resumed by the restarted server
# ---------------------------------------------------------------------------


def edited_messages(state_dir: pathlib.Path, rec: dict, city: str) -> tuple[str, list, dict]:
    """X (chat-fork's checkpoint waiting on tools), X's messages in the JSON view with the last
    AIMessage's tool call sent to `city`, and that AIMessage in the API's form."""
    t = rec["threads"]["chat-fork"]
    x = rec["scenario"]["fork"]["source_checkpoint_id"]
    g = drive.python_graphs(drive.python_saver(state_dir))["chat"]
    snap = g.get_state({"configurable": {"thread_id": t["thread_id"], "checkpoint_id": x}})
    msgs = json.loads(json.dumps(view(snap.values["messages"])))
    ai = msgs[-1]
    ai["tool_calls"] = [dict(ai["tool_calls"][0], args={"city": city})]
    return x, msgs, drive.api_message(api_form(copy.deepcopy(ai)))


def check_restart(r: Results, srv: drive.Server, state_dir: pathlib.Path, rec: dict, with_flashback: bool) -> None:
    t = rec["threads"]["chat-fork"]
    tid = t["thread_id"]
    x, msgs, ai = edited_messages(state_dir, rec, "Lima")
    fork_id = None
    if with_flashback:
        code, fork, err = flashback("fork", str(state_dir), tid, "--checkpoint", x,
                                    "--set", "messages=" + json.dumps(msgs), "--json")
        if r.check("fork", "flashback fork --set messages=... (tool call to Lima)", code == 0, err):
            fork_id = fork["checkpoint_id"]
    restarted = drive.start(srv.workdir)
    try:
        c = restarted.client()
        ids = {th["thread_id"] for th in c.threads.search(limit=100)}
        r.check("restart", "the server reloads every thread", ids >= {th["thread_id"] for th in rec["threads"].values()})
        hist = c.threads.get_history(tid, limit=1000)
        known = [s["checkpoint_id"] for s in t["history"]]
        r.check("restart", "the server's history of chat-fork as before (plus the fork)",
                [s["checkpoint_id"] for s in hist if s["checkpoint_id"] != fork_id] == known)
        if fork_id is not None:
            r.check("fork", "threads.get_history lists the fork", fork_id in [s["checkpoint_id"] for s in hist])
            a = c.runs.wait(tid, "chat", input=None, checkpoint_id=fork_id)
        # LangGraph's own time travel: update_state at X with the same message, then a run.
        upd = c.threads.update_state(tid, {"messages": [ai]}, as_node="model", checkpoint_id=x)
        b = c.runs.wait(tid, "chat", input=None, checkpoint_id=upd["checkpoint"]["checkpoint_id"])
        last = (b.get("messages") or [{}])[-1]
        r.check("restart", "LangGraph's time travel from X finishes (tool called for Lima)",
                last.get("content") == "The tool said: It is sunny in Lima, 21 C.", str(last))
        if fork_id is not None:
            r.check("fork", "runs.wait from the fork == LangGraph's time travel", mask(a) == mask(b),
                    f"{mask(a)}\n       vs {mask(b)}")
    finally:
        restarted.stop()


def run(keep: bool = False) -> int:
    r = Results(verbose=False)
    t0 = time.monotonic()
    srv = drive.start()
    try:
        client = srv.client()
        rec = drive.record(client, drive.run_scenario(client))
        # While the server runs, Flashback says so (and that its files are a snapshot).
        code, _, err = flashback("threads", str(srv.workdir), "--json")
        r.check("running", "flashback threads on a running server's folder answers",
                code == 0 or NOT_A_DATABASE.search(err) is not None, err)
        if code == 0:
            r.check("running", "the running server is said on stderr",
                    "a langgraph dev server is running on this folder" in err, err)
    except BaseException:
        srv.stop()
        print(srv.log_text(), file=sys.stderr)
        raise
    state_dir = srv.stop()
    print(f"info: scenario ran and the server stopped in {time.monotonic() - t0:.1f}s; {state_dir}", flush=True)
    try:
        present = sorted(p.name for p in state_dir.iterdir())
        r.check("server", "SIGINT left the seven files", present == sorted(drive.FILES), str(present))
        check_python(r, state_dir, rec)

        code, _, err = flashback("threads", str(state_dir), "--json")
        with_flashback = not (code != 0 and NOT_A_DATABASE.search(err))
        if not with_flashback:
            print(f"skip flashback: `flashback threads {state_dir}` says it is not a database "
                  f"(exit {code}: {err.splitlines()[0] if err else ''}); the .langgraph_api reader is not there yet",
                  flush=True)
        else:
            check_flashback(r, str(state_dir), rec)
        check_restart(r, srv, state_dir, rec, with_flashback)
    finally:
        if not keep:
            shutil.rmtree(srv.workdir, ignore_errors=True)
        else:
            print(f"kept {srv.workdir}")
    return finish(r, t0)


def test_devserver() -> None:
    """The same under pytest (`pytest tests/interop/devserver_test.py`)."""
    assert run() == 0


if __name__ == "__main__":
    sys.exit(main(run))
