#!/usr/bin/env python3
"""Build and time a long DeltaChannel chat thread, for bench/delta.sh.

Build: a real graph on thread "delta" whose `messages` channel is
`Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=F)]` (default 1000,
LangGraph's default), one HumanMessage + AIMessage pair per step, until the thread has N
checkpoints. The thread is deleted first.

Time (--time): `list(graph.get_state_history(cfg))` with a fresh saver — every checkpoint
with its values rebuilt as the graph sees them — after one warm-up run, RUNS times; prints one
JSON line {"backend", "checkpoints", "seconds": [min, median, max]}.

    python bench/delta_thread.py --sqlite /tmp/delta.sqlite --checkpoints 2000
    python bench/delta_thread.py --sqlite /tmp/delta.sqlite --time
"""


import argparse
import json
import sqlite3
import statistics
import time
from typing import Annotated

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer
from typing_extensions import TypedDict

THREAD = "delta"


def build_graph(checkpointer, steps: int, frequency: int):
    class State(TypedDict, total=False):
        counter: int
        messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=frequency)]

    def step(state: State):
        n = state["counter"] + 1
        return {
            "counter": n,
            "messages": [
                HumanMessage(content=f"Question {n}: what is {n} squared? " + "context " * 20, id=f"h-{n}"),
                AIMessage(content=f"{n} squared is {n * n}. " + "because " * 20, id=f"a-{n}"),
            ],
        }

    b = StateGraph(State)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: "step" if s["counter"] < steps else END)
    return b.compile(checkpointer=checkpointer)


def saver_for(args):
    if args.sqlite:
        from langgraph.checkpoint.sqlite import SqliteSaver

        return "sqlite", lambda: SqliteSaver(sqlite3.connect(args.sqlite, check_same_thread=False))
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    def make():
        conn = Connection.connect(args.pg, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        return PostgresSaver(conn)

    return "postgres", make


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sqlite", metavar="PATH")
    ap.add_argument("--pg", metavar="URL")
    ap.add_argument("--checkpoints", type=int, default=2000)
    ap.add_argument("--frequency", type=int, default=1000)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    backend, make = saver_for(args)
    cfg = {"configurable": {"thread_id": THREAD}, "recursion_limit": args.checkpoints + 10}
    if not args.time:
        saver = make()
        saver.setup()
        saver.delete_thread(THREAD)
        graph = build_graph(saver, max(args.checkpoints - 2, 1), args.frequency)
        graph.invoke({"counter": 0, "messages": []}, cfg)
        if args.pg:
            saver.conn.execute("ANALYZE")
        return
    graph = build_graph(make(), 1, args.frequency)
    count = len(list(graph.get_state_history(cfg)))  # warm-up
    seconds = []
    for _ in range(args.runs):
        graph = build_graph(make(), 1, args.frequency)
        start = time.perf_counter()
        snapshots = list(graph.get_state_history(cfg))
        seconds.append(time.perf_counter() - start)
        assert len(snapshots) == count
    print(json.dumps({
        "backend": backend,
        "checkpoints": count,
        "seconds": [min(seconds), statistics.median(seconds), max(seconds)],
    }))


if __name__ == "__main__":
    main()
