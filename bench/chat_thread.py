#!/usr/bin/env python3
"""Build and/or time one long, growing LangGraph chat thread (issue 12's 818 MB-class thread).

Build (default): a real graph on thread "chat" whose state is a plain
`Annotated[list, add_messages]` chat: every step appends one message (HumanMessage and
AIMessage in turn), so every checkpoint stores the whole conversation again and the thread
grows quadratically. It runs until the thread has N checkpoints (default 2800: the input
checkpoint, the one after __start__, then one per step). Each message carries about --chars
characters of text (default 10), which makes the SQLite file about 800 MB at 2800 checkpoints.
The thread is deleted first; on Postgres the tables are ANALYZEd afterwards (stable timings).

    python bench/chat_thread.py --sqlite /tmp/chat.sqlite
    python bench/chat_thread.py --pg 'postgresql://postgres@127.0.0.1:5432/chat?sslmode=disable'

Time (--time): `list(saver.list({"configurable": {"thread_id": "chat"}}))` (every checkpoint
fully decoded, pending writes included) with a fresh SqliteSaver / PostgresSaver, after one
warm-up run, RUNS times (default 5); prints one JSON line per backend:
{"backend", "checkpoints", "seconds": [min, median, max], "runs"}. Add --build to build first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

# The savers' set-up is the other benchmark thread's (tests/fixtures/bench_long_thread.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures"))
from bench_long_thread import pg_saver, sqlite_saver  # noqa: E402

THREAD = "chat"
WORDS = "the quick brown fox jumps over a lazy dog while seven wizards quietly hex bold nymphs".split()


class ChatState(TypedDict, total=False):
    turn: int
    messages: Annotated[list, add_messages]


def text(n: int, chars: int) -> str:
    out, i = [], n
    while sum(map(len, out)) + len(out) < chars:
        out.append(WORDS[i % len(WORDS)])
        i = i * 7 + 3
    return f"{n}: " + " ".join(out)


def build_graph(checkpointer, n_checkpoints: int, chars: int):
    steps = max(n_checkpoints - 2, 1)

    def step(state: ChatState):
        n = state["turn"] + 1
        if n % 2:
            msg = AIMessage(
                content=text(n, chars),
                id=f"a-{n}",
                response_metadata={"model_name": "bench-model", "finish_reason": "stop"},
            )
        else:
            msg = HumanMessage(content=text(n, chars), id=f"h-{n}")
        return {"turn": n, "messages": [msg]}

    g = StateGraph(ChatState)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["turn"] < steps else END, ["step", END])
    return g.compile(checkpointer=checkpointer)


def build(make_saver, n: int, chars: int, setup: bool) -> int:
    with make_saver() as saver:
        if setup:
            saver.setup()
        saver.delete_thread(THREAD)
        graph = build_graph(saver, n, chars)
        graph.invoke(
            {"turn": 0, "messages": [HumanMessage(content=text(0, chars), id="h-0")]},
            {"configurable": {"thread_id": THREAD}, "recursion_limit": n + 100},
        )
        count = sum(1 for _ in saver.list({"configurable": {"thread_id": THREAD}}))
        if setup:
            saver.conn.execute("ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes")
    return count


def measure(make_saver, backend: str, runs: int) -> dict:
    config = {"configurable": {"thread_id": THREAD}}
    with make_saver() as saver:
        count = len(list(saver.list(config)))  # warm-up (also runs the lazy setup)
        seconds = []
        for _ in range(runs):
            t0 = time.perf_counter()
            result = list(saver.list(config))
            seconds.append(time.perf_counter() - t0)
            assert len(result) == count
            del result
    return {
        "backend": backend,
        "checkpoints": count,
        "seconds": [round(min(seconds), 4), round(statistics.median(seconds), 4), round(max(seconds), 4)],
        "runs": runs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sqlite", metavar="PATH", help="SQLite database file (SqliteSaver)")
    ap.add_argument("--pg", metavar="URL", help="Postgres connection URL (PostgresSaver)")
    ap.add_argument("--checkpoints", type=int, default=2800, help="checkpoints to build (default 2800)")
    ap.add_argument("--chars", type=int, default=10, help="characters of text per message (default 10)")
    ap.add_argument("--time", action="store_true", help="time list() instead of building")
    ap.add_argument("--build", action="store_true", help="with --time: build first")
    ap.add_argument("--runs", type=int, default=5, help="timed runs (default 5)")
    args = ap.parse_args()
    if not args.sqlite and not args.pg:
        ap.error("give --sqlite PATH and/or --pg URL")
    if args.checkpoints < 3:
        ap.error("--checkpoints must be at least 3")

    backends = []
    if args.sqlite:
        backends.append(("sqlite", lambda: sqlite_saver(args.sqlite), False))
    if args.pg:
        backends.append(("postgres", lambda: pg_saver(args.pg), True))

    for name, make, setup in backends:
        if args.build or not args.time:
            t0 = time.perf_counter()
            count = build(make, args.checkpoints, args.chars, setup)
            print(
                f"built {name} thread {THREAD!r}: {count} checkpoints in {time.perf_counter() - t0:.1f}s",
                file=sys.stderr,
            )
        if args.time:
            print(json.dumps(measure(make, name, args.runs)), flush=True)


if __name__ == "__main__":
    main()
