#!/usr/bin/env python3
"""Interop test (issue 36): Flashback's indexes on databases written by the REAL savers.

The real `SqliteSaver` (always) and `PostgresSaver` (with --pg URL of an empty database) run a
small graph (metadata with `user_id`, a subgraph, a fork by `update_state`). Then:

  * `flashback index DB --json` proposes the indexes, all missing; `--create all` (no --yes)
    writes nothing; `--create all --yes` builds them (Postgres `CONCURRENTLY`);
  * the saver's `setup()` (its migrations: Postgres runs its own `CREATE INDEX CONCURRENTLY IF
    NOT EXISTS`) runs again cleanly on the indexed database, in a fresh saver;
  * the graph writes and reads through the real saver on it: new turns, `get_state`,
    `get_state_history`, `list(filter=…)` equal to what it gave before the indexes, a thread
    deleted;
  * `flashback threads DB --json` (the newest-first page, `--where`) answers as before;
  * `--drop all --yes` leaves nothing of Flashback's (no `flashback_*` index) and every index
    LangGraph made still there.

LangGraph's conformance suite on an indexed database is run by conformance.sh with
FLASHBACK_CONFORMANCE_INDEXED=1 (tests/interop/run.sh).

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/index_test.py [--pg URL] [--no-sqlite]
Prints one line per failed check and finally `N passed, M failed`; exits 1 on failure.
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
from typing import Annotated, Any, TypedDict

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))

from langgraph.graph import END, START, StateGraph  # noqa: E402
from results import Results  # noqa: E402

R = Results(verbose=os.environ.get("FLASHBACK_INTEROP_VERBOSE") == "1")


def flashback(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def fb_json(*args: str) -> Any:
    p = flashback(*args, "--json")
    if p.returncode != 0:
        raise AssertionError(f"flashback {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


# --- the graph: a subgraph, metadata from config, a fork -----------------------------------


class Inner(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]


class State(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    turn: int


def build(saver):
    inner = StateGraph(Inner)
    inner.add_node("think", lambda s: {"notes": ["thought"]})
    inner.add_edge(START, "think")
    inner.add_edge("think", END)
    g = StateGraph(State)
    g.add_node("step", lambda s: {"notes": [f"turn {s.get('turn', 0)}"], "turn": s.get("turn", 0) + 1})
    g.add_node("sub", inner.compile())
    g.add_edge(START, "step")
    g.add_edge("step", "sub")
    g.add_edge("sub", END)
    return g.compile(checkpointer=saver)


def config(thread: str, user: str) -> dict:
    return {"configurable": {"thread_id": thread}, "metadata": {"user_id": user, "assistant_id": "asst-1"}}


def write_threads(graph, prefix: str, n: int) -> None:
    for i in range(n):
        cfg = config(f"{prefix}-{i}", f"u-{i % 3}")
        graph.invoke({"notes": ["hello"]}, cfg)
        graph.invoke({"notes": ["again"]}, cfg)
    # A fork of the first thread, resumed.
    cfg = config(f"{prefix}-0", "u-0")
    history = list(graph.get_state_history(cfg))
    fork = graph.update_state(history[-2].config, {"notes": ["forked"]})
    graph.invoke(None, fork)


def snapshot(graph, saver, threads: list[str]) -> dict:
    out = {}
    for t in threads:
        cfg = {"configurable": {"thread_id": t}}
        state = graph.get_state(cfg)
        out[t] = {
            "values": state.values,
            "history": [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg)],
        }
    out["filter"] = sorted(
        (c.config["configurable"]["thread_id"], c.config["configurable"]["checkpoint_id"])
        for c in saver.list(None, filter={"user_id": "u-1"})
    )
    return out


def check_database(where: str, db: str, saver_cls, connect, names_of_indexes) -> None:
    """The whole scenario on one database; `connect()` gives a fresh saver context."""
    threads = [f"t-{i}" for i in range(6)]
    with connect() as saver:
        saver.setup()
        graph = build(saver)
        write_threads(graph, "t", 6)
        before = snapshot(graph, saver, threads)
    langgraph_indexes = names_of_indexes()
    page_before = fb_json("threads", db, "--limit", "4")
    where_before = fb_json("threads", db, "--where", "user_id=u-1")

    advice = fb_json("index", db)
    names = [i["name"] for i in advice["indexes"]]
    R.check(where, "the advice proposes the newest-first index", "flashback_checkpoints_recent" in names, str(names))
    R.check(where, "every proposed index is missing", all(i["state"] == "missing" for i in advice["indexes"]), json.dumps(advice)[:400])
    R.check(where, "every proposed name is Flashback's", all(n.startswith("flashback_") for n in names), str(names))

    preview = fb_json("index", db, "--create", "all")
    R.check(where, "a preview lists the statements", preview["dry_run"] and len(preview["plan"]["statements"]) == len(names), json.dumps(preview)[:400])
    R.check(where, "a preview writes nothing", names_of_indexes() == langgraph_indexes, str(names_of_indexes()))

    created = fb_json("index", db, "--create", "all", "--yes")
    after_create = names_of_indexes()
    R.check(where, "--yes creates every proposed index", all(n in after_create for n in names), str(after_create))
    R.check(where, "the reads were timed before and after", len(created["before"]) >= 1 and len(created["after"]) == len(created["before"]), json.dumps(created)[:400])
    R.check(where, "the advice then says they are present", all(i["state"] == "present" for i in created["advice"]["indexes"]), json.dumps(created["advice"])[:400])

    # The saver's migrations run again cleanly, in a fresh saver, and it writes and reads.
    try:
        with connect() as saver:
            saver.setup()
            graph = build(saver)
            again = snapshot(graph, saver, threads)
            R.check(where, "the real saver reads the indexed database as before", again == before)
            write_threads(graph, "n", 3)
            cfg = {"configurable": {"thread_id": "n-1"}}
            R.check(where, "the real saver writes on the indexed database", graph.get_state(cfg).values.get("turn") == 2)
            saver.delete_thread("t-5")
            R.check(where, "the real saver deletes a thread", saver.get_tuple({"configurable": {"thread_id": "t-5"}}) is None)
            latest: dict[str, str] = {}
            for c in saver.list(None):
                conf = c.config["configurable"]
                if conf["checkpoint_ns"] == "":
                    latest[conf["thread_id"]] = max(latest.get(conf["thread_id"], ""), conf["checkpoint_id"])
            newest = [t for t, _ in sorted(latest.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)][:4]
            filtered = {c.config["configurable"]["thread_id"] for c in saver.list(None, filter={"user_id": "u-1"})}
            R.check(where, "list(filter=) finds the new threads too", {"t-1", "t-4", "n-1"} <= filtered, str(filtered))
    except Exception as e:  # noqa: BLE001
        R.check(where, "the real saver works on the indexed database", False, repr(e))
        newest = []

    page = fb_json("threads", db, "--limit", "4")
    R.check(where, "the first page is the newest threads", [t["thread_id"] for t in page] == newest, str([t["thread_id"] for t in page]))
    found = {t["thread_id"] for t in fb_json("threads", db, "--where", "user_id=u-1")}
    R.check(where, "--where finds through the index", found == {t["thread_id"] for t in where_before} | {"n-1"}, str(found))
    R.check(where, "the first page before the indexes had the old threads", len(page_before) == 4)

    # Drop: nothing of Flashback's stays; LangGraph's indexes all do.
    preview = fb_json("index", db, "--drop", "all")
    R.check(where, "a drop preview writes nothing", names_of_indexes() == after_create)
    fb_json("index", db, "--drop", "all", "--yes")
    left = names_of_indexes()
    R.check(where, "--drop all leaves no flashback_ index", not [n for n in left if n.startswith("flashback_")], str(left))
    R.check(where, "LangGraph's indexes stay", left == langgraph_indexes, f"{left} != {langgraph_indexes}")
    with connect() as saver:
        saver.setup()
        R.check(where, "the saver reads after the drop", saver.get_tuple({"configurable": {"thread_id": "n-0"}}) is not None)


def run_sqlite() -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with tempfile.TemporaryDirectory() as tmp:
        db = str(pathlib.Path(tmp) / "indexed.sqlite")

        class Conn:
            def __enter__(self):
                self.conn = sqlite3.connect(db, check_same_thread=False)
                return SqliteSaver(self.conn)

            def __exit__(self, *exc):
                self.conn.close()

        def names() -> list[str]:
            with sqlite3.connect(db) as c:
                return sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'"))

        check_database("sqlite", db, SqliteSaver, Conn, names)


def run_postgres(url: str) -> None:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    class Conn:
        def __enter__(self):
            self.cm = PostgresSaver.from_conn_string(url)
            return self.cm.__enter__()

        def __exit__(self, *exc):
            self.cm.__exit__(*exc)

    def names() -> list[str]:
        with psycopg.connect(url, autocommit=True) as c:
            rows = c.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()").fetchall()
            return sorted(r[0] for r in rows)

    check_database("postgres", url, PostgresSaver, Conn, names)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="postgres:// URL of an empty database")
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    if not args.no_sqlite:
        run_sqlite()
    if args.pg:
        run_postgres(args.pg)
    print(f"{R.passed} passed, {R.failed} failed")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
