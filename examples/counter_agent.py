"""A small LangGraph program to try `flashback rerun` with.

    python examples/counter_agent.py --init DB THREAD   # run the graph once: a thread to debug
    flashback rerun DB THREAD --checkpoint ID --runner 'python examples/counter_agent.py'

As a runner it reads what Flashback puts in its environment (FLASHBACK_DB,
FLASHBACK_CONFIG) and resumes the graph from the thread's head — the fork Flashback just
wrote — with `graph.invoke(None, config)`, exactly as a real agent would after time travel.
DB is a .sqlite path or a postgres:// URL.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import sqlite3
import sys
import time
from contextlib import contextmanager
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    count: int
    log: Annotated[list, operator.add]


def build(checkpointer, delay: float = 0.0):
    def bump(state: State):
        time.sleep(delay)  # so a live tail has something to show
        n = state.get("count", 0) + 1
        return {"count": n, "log": [f"bump {n}"]}

    def route(state: State):
        return "bump" if state.get("count", 0) < 5 else END

    g = StateGraph(State)
    g.add_node("bump", bump)
    g.add_edge(START, "bump")
    g.add_conditional_edges("bump", route)
    return g.compile(checkpointer=checkpointer)


@contextmanager
def saver(db: str):
    if db.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(db) as s:
            s.setup()
            yield s
    else:
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--init", nargs=2, metavar=("DB", "THREAD"), help="create a thread by running the graph once")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds each step takes")
    args = ap.parse_args()
    if args.init:
        db, thread = args.init
        with saver(db) as s:
            out = build(s).invoke({"count": 0, "log": ["start"]}, {"configurable": {"thread_id": thread}})
        print(json.dumps(out))
        return 0
    db = os.environ.get("FLASHBACK_DB")
    config = os.environ.get("FLASHBACK_CONFIG")
    if not db or not config:
        print("counter_agent.py: run me through `flashback rerun`, or use --init", file=sys.stderr)
        return 2
    with saver(db) as s:
        out = build(s, args.delay).invoke(None, json.loads(config))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
