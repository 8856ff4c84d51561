#!/usr/bin/env python3
"""Build a many-thread checkpoint database for the thread-list benchmark (bench/scale.sh).

Two stages:

1. Template threads, written by the REAL LangGraph (a small support-agent StateGraph run with
   SqliteSaver / PostgresSaver): chat turns with tool calls (ToolNode, ToolMessages), threads
   left waiting at an `interrupt()`, threads that failed with an error (a tool raising), a
   `Send` fan-out, an `update_state` fork, and plain finished chats. Their sizes are chosen so
   that the templates average --checkpoints-per-thread checkpoints.
2. Replication with SQL: every row of every table of the templates (checkpoints + writes on
   SQLite; checkpoints, checkpoint_blobs, checkpoint_writes on Postgres) copied with
   `thread_id` rewritten to `bulk-000123`, one INSERT ... SELECT per batch of copies, until the
   database holds --threads threads. Checkpoint ids stay the same (they are per thread). The
   templates keep their own names (`chat-lookup-00`, `approval-waiting-00`, ...).

    bench/threads_db.py --sqlite bench/out/scale-20k.sqlite --threads 20000 --checkpoints-per-thread 5
    bench/threads_db.py --pg postgresql://postgres@127.0.0.1:5432/flashback_scale_20k --threads 20000

--pg drops and recreates that database. --sqlite replaces the file. A JSON sidecar
(<file>.json for SQLite; bench/out/<dbname>.json for Postgres) records what was built, and
the last line printed is the same JSON (sizes, row counts, seconds).

Postgres is VACUUM ANALYZEd afterwards (what autovacuum would do on a real server). SQLite is
not ANALYZEd: SqliteSaver never runs ANALYZE, so real files have no sqlite_stat1 and an
ANALYZEd file would let the planner pick plans users do not get; the copies are written table
by table in key order, so the file is already compact and VACUUM would change nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import operator
import os
import pathlib
import sqlite3
import sys
import time
from typing import Annotated, Callable
from urllib.parse import urlsplit, urlunsplit

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict

# --- the graph -------------------------------------------------------------------------------


class SupportState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    findings: Annotated[list[dict], operator.add]
    approved: bool


@tool
def lookup_order(order_id: str) -> dict:
    """Look an order up in the shop's database."""
    n = sum(map(ord, order_id))
    return {"order_id": order_id, "status": ["shipped", "packed", "delayed"][n % 3], "items": 1 + n % 4, "total": round(9.99 * (1 + n % 7), 2)}


@tool
def charge_card(order_id: str, amount: float) -> str:
    """Charge the customer's card (the payment provider is down in this benchmark)."""
    raise ConnectionError(f"payment provider timed out charging {amount} for {order_id} (HTTP 504)")


META = {"model_name": "scripted-support-1", "system_fingerprint": "fp_bench"}
USAGE = {"input_tokens": 120, "output_tokens": 24, "total_tokens": 144}


def _ai(content: str, mid: str, **kw) -> AIMessage:
    return AIMessage(content=content, id=mid, response_metadata={**META, "finish_reason": "tool_calls" if kw.get("tool_calls") else "stop"}, usage_metadata=USAGE, **kw)


def agent(state: SupportState) -> dict:
    """A scripted model: what it does depends on the last message's keyword."""
    msgs = state["messages"]
    last = msgs[-1]
    turn = sum(isinstance(m, HumanMessage) for m in msgs)
    mid = f"ai-{turn}-{len(msgs)}"
    if isinstance(last, ToolMessage):
        return {"messages": [_ai(f"The order system says: {last.content[:120]}. Anything else?", mid)]}
    if isinstance(last, HumanMessage):
        text = last.content
        if text.startswith("lookup"):
            order = text.split()[-1]
            call = {"name": "lookup_order", "args": {"order_id": order}, "id": f"call-{turn}-lookup", "type": "tool_call"}
            return {"messages": [_ai("", mid, tool_calls=[call])]}
        if text.startswith("charge"):
            call = {"name": "charge_card", "args": {"order_id": "A-1001", "amount": 42.5}, "id": f"call-{turn}-charge", "type": "tool_call"}
            return {"messages": [_ai("", mid, tool_calls=[call])]}
        if text.startswith("research"):
            return {"messages": [_ai("Let me check three sources in parallel.", mid, additional_kwargs={"fanout": 3})]}
        if text.startswith("refund"):
            return {"messages": [_ai("A refund needs a supervisor's approval; asking now.", mid, additional_kwargs={"needs_approval": True})]}
        return {"messages": [_ai(f"Thanks for your message ({len(text)} characters). How else can I help?", mid)]}
    # after the fan-out or the review
    if state.get("findings") and last.additional_kwargs.get("fanout"):
        summary = "; ".join(f"{f['source']}: {f['verdict']}" for f in state["findings"][-3:])
        return {"messages": [_ai(f"Here is what I found: {summary}.", mid)]}
    if "approved" in state:
        return {"messages": [_ai("The refund was approved and issued." if state["approved"] else "The refund was declined.", mid)]}
    return {"messages": [_ai("Done.", mid)]}


def route(state: SupportState):
    last = state["messages"][-1]
    if getattr(last, "tool_calls", None):
        return "tools"
    if last.additional_kwargs.get("fanout"):
        return [Send("research", {"source": s, "question": "order delays"}) for s in ("orders-db", "carrier-api", "faq")]
    if last.additional_kwargs.get("needs_approval"):
        return "review"
    return END


def research(arg: dict) -> dict:
    return {"findings": [{"source": arg["source"], "verdict": f"{arg['question']}: nothing unusual in {arg['source']}", "score": len(arg["source"]) / 10}]}


def review(state: SupportState) -> dict:
    decision = interrupt({"question": "Approve this refund?", "amount": 42.5, "currency": "EUR"})
    return {"approved": bool(decision.get("approved"))}


def build_graph(checkpointer):
    g = StateGraph(SupportState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode([lookup_order, charge_card], handle_tool_errors=False))
    g.add_node("research", research)
    g.add_node("review", review)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", "research", "review", END])
    g.add_edge("tools", "agent")
    g.add_edge("research", "agent")
    g.add_edge("review", "agent")
    return g.compile(checkpointer=checkpointer)


# --- template threads ------------------------------------------------------------------------
# A template is a list of actions; each adds a known number of checkpoints (checked after the
# build): an invoke adds its input checkpoint, the one after __start__ and one per superstep.

COST = {"plain": 3, "lookup": 5, "research": 5, "refund": 3, "approve": 2, "charge": 3, "fork": 3}
# (name, actions): padding goes in front, so failed and waiting threads still end that way.
SCENARIOS: list[tuple[str, list[str]]] = [
    ("chat-lookup", ["lookup"]),
    ("chat-plain", ["plain"]),
    ("chat-research", ["research"]),
    ("approval-waiting", ["refund"]),
    ("approval-done", ["refund", "approve"]),
    ("payment-failed", ["charge"]),
    ("forked", ["lookup", "fork"]),
    ("chat-lookup", ["lookup"]),
    ("chat-research", ["research"]),
    ("chat-plain", ["plain"]),
    ("chat-lookup", ["lookup"]),
    ("approval-waiting", ["refund"]),
    ("chat-mixed", ["plain", "lookup"]),
    ("payment-failed", ["charge"]),
    ("chat-lookup", ["lookup"]),
    ("chat-research", ["research"]),
]


def plan_templates(per_thread: int) -> list[tuple[str, list[str]]]:
    """The scenarios, padded with leading chat turns so that they average `per_thread`."""
    plans = [(f"{name}-{i:02d}", list(actions)) for i, (name, actions) in enumerate(SCENARIOS)]
    cost = lambda actions: sum(COST[a] for a in actions)  # noqa: E731
    need = per_thread * len(plans) - sum(cost(a) for _, a in plans)
    while need >= 3:
        # the shortest template gets one more turn: a lookup (5) if that fits, else a plain one (3)
        _, actions = min(plans, key=lambda p: cost(p[1]))
        turn = "lookup" if need >= 5 and need != 6 else "plain"
        actions.insert(0, turn)
        need -= COST[turn]
    return plans


# The run metadata the Agent Server and `langgraph dev` put on every checkpoint of a run; the
# copies get a user and a run of their own (see replicate_*), so `threads --where user_id=…`
# finds a few threads among many.
TEMPLATE_USER = "u-template"


def run_metadata(tid: str, n: int) -> dict:
    assistant = "asst-billing" if tid.startswith(("payment", "approval")) else "asst-support"
    return {"tenant": "acme", "source": "bench", "user_id": TEMPLATE_USER, "assistant_id": assistant, "graph_id": "support", "run_id": f"run-{tid}-{n}"}


def run_template(graph, tid: str, actions: list[str]) -> None:
    config = {"configurable": {"thread_id": tid}, "metadata": run_metadata(tid, 0)}
    for i, action in enumerate(actions):
        config["metadata"] = run_metadata(tid, i)
        if action == "approve":
            graph.invoke(Command(resume={"approved": True, "by": "supervisor"}), config)
        elif action == "fork":
            # Fork at the checkpoint about to run the tools: same AI message id, other arguments.
            history = list(graph.get_state_history(config))
            at = next(s for s in history if s.next == ("tools",))
            old = at.values["messages"][-1]
            call = dict(old.tool_calls[0], args={"order_id": "B-2002"})
            branch = graph.update_state(at.config, {"messages": [_ai("", old.id, tool_calls=[call])]}, as_node="agent")
            graph.invoke(None, branch)
        elif action == "charge":
            try:
                graph.invoke({"messages": [HumanMessage(content="charge my card for order A-1001", id=f"h-{i}")]}, config)
            except ConnectionError:
                pass
            else:
                raise AssertionError("charge_card should have raised")
        else:
            text = {"plain": "Hello, I have a question about my account.", "lookup": f"lookup the status of order A-{1000 + i}", "research": "research why orders are delayed this week", "refund": "refund order A-1001 please"}[action]
            graph.invoke({"messages": [HumanMessage(content=text, id=f"h-{i}")]}, config)


def write_templates(saver, plans) -> dict[str, int]:
    graph = build_graph(saver)
    counts = {}
    for tid, actions in plans:
        run_template(graph, tid, actions)
        counts[tid] = sum(1 for _ in saver.list({"configurable": {"thread_id": tid}}))
    return counts


# --- replication -----------------------------------------------------------------------------


def copy_ranges(copies: int, batch: int):
    for start in range(0, copies, batch):
        yield start, min(start + batch, copies) - 1


def sqlite_metadata(users: int) -> str:
    """The template's metadata with the copy's own user and run: the stored JSON text (as
    SqliteSaver wrote it) with the placeholders replaced, stored as the BLOB it was."""
    user = f"'\"user_id\": \"u-' || (c.n % {users}) || '\"'"
    run = "'\"run_id\": \"run-' || c.dst || '-'"
    return (
        f"CAST(replace(replace(CAST(t.metadata AS TEXT), '\"user_id\": \"{TEMPLATE_USER}\"', {user}),"
        f" '\"run_id\": \"run-' || c.src || '-', {run}) AS BLOB)"
    )


def replicate_sqlite(conn: sqlite3.Connection, templates: list[str], copies: int, batch: int, users: int) -> None:
    conn.executescript(
        """
        PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY;
        CREATE TEMP TABLE tmpl(i INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TEMP TABLE t_checkpoints AS SELECT * FROM checkpoints;
        CREATE TEMP TABLE t_writes AS SELECT * FROM writes;
        CREATE TEMP TABLE copies(n INTEGER PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL);
        """
    )
    conn.executemany("INSERT INTO tmpl VALUES (?, ?)", list(enumerate(templates)))
    conn.execute(
        """
        INSERT INTO copies
        WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?)
        SELECT n, (SELECT name FROM tmpl WHERE i = n % ?), printf('bulk-%06d', n) FROM seq
        """,
        (copies, len(templates)),
    )
    # Table by table, in key order: each table's pages end up together, as after a VACUUM.
    for table, cols in (
        ("checkpoints", "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"),
        ("writes", "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"),
    ):
        select = ", ".join(sqlite_metadata(users) if x.strip() == "metadata" else "t." + x.strip() for x in cols.split(","))
        for lo, hi in copy_ranges(copies, batch):
            conn.execute(
                f"INSERT INTO {table} (thread_id, {cols}) SELECT c.dst, {select}"
                f" FROM copies c JOIN t_{table} t ON t.thread_id = c.src WHERE c.n BETWEEN ? AND ?"
                " ORDER BY c.dst, t.checkpoint_ns, t.checkpoint_id",
                (lo, hi),
            )
        conn.commit()
    conn.executescript("DROP TABLE temp.copies; DROP TABLE temp.t_checkpoints; DROP TABLE temp.t_writes; DROP TABLE temp.tmpl;")


PG_TABLES = {
    "checkpoints": "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata",
    "checkpoint_blobs": "checkpoint_ns, channel, version, type, blob",
    "checkpoint_writes": "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob",
}


def pg_metadata(users: int) -> str:
    """The template's metadata with the copy's own user and run (jsonb: no text to keep)."""
    return (
        "CASE WHEN t.metadata ? 'user_id' THEN jsonb_set(jsonb_set(t.metadata, '{user_id}', "
        f"to_jsonb('u-' || (c.n %% {users}))), '{{run_id}}', to_jsonb(replace(t.metadata->>'run_id', 'run-' || c.src, 'run-' || c.dst))) "
        "ELSE t.metadata END"
    )


def replicate_pg(conn, templates: list[str], copies: int, batch: int, users: int) -> None:
    cur = conn.cursor()
    cur.execute("SET synchronous_commit = off")
    cur.execute("SET maintenance_work_mem = '512MB'")
    cur.execute("CREATE TEMP TABLE copies AS SELECT g AS n, (%s::text[])[g %% %s + 1] AS src, 'bulk-' || lpad(g::text, 6, '0') AS dst FROM generate_series(0, %s - 1) g", (templates, len(templates), copies))
    cur.execute("CREATE INDEX ON copies (n)")
    # Drop the tables' indexes and keys (saved verbatim) and rebuild them once at the end.
    cur.execute(
        """
        SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
        FROM pg_constraint c WHERE c.conrelid = ANY(%s::regclass[]) AND c.contype IN ('p', 'u')
        """,
        (list(PG_TABLES),),
    )
    constraints = cur.fetchall()
    cur.execute(
        """
        SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i
        WHERE i.indrelid = ANY(%s::regclass[])
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
        """,
        (list(PG_TABLES),),
    )
    indexes = cur.fetchall()
    for name, _ in indexes:
        cur.execute(f"DROP INDEX {name}")
    for table, name, _ in constraints:
        cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for table, cols in PG_TABLES.items():
        cur.execute(f"CREATE TEMP TABLE t_{table} AS SELECT * FROM {table}")
        select = ", ".join(pg_metadata(users) if x.strip() == "metadata" else "t." + x.strip() for x in cols.split(","))
        for lo, hi in copy_ranges(copies, batch):
            cur.execute(
                f"INSERT INTO {table} (thread_id, {cols}) SELECT c.dst, {select}"
                f" FROM copies c JOIN t_{table} t ON t.thread_id = c.src WHERE c.n BETWEEN %s AND %s ORDER BY c.dst",
                (lo, hi),
            )
        conn.commit()
    for table, name, definition in constraints:
        cur.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
    for _, definition in indexes:
        cur.execute(definition)
    conn.commit()


# --- main ------------------------------------------------------------------------------------


def with_db(url: str, db: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + db))


def build_sqlite(path: pathlib.Path, plans, threads: int, batch: int, users: int) -> dict:
    from langgraph.checkpoint.sqlite import SqliteSaver

    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{suffix}")
    t0 = time.perf_counter()
    conn = sqlite3.connect(path, check_same_thread=False)
    counts = write_templates(SqliteSaver(conn), plans)
    t1 = time.perf_counter()
    replicate_sqlite(conn, list(counts), threads - len(counts), batch, users)
    rows = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("checkpoints", "writes")}
    n_threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    t2 = time.perf_counter()
    return {"backend": "sqlite", "location": str(path), "bytes": path.stat().st_size, "threads": n_threads, "rows": rows, "templates": counts, "seconds_templates": round(t1 - t0, 1), "seconds_replicate": round(t2 - t1, 1)}


def build_pg(url: str, plans, threads: int, batch: int, users: int) -> dict:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    db = urlsplit(url).path.lstrip("/")
    with psycopg.connect(with_db(url, "postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{db}"')
    t0 = time.perf_counter()
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        counts = write_templates(saver, plans)
    t1 = time.perf_counter()
    with psycopg.connect(url) as conn:
        replicate_pg(conn, list(counts), threads - len(counts), batch, users)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        rows = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in PG_TABLES}
        n_threads = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    t2 = time.perf_counter()
    return {"backend": "postgres", "location": url, "bytes": size, "threads": n_threads, "rows": rows, "templates": counts, "seconds_templates": round(t1 - t0, 1), "seconds_replicate": round(t2 - t1, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sqlite", metavar="PATH", help="SQLite file to (re)create")
    ap.add_argument("--pg", metavar="URL", help="Postgres database to (re)create, postgresql://…/NAME")
    ap.add_argument("--threads", type=int, default=20000)
    ap.add_argument("--checkpoints-per-thread", type=int, default=5, help="average, at least 3 (default 5)")
    ap.add_argument("--batch", type=int, default=5000, help="copies per INSERT … SELECT (default 5000)")
    ap.add_argument("--users", type=int, default=0, help="distinct user_id values of the copies (u-0 … u-N-1; default threads / 20)")
    ap.add_argument("--sidecar-dir", default=str(pathlib.Path(__file__).resolve().parent / "out"), help="where Postgres sidecars go (default bench/out)")
    args = ap.parse_args()
    if not args.sqlite and not args.pg:
        ap.error("give --sqlite PATH and/or --pg URL")
    plans = plan_templates(args.checkpoints_per_thread)
    users = args.users or max(1, args.threads // 20)
    if args.threads < len(plans):
        ap.error(f"--threads must be at least {len(plans)} (the templates)")
    jobs: list[tuple[str, Callable[[], dict]]] = []
    if args.sqlite:
        path = pathlib.Path(args.sqlite)
        jobs.append((f"{path}.json", lambda: build_sqlite(path, plans, args.threads, args.batch, users)))
    if args.pg:
        db = urlsplit(args.pg).path.lstrip("/")
        jobs.append((str(pathlib.Path(args.sidecar_dir) / f"{db}.json"), lambda: build_pg(args.pg, plans, args.threads, args.batch, users)))
    for sidecar, job in jobs:
        t0 = time.perf_counter()
        info = job()
        info.update(seconds=round(time.perf_counter() - t0, 1), checkpoints_per_thread=args.checkpoints_per_thread, requested_threads=args.threads, users=users)
        planned = {tid: sum(COST[a] for a in actions) for tid, actions in plans}
        off = {t: (planned[t], n) for t, n in info["templates"].items() if planned[t] != n}
        if off:
            print(f"note: templates whose checkpoint count differs from the plan (planned, actual): {off}", file=sys.stderr)
        total = info["rows"]["checkpoints"]
        print(f"{info['backend']}: {info['threads']} threads, {total} checkpoints ({total / info['threads']:.2f} per thread), {info['bytes'] / 2**20:.0f} MiB, {info['seconds']} s (templates {info['seconds_templates']} s)", file=sys.stderr)
        pathlib.Path(sidecar).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(sidecar).write_text(json.dumps(info, indent=1) + "\n")
        print(json.dumps(info), flush=True)


if __name__ == "__main__":
    main()
