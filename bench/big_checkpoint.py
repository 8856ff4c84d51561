#!/usr/bin/env python3
"""Build and/or time one enormous checkpoint (issue 36 item 4), written by the real library.

Build (default): a real `StateGraph` whose state is an `Annotated[list, add_messages]` chat,
on two threads of a SqliteSaver file and/or a PostgresSaver database:

* `big` — one graph run (a scripted `agent` node answering "start"), then one
  `update_state(…, as_node="agent")` adding --messages messages at once (default 3,000: human
  turns, AI messages calling a tool, the ToolMessages answering them, AI answers), every
  --image-every'th human turn carrying a base64 PNG data URL in an `image_url` content block
  (100 kB to 1 MB of base64 each) until the head checkpoint holds about --mb megabytes
  (default 80).
* `big-10k` — the same, with --chat messages (default 10,000) of plain text and no images.

Each thread is deleted first, so building again replaces it. On Postgres the tables are
ANALYZEd afterwards.

    python bench/big_checkpoint.py --sqlite bench/out/big.sqlite
    python bench/big_checkpoint.py --pg 'postgresql://postgres@127.0.0.1:5432/flashback_big?sslmode=disable'
    python bench/big_checkpoint.py --sqlite /tmp/small.sqlite --messages 2000 --mb 4 --chat 2000

Time (--time): `graph.get_state(config)` for each thread with a fresh saver (what Python's
own reader does to open the checkpoint), after one warm-up run, RUNS times (default 5); one
JSON line per backend and thread: {"backend", "thread", "messages", "seconds": [min, median,
max], "runs"}.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures"))
from bench_long_thread import pg_saver, sqlite_saver  # noqa: E402

WORDS = "the quick brown fox jumps over a lazy dog while seven wizards quietly hex bold nymphs".split()
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


class ChatState(TypedDict, total=False):
    messages: Annotated[list, add_messages]


def text(n: int, chars: int) -> str:
    out, i = [], n
    while sum(map(len, out)) + len(out) < chars:
        out.append(WORDS[i % len(WORDS)])
        i = i * 7 + 3
    return f"{n}: " + " ".join(out)


def image_url(rng: random.Random, b64_chars: int) -> str:
    raw = PNG_HEAD + rng.randbytes(max(b64_chars * 3 // 4 - len(PNG_HEAD), 0))
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def messages(count: int, target_mb: float, image_every: int, chars: int, tag: str) -> list:
    """`count` messages in turns of four (human, AI calling a tool, tool, AI answer); images on
    every `image_every`'th human turn while the total stays under `target_mb`."""
    rng = random.Random(36)
    out: list = []
    size, budget, turn = 0, int(target_mb * 1_000_000), 0
    turns = max(count // 4, 1)
    text_bytes = count * (chars + 200)
    image_budget = max(budget - text_bytes, 0)
    images = max(turns // image_every, 1) if image_every else 0
    taken = 0
    while len(out) < count:
        n = len(out)
        question = text(n, chars)
        if image_every and turn % image_every == 0 and image_budget > 0:
            # 100 kB to 1 MB of base64, spread so the images fill the budget.
            mean = image_budget // max(images - taken, 1)
            taken += 1
            want = min(max(mean + rng.randint(-mean // 2, mean // 2), 100_000), 1_000_000, image_budget)
            url = image_url(rng, want)
            image_budget -= len(url)
            size += len(url)
            content = [{"type": "text", "text": question}, {"type": "image_url", "image_url": {"url": url}}]
            out.append(HumanMessage(content=content, id=f"{tag}-h-{n}"))
        else:
            out.append(HumanMessage(content=question, id=f"{tag}-h-{n}"))
        call = f"call-{tag}-{n}"
        out.append(
            AIMessage(
                content="",
                id=f"{tag}-a-{n + 1}",
                tool_calls=[{"name": "lookup", "args": {"query": text(n + 1, 40), "page": turn}, "id": call}],
                response_metadata={"model_name": "bench-model", "finish_reason": "tool_calls"},
                usage_metadata={"input_tokens": 40 + n, "output_tokens": 12, "total_tokens": 52 + n},
            )
        )
        out.append(ToolMessage(content=text(n + 2, chars), tool_call_id=call, name="lookup", id=f"{tag}-t-{n + 2}"))
        out.append(
            AIMessage(
                content=text(n + 3, chars),
                id=f"{tag}-a-{n + 3}",
                response_metadata={"model_name": "bench-model", "finish_reason": "stop"},
            )
        )
        turn += 1
    return out[:count]


def build_graph(checkpointer):
    def agent(state: ChatState):
        return {"messages": [AIMessage(content="ready", id="ready")]}

    g = StateGraph(ChatState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=checkpointer)


def build(make_saver, args, setup: bool) -> None:
    plan = [
        ("big", messages(args.messages, args.mb, args.image_every, args.chars, "b")),
        ("big-10k", messages(args.chat, 0, 0, args.chars, "c")),
    ]
    with make_saver() as saver:
        if setup:
            saver.setup()
        graph = build_graph(saver)
        for thread, batch in plan:
            saver.delete_thread(thread)
            config = {"configurable": {"thread_id": thread}}
            graph.invoke({"messages": [HumanMessage(content="start", id=f"{thread}-start")]}, config)
            t0 = time.perf_counter()
            graph.update_state(config, {"messages": batch}, as_node="agent")
            state = graph.get_state(config)
            print(
                json.dumps(
                    {
                        "thread": thread,
                        "messages": len(state.values["messages"]),
                        "seconds": round(time.perf_counter() - t0, 2),
                    }
                ),
                file=sys.stderr,
            )


def time_open(make_saver, backend: str, runs: int) -> None:
    for thread in ("big", "big-10k"):
        times, count = [], 0
        for i in range(runs + 1):
            with make_saver() as saver:
                graph = build_graph(saver)
                t0 = time.perf_counter()
                state = graph.get_state({"configurable": {"thread_id": thread}})
                elapsed = time.perf_counter() - t0
                count = len(state.values.get("messages", []))
                del state
            if i:
                times.append(elapsed)
        print(
            json.dumps(
                {
                    "backend": backend,
                    "thread": thread,
                    "messages": count,
                    "seconds": [round(min(times), 4), round(statistics.median(times), 4), round(max(times), 4)],
                    "runs": runs,
                }
            ),
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sqlite")
    ap.add_argument("--pg")
    ap.add_argument("--messages", type=int, default=3000)
    ap.add_argument("--mb", type=float, default=80)
    ap.add_argument("--image-every", type=int, default=6, help="an image on every Nth human turn")
    ap.add_argument("--chat", type=int, default=10_000)
    ap.add_argument("--chars", type=int, default=400)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--build", action="store_true", help="with --time: build first")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if not args.sqlite and not args.pg:
        ap.error("give --sqlite PATH and/or --pg URL")
    targets = []
    if args.sqlite:
        targets.append(("sqlite", lambda: sqlite_saver(args.sqlite), True))
    if args.pg:
        targets.append(("postgres", lambda: pg_saver(args.pg), True))
    for backend, make, setup in targets:
        if not args.time or args.build:
            build(make, args, setup)
            if backend == "postgres":
                import psycopg

                with psycopg.connect(args.pg, autocommit=True) as conn:
                    conn.execute("ANALYZE")
        if args.time:
            time_open(make, backend, args.runs)


if __name__ == "__main__":
    main()
