#!/usr/bin/env python3
"""Interop test: DeltaChannel values as the graph sees them.

Real LangGraph graphs whose state uses `DeltaChannel` are run on the official saver (SQLite
always; Postgres with --pg URL of an empty database). Then, for every checkpoint of every
thread and namespace, `flashback state --json` must show the values Python's
`graph.get_state(config).values` shows (the JSON view of docs/json-view.md), with the rebuilt
channels' provenance; and Flashback's forks of such threads must resume in Python with the
right values.

Threads:
  chat        messages (the batch `add_messages` reducer, snapshot every 4) with a replacement
              and a RemoveMessage, a log list (append, snapshot every 3), an int; then an
              update_state on the head and one on an older checkpoint (a fork branch).
  freq        snapshot_frequency=1 (a list) and the default 1000 (a dict with a merge reducer).
  custom      a list channel whose reducer keeps only the last write (not what inference
              guesses): every value is either right or shown as an error, and with
              --reducer items=last every value is right.
  sub         a subgraph whose own state has a DeltaChannel (checkpoints in its namespace).
  long        80 steps, snapshot every 5 (many snapshots crossed).
  fork-a/b    the same chat twice: a Flashback copy fork of a mid checkpoint of fork-a against
              LangGraph's own time travel from the same step of fork-b, both then continued;
              and a Flashback edit fork of fork-a's log against update_state(Overwrite(...)).

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/delta_test.py [--pg URL]
       python tests/interop/delta_test.py --make PATH   (the chat thread only, for ui/e2e)
Prints one line per check and finally `N passed, M failed`; exits 1 on failure.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
from typing import Annotated, Any, Optional, TypedDict

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

from jsonview import view  # noqa: E402
from results import Results  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage  # noqa: E402
from langgraph.channels.delta import DeltaChannel  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import _messages_delta_reducer  # noqa: E402
from langgraph.types import Overwrite  # noqa: E402

BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))


def cfg(tid: str, **extra: Any) -> dict:
    return {"configurable": {"thread_id": tid, **extra}}


# ---------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------


def append_reducer(state: list, writes: list) -> list:
    out = list(state)
    for w in writes:
        if isinstance(w, list):
            out.extend(w)
        else:
            out.append(w)
    return out


def merge_reducer(state: dict, writes: list) -> dict:
    out = dict(state)
    for w in writes:
        out.update(w)
    return out


def last_reducer(state: list, writes: list) -> list:
    return list(writes[-1]) if writes else state


class ChatState(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=4)]
    log: Annotated[list, DeltaChannel(append_reducer, snapshot_frequency=3)]
    n: int


def build_chat(saver, turns: int = 9):
    def step(s: ChatState) -> dict:
        n = s.get("n", 0) + 1
        out: dict = {"n": n, "log": [f"step {n}"], "messages": [AIMessage(content=f"answer {n}", id=f"ai-{n}")]}
        if n == 4:
            out["messages"] = [RemoveMessage(id="ai-2"), AIMessage(content="answer 1, edited", id="ai-1")]
        if n == 6:
            out["log"] = "six"  # a non-list write is appended as one item
        return out

    def route(s: ChatState) -> str:
        return "step" if s["n"] < turns else END

    b = StateGraph(ChatState)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", route)
    return b.compile(checkpointer=saver)


def run_chat(g, tid: str, forks: bool = True) -> None:
    g.invoke({"messages": [HumanMessage(content="hi", id="h-1")], "log": ["start"], "n": 0}, cfg(tid))
    if not forks:
        return
    g.update_state(cfg(tid), {"messages": [HumanMessage(content="and then?", id="h-2")]}, as_node="step")
    history = list(g.get_state_history(cfg(tid)))
    old = next(s for s in history if s.metadata.get("step") == 3)
    g.update_state(old.config, {"log": ["fork"], "messages": [HumanMessage(content="fork", id="h-f")]}, as_node="step")


class FreqState(TypedDict):
    every: Annotated[list, DeltaChannel(append_reducer, snapshot_frequency=1)]
    seen: Annotated[dict, DeltaChannel(merge_reducer)]
    n: int


def build_freq(saver):
    def step(s: FreqState) -> dict:
        n = s.get("n", 0) + 1
        return {"n": n, "every": [n, n * 10], "seen": {f"k{n % 3}": n}}

    b = StateGraph(FreqState)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: "step" if s["n"] < 7 else END)
    return b.compile(checkpointer=saver)


class CustomState(TypedDict):
    items: Annotated[list, DeltaChannel(last_reducer, snapshot_frequency=3)]
    n: int


def build_custom(saver):
    def step(s: CustomState) -> dict:
        n = s.get("n", 0) + 1
        return {"n": n, "items": [f"only {n}"]}

    b = StateGraph(CustomState)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: "step" if s["n"] < 8 else END)
    return b.compile(checkpointer=saver)


class SubState(TypedDict):
    notes: Annotated[list, DeltaChannel(append_reducer, snapshot_frequency=2)]
    k: int


class ParentState(TypedDict):
    topic: str
    k: int


def build_sub(saver):
    def note(s: SubState) -> dict:
        k = s.get("k", 0) + 1
        return {"k": k, "notes": [f"note {k}"]}

    sb = StateGraph(SubState)
    sb.add_node("note", note)
    sb.add_edge(START, "note")
    sb.add_conditional_edges("note", lambda s: "note" if s["k"] < 5 else END)
    sub = sb.compile()

    pb = StateGraph(ParentState)
    pb.add_node("sub", sub)
    pb.add_edge(START, "sub")
    pb.add_edge("sub", END)
    return pb.compile(checkpointer=saver)


class LongState(TypedDict):
    log: Annotated[list, DeltaChannel(append_reducer, snapshot_frequency=5)]
    n: int


def build_long(saver):
    def tick(s: LongState) -> dict:
        n = s.get("n", 0) + 1
        return {"n": n, "log": [n]}

    b = StateGraph(LongState)
    b.add_node("tick", tick)
    b.add_edge(START, "tick")
    b.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 80 else END)
    return b.compile(checkpointer=saver)


# ---------------------------------------------------------------------------
# Flashback
# ---------------------------------------------------------------------------


def flashback(*args: str) -> tuple[int, Any, str]:
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    out: Any = None
    if p.returncode == 0 and p.stdout.strip().startswith(("{", "[")):
        out = json.loads(p.stdout)
    return p.returncode, out, p.stderr.strip()


def state(db: str, tid: str, ns: str, cid: str, *extra: str) -> tuple[Optional[dict], str]:
    code, out, err = flashback("state", db, tid, "--ns", ns, "--checkpoint", cid, "--json", *extra)
    return (out if code == 0 else None), err


def checkpoints(saver, tid: str) -> list[tuple[str, str]]:
    return [
        (t.config["configurable"]["checkpoint_ns"], t.config["configurable"]["checkpoint_id"])
        for t in saver.list(cfg(tid))
    ]


def compare_thread(r: Results, where: str, db: str, saver, g, tid: str, delta: set[str]) -> None:
    """Every checkpoint (all namespaces): Flashback's values == Python's get_state values."""
    n = 0
    for ns, cid in checkpoints(saver, tid):
        py = view(g.get_state(cfg(tid, checkpoint_ns=ns, checkpoint_id=cid)).values)
        fb, err = state(db, tid, ns, cid)
        at = f"{where} {tid} {ns or 'root'} {cid[-8:]}"
        if not r.check(at, "flashback state --json", fb is not None, err):
            continue
        got = {k: fb["values"].get(k) for k in py}
        r.check(at, "values equal Python's get_state", got == py,
                f"python {json.dumps(py)[:600]}\n       flashback {json.dumps(got)[:600]}")
        for ch in delta & set(py):
            info = fb["rebuilt"].get(ch)
            r.check(at, f"{ch}: provenance", isinstance(info, dict) and "reducer" in info
                    and "writes" in info and not info.get("error"), json.dumps(info))
        n += 1
    r.note(f"ok   {where} {tid}: {n} checkpoints compared")


def check_custom(r: Results, where: str, db: str, saver, g) -> None:
    """Inference guesses append for `items`; where that contradicts a snapshot, the value is
    an error, never a wrong list; with --reducer items=last, every value is right."""
    errors = 0
    for ns, cid in checkpoints(saver, "custom"):
        py = view(g.get_state(cfg("custom", checkpoint_ns=ns, checkpoint_id=cid)).values)
        at = f"{where} custom {cid[-8:]}"
        fb, err = state(db, "custom", ns, cid)
        if not r.check(at, "state", fb is not None, err):
            continue
        info = fb["rebuilt"].get("items", {})
        if info.get("error"):
            errors += 1
        else:
            # No later snapshot contradicts it: right, or past the last snapshot.
            pass
        fb2, err = state(db, "custom", ns, cid, "--reducer", "items=last")
        if r.check(at, "state --reducer items=last", fb2 is not None, err):
            r.check(at, "with the right reducer the value equals Python's",
                    fb2["values"].get("items") == py.get("items"),
                    f"{fb2['values'].get('items')} vs {py.get('items')}")
            r.check(at, "the chosen reducer is reported", fb2["rebuilt"]["items"]["reducer"] == "last_value"
                    and fb2["rebuilt"]["items"]["inferred"] is False, json.dumps(fb2["rebuilt"]["items"]))
    r.check(f"{where} custom", "a replay that contradicts a snapshot is reported", errors > 0, f"{errors} errors")
    code, _, err = flashback("state", db, "custom", "--reducer", "items=sum", "--json")
    r.check(f"{where} custom", "an unknown reducer is one clear error", code != 0 and "unknown reducer" in err
            and len(err.splitlines()) == 1, err)
    code, raw, err = flashback("state", db, "custom", "--raw", "--json")
    r.check(f"{where} custom", "--raw shows the saver's view", code == 0 and raw["rebuilt"] == {}, err)
    r.note(f"ok   {where} custom: {errors} values withheld under the inferred reducer, all right with items=last")


def normalise(values: dict) -> dict:
    return json.loads(json.dumps(view(values)))


def check_forks(r: Results, where: str, db: str, saver, g) -> None:
    """fork-a: Flashback copy fork at step 5, then invoke; fork-b: time travel from step 5."""
    pick = lambda tid: next(s for s in g.get_state_history(cfg(tid)) if s.metadata.get("step") == 5)  # noqa: E731
    xa, xb = pick("fork-a"), pick("fork-b")
    xa_id = xa.config["configurable"]["checkpoint_id"]
    code, out, err = flashback("fork", db, "fork-a", "--checkpoint", xa_id, "--json")
    if not r.check(where, "flashback fork (copy) of a DeltaChannel thread", code == 0, err):
        return
    head = g.get_state(cfg("fork-a"))
    r.check(where, "Python reads the fork's values as the source's", normalise(head.values) == normalise(xa.values),
            f"{normalise(head.values)} vs {normalise(xa.values)}")
    a = g.invoke(None, cfg("fork-a"))
    b = g.invoke(None, xb.config)
    r.check(where, "resumed from the copy fork == resumed by LangGraph's time travel",
            normalise(a) == normalise(b), f"{normalise(a)}\n       vs {normalise(b)}")

    # Edit fork: a new log, then continue; against update_state(Overwrite) on fork-b.
    xa = pick("fork-a")
    xb = pick("fork-b")
    new_log = ["edited", "log"]
    code, out, err = flashback("fork", db, "fork-a", "--checkpoint", xa.config["configurable"]["checkpoint_id"],
                               "--set", f"log={json.dumps(new_log)}", "--json")
    if not r.check(where, "flashback fork --set log=… of a DeltaChannel thread", code == 0, err):
        return
    r.check(where, "Python reads the edited DeltaChannel", g.get_state(cfg("fork-a")).values.get("log") == new_log,
            str(g.get_state(cfg("fork-a")).values.get("log")))
    a = g.invoke(None, cfg("fork-a"))
    g.update_state(xb.config, {"log": Overwrite(new_log)})
    b = g.invoke(None, cfg("fork-b"))
    r.check(where, "resumed from the edit fork == resumed after update_state(Overwrite)",
            normalise(a) == normalise(b), f"{normalise(a)}\n       vs {normalise(b)}")
    r.note(f"ok   {where} forks: copy and edit forks of a DeltaChannel thread resumed by Python")


def check_prune(r: Results, where: str, db: str, saver, g) -> None:
    """keep_latest on a DeltaChannel thread keeps what the latest value needs."""
    before = normalise(g.get_state(cfg("long")).values)
    n_before = len(checkpoints(saver, "long"))
    code, out, err = flashback("prune", db, "long", "--strategy", "keep_latest", "--yes", "--json")
    if not r.check(where, "prune keep_latest of a DeltaChannel thread", code == 0, err):
        return
    n_after = len(checkpoints(saver, "long"))
    r.check(where, "prune removed the checkpoints the latest value does not need",
            0 < n_after < n_before, f"{n_before} -> {n_after}")
    after = normalise(g.get_state(cfg("long")).values)
    r.check(where, "Python reads the same latest values after the prune", after == before,
            f"{after}\n       vs {before}")
    r.note(f"ok   {where} prune: {n_before} -> {n_after} checkpoints, latest values intact")


# ---------------------------------------------------------------------------


def scenarios(r: Results, where: str, db: str, saver) -> None:
    chat = build_chat(saver)
    run_chat(chat, "chat")
    freq = build_freq(saver)
    freq.invoke({"n": 0, "every": [], "seen": {}}, cfg("freq"))
    custom = build_custom(saver)
    custom.invoke({"n": 0, "items": ["first"]}, cfg("custom"))
    sub = build_sub(saver)
    sub.invoke({"topic": "deltas", "k": 0}, cfg("sub"))
    long = build_long(saver)
    long.invoke({"n": 0, "log": []}, cfg("long"))
    for tid in ("fork-a", "fork-b"):
        run_chat(chat, tid, forks=False)

    compare_thread(r, where, db, saver, chat, "chat", {"messages", "log"})
    compare_thread(r, where, db, saver, freq, "freq", {"every", "seen"})
    compare_thread(r, where, db, saver, sub, "sub", {"notes"})
    compare_thread(r, where, db, saver, long, "long", {"log"})
    check_custom(r, where, db, saver, custom)
    check_forks(r, where, db, saver, chat)
    check_prune(r, where, db, saver, long)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="an empty Postgres database (its checkpoint tables are created)")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--make", metavar="PATH", help="only write the chat thread to a new SQLite file (for the UI tests)")
    args = ap.parse_args()
    if args.make:
        conn = sqlite3.connect(args.make, check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        run_chat(build_chat(saver), "chat")
        conn.close()
        return 0
    r = Results()
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "delta.sqlite")
            conn = sqlite3.connect(path, check_same_thread=False)
            saver = SqliteSaver(conn)
            saver.setup()
            scenarios(r, "sqlite", path, saver)
            conn.close()
    if args.pg:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(args.pg) as saver:
            saver.setup()
            scenarios(r, "postgres", args.pg, saver)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
