"""What each step did, as `flashback graph` shows it beside every checkpoint, against what
Python's `graph.get_state_history()` says, on threads written by the real LangGraph:

* `flaky-1`: a node raises, the run fails, `invoke(None)` runs it again and it finishes; the
  checkpoint before it is marked `recovered` ("raised, then recovered on retry"), and
  `flashback state` labels the failed attempt beside its retry's output;
* `broken`: a node raises and nothing recovers (`failed`, the thread's status);
* `approval`: an `interrupt()` answered with `Command(resume=…)` (`resumed`), and one still
  waiting (`interrupted`);
* `fanout`: a `Send` fan-out (three `Send` tasks), then the join;
* `usage`: chat-model replies carrying `usage_metadata`: each step's tokens in the graph equal
  the sum over the messages that step added, as Python's snapshots show them.

Then, on `approval-waiting`: *Resume with…* (`rerun --resume JSON`: the runner gets the value
in `FLASHBACK_RESUME` and resumes with `Command(resume=…)`; Python's state shows the node got
it), a runner that fails (its fork is removed again with `delete-branch`, after which Python's
history is what it was), `activity` and the `threads` table's ↻ mark for retried errors.

For every checkpoint: `ran` (the nodes whose step made it) equals the names of the parent
snapshot's tasks (a `Send` task by its target), and `marks` equal what its own snapshot's tasks
say (error with or without a result, interrupts with or without a result). Also: the human
`threads` and `history` fit 100 columns, `--wide` shows full ids, and `state` shows messages
as readable lines.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/activity_test.py [--pg URL] [--no-sqlite]
       python tests/interop/activity_test.py --make PATH   (only write the threads to a new SQLite
                                                           file, for ui/e2e)
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from results import Results  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN") or str(
    pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "flashback"
)


class State(TypedDict):
    n: int
    items: Annotated[list, operator.add]
    messages: Annotated[list, add_messages]


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def run_flaky(saver) -> dict:
    calls = {"k": 0}

    def first(s):
        return {"n": s["n"] + 1, "messages": [HumanMessage(content="fetch the report", id="h-1")]}

    def flaky(s):
        calls["k"] += 1
        if calls["k"] == 1:
            raise RuntimeError("upstream timed out (attempt 1)")
        reply = AIMessage(content="Here is the report.", id="a-1",
                          usage_metadata={"input_tokens": 120, "output_tokens": 30, "total_tokens": 150})
        return {"n": s["n"] * 10, "messages": [reply]}

    g = StateGraph(State)
    g.add_node("first", first)
    g.add_node("flaky", flaky)
    g.add_edge(START, "first")
    g.add_edge("first", "flaky")
    g.add_edge("flaky", END)
    app = g.compile(checkpointer=saver)
    try:
        app.invoke({"n": 1, "items": [], "messages": []}, cfg("flaky-1"))
    except RuntimeError:
        pass
    app.invoke(None, cfg("flaky-1"))

    def broken(s):
        raise ValueError("no route to the payment service")

    b = StateGraph(State)
    b.add_node("first", first)
    b.add_node("broken", broken)
    b.add_edge(START, "first")
    b.add_edge("first", "broken")
    b.add_edge("broken", END)
    b_app = b.compile(checkpointer=saver)
    try:
        b_app.invoke({"n": 1, "items": [], "messages": []}, cfg("broken"))
    except ValueError:
        pass
    return {"flaky-1": app, "broken": b_app}


def approval_graph(saver):
    def ask(s):
        answer = interrupt({"question": "Approve the refund?", "amount": 42.5})
        return {"items": [f"answer: {answer}"]}

    def done(s):
        return {"n": s["n"] + 1}

    g = StateGraph(State)
    g.add_node("ask", ask)
    g.add_node("done", done)
    g.add_edge(START, "ask")
    g.add_edge("ask", "done")
    g.add_edge("done", END)
    return g.compile(checkpointer=saver)


def run_approval(saver) -> dict:
    app = approval_graph(saver)
    app.invoke({"n": 0, "items": [], "messages": []}, cfg("approval"))
    app.invoke(Command(resume="yes"), cfg("approval"))
    app.invoke({"n": 0, "items": [], "messages": []}, cfg("approval-waiting"))
    return {"approval": app, "approval-waiting": app}


def run_fanout(saver) -> dict:
    def plan(s):
        return {"n": 3}

    def route(s):
        return [Send("work", {"n": i, "items": [], "messages": []}) for i in range(s["n"])]

    def work(s):
        return {"items": [s["n"] * 2]}

    def join(s):
        return {"n": len(s["items"])}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_node("join", join)
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", route, ["work"])
    g.add_edge("work", "join")
    g.add_edge("join", END)
    app = g.compile(checkpointer=saver)
    app.invoke({"n": 0, "items": [], "messages": []}, cfg("fanout"))
    return {"fanout": app}


def run_usage(saver) -> dict:
    def usage(i, o):
        return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}

    def plan(s):
        return {"messages": [AIMessage(content="Plan: look it up.", id="u-1", usage_metadata=usage(300, 40)),
                             AIMessage(content="Then answer.", id="u-2", usage_metadata=usage(20, 5))]}

    def answer(s):
        return {"messages": [AIMessage(content="It is 42.", id="u-3", usage_metadata=usage(1000, 234))]}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("answer", answer)
    g.add_edge(START, "plan")
    g.add_edge("plan", "answer")
    g.add_edge("answer", END)
    app = g.compile(checkpointer=saver)
    app.invoke({"n": 0, "items": [], "messages": [HumanMessage(content="what is it?", id="q-1")]}, cfg("usage"))
    return {"usage": app}


def run_all(saver) -> dict:
    """Every thread, written through `saver`: the compiled graph of each (which reads its history)."""
    apps = {}
    for run in (run_flaky, run_approval, run_fanout, run_usage):
        apps.update(run(saver))
    return apps


def flashback(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def expected(app_history) -> dict:
    """(ran, marks) per checkpoint id, from Python's snapshots (newest first). A mark sits on
    the row of the node it is about: a task that failed or waits on the checkpoint whose next
    step it is (no later row exists); one that recovered or was resumed on the row its step
    made."""
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in app_history}
    made = {s.parent_config["configurable"]["checkpoint_id"] for s in by_id.values()
            if s.parent_config and s.metadata.get("source") == "loop"}

    def marks_of(s, done: bool) -> set:
        out = set()
        for t in s.tasks:
            has_result = t.result is not None
            if t.error is not None and has_result == done:
                out.add("recovered" if done else "failed")
            elif t.error is None and t.interrupts and has_result == done:
                out.add("resumed" if done else "interrupted")
        return out

    out = {}
    for cid, s in by_id.items():
        marks = marks_of(s, False)
        if cid not in made:
            marks |= marks_of(s, True)
        ran = []
        parent = s.parent_config and by_id.get(s.parent_config["configurable"]["checkpoint_id"])
        if parent and s.metadata.get("source") == "loop":
            ran = sorted(t.name for t in parent.tasks)
            marks |= marks_of(parent, True)
        out[cid] = (ran, sorted(marks))
    return out


def expected_tokens(app_history) -> dict:
    """Per loop checkpoint: the usage summed over the messages its step added (by id)."""
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in app_history}
    out = {}
    for cid, s in by_id.items():
        parent = s.parent_config and by_id.get(s.parent_config["configurable"]["checkpoint_id"])
        if not parent or s.metadata.get("source") != "loop":
            continue
        before = {m.id for m in parent.values.get("messages", [])}
        new = [m for m in s.values.get("messages", []) if m.id not in before and getattr(m, "usage_metadata", None)]
        if new:
            u = [m.usage_metadata for m in new]
            out[cid] = {"input": sum(x["input_tokens"] for x in u), "output": sum(x["output_tokens"] for x in u),
                        "total": sum(x["total_tokens"] for x in u), "messages": len(u),
                        "cached": sum((x.get("input_token_details") or {}).get("cache_read", 0) for x in u),
                        "reasoning": sum((x.get("output_token_details") or {}).get("reasoning", 0) for x in u)}
    return out


def check_threads(r: Results, where: str, db: str, apps: dict) -> None:
    # Each thread's history as its own graph shows it (Python derives tasks from the graph).
    for thread, reader in apps.items():
        p = flashback("graph", db, thread, "--json")
        if not r.check(where, f"{thread}: graph --json exits 0", p.returncode == 0, p.stderr[-500:]):
            continue
        rows = {row["id"]: row for row in json.loads(p.stdout)["rows"] if row["ns"] == ""}
        want = expected(list(reader.get_state_history(cfg(thread))))
        got = {cid: (sorted(row["ran"]), sorted(row["marks"])) for cid, row in rows.items()}
        r.check(where, f"{thread}: ran and marks of every checkpoint are Python's", got == want,
                json.dumps({"flashback": got, "python": want}, indent=1)[:3000])

    # Token usage per step, from the messages' usage_metadata.
    for thread in ("usage", "flaky-1", "fanout"):
        rows = json.loads(flashback("graph", db, thread, "--json").stdout)["rows"]
        got = {row["id"]: row["tokens"] for row in rows if row["tokens"] is not None}
        want = expected_tokens(list(apps[thread].get_state_history(cfg(thread))))
        r.check(where, f"{thread}: each step's tokens are the usage of the messages it added", got == want,
                json.dumps({"flashback": got, "python": want}))
    text = flashback("graph", db, "usage").stdout
    r.check(where, "graph (text) shows a step's tokens", "1234 tokens (1000 in, 234 out)" in text, text)
    usage_rows = json.loads(flashback("graph", db, "usage", "--json").stdout)["rows"]
    r.check(where, "usage: two steps used tokens (365, then 1234)",
            sorted(row["tokens"]["total"] for row in usage_rows if row["tokens"]) == [365, 1234],
            json.dumps([row["tokens"] for row in usage_rows]))

    marks = {row["id"]: row["marks"] for row in json.loads(flashback("graph", db, "flaky-1", "--json").stdout)["rows"]}
    r.check(where, "flaky-1: exactly one checkpoint is marked recovered",
            sorted(m for ms in marks.values() for m in ms) == ["recovered"], json.dumps(marks))
    text = flashback("graph", db, "flaky-1").stdout
    r.check(where, "graph (text) names the nodes and the retry", "flaky" in text and "recovered on retry" in text, text)
    fan = flashback("graph", db, "fanout").stdout
    r.check(where, "graph (text) names the fan-out's Sends by their target",
            "Send" not in fan and "×3" in fan and "join" in fan, fan)

    # The row of the retried node is marked; the checkpoint whose next step raised and then
    # recovered (its parent): its detail.
    rows = {row["id"]: row for row in json.loads(flashback("graph", db, "flaky-1", "--json").stdout)["rows"]}
    marked = next(cid for cid, ms in marks.items() if "recovered" in ms)
    r.check(where, "flaky-1: the recovered mark names flaky, on the row flaky made",
            rows[marked]["mark_nodes"] == ["flaky"] and "flaky" in rows[marked]["ran"], json.dumps(rows[marked]))
    recovered = rows[marked]["parent_id"]
    state = flashback("state", db, "flaky-1", "--checkpoint", recovered)
    r.check(where, "state labels the failed attempt beside its retry",
            "raised, then recovered on retry: RuntimeError" in state.stdout, state.stdout)
    detail = json.loads(flashback("state", db, "flaky-1", "--checkpoint", recovered, "--json").stdout)
    task = detail["tasks"]["tasks"][0]
    r.check(where, "its task's status is recovered, with its error and its retry's writes",
            task["status"] == "recovered" and "upstream timed out" in json.dumps(task["error"]) and task["writes"],
            json.dumps(task)[:1000])

    # Thread statuses: a retry that recovered is not a failure.
    threads = {t["thread_id"]: t for t in json.loads(flashback("threads", db, "--json").stdout)}
    r.check(where, "threads: flaky-1 finished, broken failed, approval-waiting interrupted",
            (threads["flaky-1"]["status"], threads["broken"]["status"], threads["approval-waiting"]["status"])
            == ("finished", "failed", "interrupted"), json.dumps(threads)[:1500])

    # The human tables fit 100 columns; --wide shows every id in full.
    full_ids = {"threads": threads["flaky-1"]["latest_checkpoint_id"], "history": recovered}
    for args in (["threads", db], ["history", db, "flaky-1"]):
        out = flashback(*args).stdout
        r.check(where, f"{args[0]} fits 100 columns", all(len(line) <= 100 for line in out.splitlines()), out)
        wide = flashback(*args, "--wide").stdout
        r.check(where, f"{args[0]} --wide shows full ids", full_ids[args[0]] in wide, wide)
    latest = flashback("state", db, "flaky-1").stdout
    r.check(where, "state shows messages as lines", "human      fetch the report" in latest
            and "ai         Here is the report." in latest, latest)
    waiting = flashback("state", db, "approval-waiting").stdout
    r.check(where, "state shows a waiting interrupt in full", '"question": "Approve the refund?"' in waiting
            and '"amount": 42.5' in waiting, waiting)

    # Retried errors in the whole history: `activity`, and the ↻ mark of the threads table.
    activity = {a["thread_id"]: a["recovered"] for a in json.loads(flashback("activity", db, "--json").stdout)}
    r.check(where, "activity: flaky-1 recovered from an error in flaky, no other thread did",
            activity.get("flaky-1") == ["flaky"] and all(not v for k, v in activity.items() if k != "flaky-1"),
            json.dumps(activity))
    table = flashback("threads", db).stdout
    flaky_line = next((line for line in table.splitlines() if line.startswith("flaky-1 ")), "")
    r.check(where, "threads marks flaky-1 finished ↻ and says why",
            "finished ↻" in flaky_line and "↻ flaky-1: raised, then recovered on retry (flaky)" in table, table)

    check_resume(r, where, db, apps["approval-waiting"])


def resume_runner() -> int:
    """The runner `rerun --resume` starts: the approval graph on FLASHBACK_DB, resumed with
    `Command(resume=…)` from FLASHBACK_RESUME (or plainly when it is not set)."""
    db = os.environ["FLASHBACK_DB"]
    config = json.loads(os.environ["FLASHBACK_CONFIG"])
    resume = os.environ.get("FLASHBACK_RESUME")
    arg = Command(resume=json.loads(resume)) if resume is not None else None
    if db.startswith("postgres"):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(db) as saver:
            approval_graph(saver).invoke(arg, config)
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver

        approval_graph(SqliteSaver(sqlite3.connect(db, check_same_thread=False))).invoke(arg, config)
    print("resumed with", resume, flush=True)
    return 0


def check_resume(r: Results, where: str, db: str, app) -> None:
    thread = "approval-waiting"
    ids = lambda: [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(cfg(thread))]  # noqa: E731
    before = ids()
    head = before[0]
    # A runner that fails: its fork stays, and `delete-branch` (the app's "Remove the fork") removes it.
    p = flashback("rerun", db, thread, "--checkpoint", head, "--runner", "echo failing; exit 3", "--timeout", "60")
    hint = next((line for line in p.stderr.splitlines() if "flashback delete-branch" in line), "")
    r.check(where, "a failed re-run exits non-zero and says how to remove its fork", p.returncode != 0 and hint, p.stderr)
    fork = hint.split()[-2] if hint else ""
    r.check(where, "the fork is there, on top of the interrupted head", ids()[0] == fork and ids()[1:] == before, str(ids()))
    dry = flashback("delete-branch", db, thread, fork, "--json")
    r.check(where, "delete-branch previews the fork alone", dry.returncode == 0
            and [c["checkpoint_id"] for c in json.loads(dry.stdout)["checkpoints"]] == [fork], dry.stdout + dry.stderr)
    gone = flashback("delete-branch", db, thread, fork, "--yes")
    r.check(where, "delete-branch --yes removes it: Python's history is what it was", gone.returncode == 0 and ids() == before,
            gone.stdout + gone.stderr)
    refused = flashback("delete-branch", db, thread, before[-1], "--yes")
    r.check(where, "delete-branch refuses the thread's first checkpoint (exit 2)", refused.returncode == 2
            and "delete the thread" in refused.stderr, refused.stderr)

    # Resume with…: the runner resumes the waiting interrupt with the value given.
    answer = {"approved": True, "note": "refund ok"}
    runner = f"{sys.executable} {pathlib.Path(__file__).resolve()} --resume-runner"
    p = flashback("rerun", db, thread, "--checkpoint", head, "--runner", runner, "--resume", json.dumps(answer))
    r.check(where, "rerun --resume exits 0", p.returncode == 0, p.stdout + p.stderr)
    state = app.get_state(cfg(thread))
    r.check(where, "Python's state: the node got the resume value and the run finished",
            state.values["items"] == [f"answer: {answer}"] and state.values["n"] == 1 and not state.next,
            repr(state.values) + repr(state.next))
    bad = flashback("rerun", db, thread, "--checkpoint", head, "--runner", "true", "--resume", "yes please")
    r.check(where, "rerun --resume with text that is not JSON is refused (exit 2)", bad.returncode == 2
            and "--resume" in bad.stderr, bad.stderr)


def make_sqlite(db: str):
    """The threads, written to a new SQLite file by the real SqliteSaver (their graphs returned)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    saver.setup()
    return run_all(saver)


def sqlite_part(r: Results) -> None:
    db = str(pathlib.Path(tempfile.mkdtemp(prefix="flashback-activity-")) / "activity.sqlite")
    check_threads(r, "sqlite", db, make_sqlite(db))


def postgres_part(r: Results, url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        check_threads(r, "postgres", url, run_all(saver))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="an empty Postgres database")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--make", metavar="PATH", help="only write the threads to a new SQLite file (for the UI tests)")
    ap.add_argument("--resume-runner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.resume_runner:
        return resume_runner()
    if args.make:
        make_sqlite(args.make)
        return 0
    r = Results(verbose=True)
    if not args.no_sqlite:
        sqlite_part(r)
    if args.pg:
        postgres_part(r, args.pg)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
