"""The wheel's Python helper against databases written by the real savers.

Run by tests/packaging/run.sh inside a fresh virtualenv that has the wheel and the pinned
LangGraph packages, from a directory outside the checkout:

    python helper_check.py WORKDIR VERSION [POSTGRES_ADMIN_URL]

Each check prints `ok - name` or `not ok - name: why`; the last line is
`helper: N passed, M failed` (exit 1 if any failed).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import urllib.request
import uuid
from typing import TypedDict

import langgraph_flashback as flashback
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

workdir, version = sys.argv[1], sys.argv[2]
pg_admin = sys.argv[3] if len(sys.argv) > 3 else ""
passed = failed = 0


def check(name, fn):
    global passed, failed
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - each check reports its own failure
        failed += 1
        print(f"not ok - {name}: {type(e).__name__}: {e}".replace("\n", " "), flush=True)
    else:
        passed += 1
        print(f"ok - {name}", flush=True)


class State(TypedDict):
    topic: str
    draft: str


def build(saver):
    g = StateGraph(State)
    g.add_node("write", lambda s: {"draft": f"about {s['topic']}"})
    g.add_node("review", lambda s: {"draft": s["draft"] + ", reviewed"})
    g.add_edge(START, "write")
    g.add_edge("write", "review")
    g.add_edge("review", END)
    return g.compile(checkpointer=saver)


def call(session, command, req):
    body = json.dumps({"req": req}).encode()
    r = urllib.request.Request(
        f"{session.base_url}/api/{command}",
        data=body,
        headers={"Authorization": f"Bearer {session.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(r, timeout=30) as resp:
        return json.loads(resp.read())


def served_threads(session):
    info = call(session, "app_info", None)
    assert info["version"] == version, f"app_info version {info['version']} != {version}"
    return {t["thread_id"]: t for t in call(session, "list_threads", {"db": info["initial"]["db"]})}


def page(session):
    with urllib.request.urlopen(session.base_url + "/", timeout=30) as resp:
        html = resp.read().decode()
    assert "<title>Flashback" in html and "/assets/" in html, f"no UI in the page: {html[:120]!r}"


path = os.path.join(workdir, "agent.sqlite")
with SqliteSaver.from_conn_string(path) as saver:
    graph = build(saver)
    config = {"configurable": {"thread_id": "helper-1"}}
    graph.invoke({"topic": "tides"}, config)
    # A fork, as a user makes one: update_state from the first step's checkpoint.
    first = list(graph.get_state_history(config))[-2]
    graph.update_state(first.config, {"topic": "moons"})

    def opens_the_saver():
        with flashback.open(saver, browser=False) as s:
            assert s.running and s.url.startswith("http://127.0.0.1:"), s.url
            page(s)
            threads = served_threads(s)
            assert "helper-1" in threads, sorted(threads)
            t = threads["helper-1"]
            assert t["checkpoint_count"] == 5, t["checkpoint_count"]
        assert not s.running, "stop() left the server running"

    check("open(SqliteSaver) serves the page and the saver's thread (5 checkpoints)", opens_the_saver)

    def opens_the_graph():
        with flashback.open(graph, browser=False) as s:
            assert "helper-1" in served_threads(s)

    check("open(compiled graph) opens its checkpointer", opens_the_graph)

    def opens_the_connection():
        with flashback.open(saver.conn, browser=False) as s:
            assert s.location == os.path.realpath(path) or s.location == path, s.location
            assert "helper-1" in served_threads(s)

    check("open(sqlite3 connection) opens its file", opens_the_connection)


def opens_a_path():
    with flashback.open(path, browser=False) as s:
        assert "helper-1" in served_threads(s)


check("open(path) opens it", opens_a_path)


def refuses(target, needle):
    def run():
        try:
            flashback.open(target, browser=False, timeout=30)
        except flashback.FlashbackError as e:
            msg = str(e)
            assert needle in msg, msg
            assert "\n" not in msg, f"more than one line: {msg!r}"
            return
        raise AssertionError("opened")

    return run


check("an InMemorySaver is refused in one line", refuses(InMemorySaver(), "memory"))
check("an in-memory SQLite saver is refused", refuses(SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)), "memory"))
check("a graph without a checkpointer is refused", refuses(build(None), "without a checkpointer"))
check("a missing file says so in one line", refuses(os.path.join(workdir, "missing.sqlite"), "missing.sqlite"))
check("a non-LangGraph file says so", refuses(__file__, "helper_check.py"))
check("something else is refused", refuses(42, "cannot open a int"))


def python_m():
    import subprocess

    out = subprocess.run([sys.executable, "-m", "langgraph_flashback", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"flashback {version}", out.stdout


check("python -m langgraph_flashback --version", python_m)


def mcp_over_stdio():
    # The wheel's binary is an MCP server too: an initialize, then tools/list and one call,
    # as newline-delimited JSON-RPC on stdio (what an MCP client sends).
    import subprocess

    proc = subprocess.Popen(
        [flashback.binary(), "mcp", path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def send(msg):
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()

        def answer(want_id):
            while True:
                line = proc.stdout.readline()
                assert line, f"the server closed stdout: {proc.stderr.read()[-300:]}"
                msg = json.loads(line)
                if msg.get("id") == want_id:
                    return msg

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "packaging-check", "version": "1"}}})
        init = answer(1)
        assert init["result"]["serverInfo"]["version"] == version, init
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = {t["name"] for t in answer(2)["result"]["tools"]}
        assert {"threads", "history", "state", "diff"} <= names, sorted(names)
        assert "fork" not in names, "a write tool without --allow-writes"
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "threads", "arguments": {}}})
        result = answer(3)["result"]
        assert not result.get("isError"), result
        assert "helper-1" in json.dumps(result), str(result)[:300]
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


check("flashback mcp (stdio) lists the read tools and answers threads", mcp_over_stdio)
check("__version__ is the wheel's", lambda: None if flashback.__version__ == version else (_ for _ in ()).throw(AssertionError(flashback.__version__)))

if pg_admin:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    name = f"flashback_pkg_{uuid.uuid4().hex[:10]}"
    base = pg_admin.rsplit("/", 1)[0]
    with psycopg.connect(pg_admin, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        url = f"{base}/{name}"
        with PostgresSaver.from_conn_string(url) as pg:
            pg.setup()
            graph = build(pg)
            graph.invoke({"topic": "rivers"}, {"configurable": {"thread_id": "helper-pg"}})

            def opens_postgres():
                with flashback.open(pg, browser=False) as s:
                    assert s.location.startswith("postgresql://"), s.location
                    assert "helper-pg" in served_threads(s)

            check("open(PostgresSaver) opens its database", opens_postgres)

        with ConnectionPool(url, kwargs={"autocommit": True, "prepare_threshold": 0}, open=True) as pool:

            def opens_a_pool():
                with flashback.open(PostgresSaver(pool), browser=False) as s:
                    assert "helper-pg" in served_threads(s)

            check("open(PostgresSaver over a ConnectionPool) opens its database", opens_a_pool)

        socket_dir = "/var/run/postgresql"
        if os.path.exists(os.path.join(socket_dir, ".s.PGSQL.5432")) and "127.0.0.1:5432" in pg_admin:

            def opens_over_a_socket():
                with psycopg.connect(f"host={socket_dir} dbname={name} user=postgres", autocommit=True) as conn:
                    with flashback.open(PostgresSaver(conn), browser=False) as s:
                        assert "host=%2Fvar%2Frun%2Fpostgresql" in s.location, s.location
                        assert "helper-pg" in served_threads(s)

            check("open(PostgresSaver over a Unix socket) opens its database", opens_over_a_socket)
    finally:
        with psycopg.connect(pg_admin, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

print(f"helper: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
