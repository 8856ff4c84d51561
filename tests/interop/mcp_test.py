#!/usr/bin/env python3
"""Interop test: `flashback mcp` driven by the official MCP Python SDK (`mcp`, pinned in
tests/fixtures/requirements.txt) over stdio, the server being the built `flashback` binary.

  * the tools are listed; the writes are absent without --allow-writes (and a call to one is a
    tool error naming the flag);
  * on the LangGraph fixture (tests/fixtures/langgraph.sqlite), `threads`, `history`, `state`
    (whole and one path), `graph`, `diff` and `search` answer what `flashback … --json` prints
    for the same request, thread by thread;
  * bad arguments are tool errors (`isError`) of one line, never protocol errors;
  * with --allow-writes, `fork` is a dry run by default (nothing written) and with
    dry_run=false writes a checkpoint the REAL LangGraph `SqliteSaver` reads back as the
    thread's head, child of the checkpoint forked;
  * LangGraph's memory Store written by the real `SqliteStore`: `store_ls`, `store_get`,
    `store_search`, `store_ns` answer what `flashback store … --json` prints, and a `store_put`
    with dry_run=false is read back by `SqliteStore.get` (the dry run leaves it unchanged);
  * over streamable HTTP (`--http 0`), the same answers with the bearer token, and a request
    without it, with a wrong one or for another Host refused;
  * a 200 MB value written by LangGraph (a graph run with `SqliteSaver`) never floods an
    answer: `threads`, `history`, `state` (default, `full`, one `path`) and `watch` each stay
    within the default budget (~8k tokens).

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/mcp_test.py
Prints one line per failed check and finally `N passed, M failed`; exits 1 on failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from typing import Any

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))
FIXTURE = ROOT / "tests" / "fixtures" / "langgraph.sqlite"
VERBOSE = os.environ.get("FLASHBACK_MCP_VERBOSE") == "1"
# The default answer budget: 8,000 tokens of about 4 characters, with a little slack.
BUDGET_CHARS = 8_000 * 4 + 2_000

from mcp import Client, StdioServerParameters  # noqa: E402
from results import Results  # noqa: E402

R = Results(verbose=VERBOSE)


def flashback(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def fb_json(*args: str) -> Any:
    p = flashback(*args, "--json")
    if p.returncode != 0:
        raise RuntimeError(f"flashback {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def fb_lines(*args: str) -> list:
    p = flashback(*args, "--json")
    if p.returncode != 0:
        raise RuntimeError(f"flashback {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def server(db: str, *flags: str) -> Client:
    return Client(StdioServerParameters(command=BIN, args=["mcp", db, *flags]))


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def size_of(result) -> int:
    return len(text_of(result)) + len(json.dumps(result.structured_content or {}))


async def call(client: Client, tool: str, args: dict) -> Any:
    return await client.call_tool(tool, args)


# The comparisons ask for whole answers (the fixture's largest, the 300-step graph, is ~165k
# characters); the default budget's pages are checked on their own.
WHOLE = {"max_tokens": 100_000}


async def answer(client: Client, tool: str, args: dict) -> Any:
    r = await call(client, tool, {**WHOLE, **args})
    if r.is_error:
        raise RuntimeError(f"{tool} {args}: {text_of(r)}")
    return r.structured_content["result"]


READS = ["threads", "history", "state", "graph", "diff", "search", "watch", "replay",
         "activity", "storage", "store_ls", "store_get", "store_search"]
WRITES = ["fork", "merge", "delete", "delete_branch", "prune", "copy", "store_put",
          "store_delete", "rerun"]


async def reads(db: str) -> None:
    where = "fixture"
    async with server(db) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        for name in READS:
            R.check(where, f"tool {name} listed", name in tools, str(sorted(tools)))
        for name in WRITES:
            R.check(where, f"write {name} absent without --allow-writes", name not in tools)
        state_schema = tools["state"].input_schema if "state" in tools else {}
        R.check(where, "state's schema: app field names, no db",
                {"thread_id", "checkpoint_id", "checkpoint_ns", "path"} <= set(state_schema.get("properties", {}))
                and "db" not in state_schema.get("properties", {}), json.dumps(state_schema)[:400])
        refused = await call(c, "fork", {"thread_id": "x", "checkpoint_id": "y"})
        R.check(where, "fork without --allow-writes is a tool error naming the flag",
                refused.is_error and "--allow-writes" in text_of(refused), text_of(refused))

        cli_threads = fb_json("threads", db)
        mcp_threads = await answer(c, "threads", {})
        R.check(where, "threads == flashback threads --json", mcp_threads == cli_threads)
        ids = [t["thread_id"] for t in cli_threads]
        for tid in ids:
            w = f"thread {tid}"
            hist = fb_json("history", db, tid)
            R.check(w, "history == flashback history --json",
                    await answer(c, "history", {"thread_id": tid, "checkpoint_ns": ""}) == hist)
            all_ns = fb_json("history", db, tid, "--all-ns")
            R.check(w, "history (every namespace) == --all-ns",
                    await answer(c, "history", {"thread_id": tid}) == all_ns)
            R.check(w, "graph == flashback graph --json",
                    await answer(c, "graph", {"thread_id": tid}) == fb_json("graph", db, tid))
            state = fb_json("state", db, tid)
            R.check(w, "state == flashback state --json",
                    await answer(c, "state", {"thread_id": tid}) == state)
            for channel, value in list(state["values"].items())[:3]:
                one = await answer(c, "state", {"thread_id": tid, "path": channel})
                R.check(w, f"state path={channel} == its value", one["value"] == value)
            msgs = state["values"].get("messages")
            if isinstance(msgs, list) and msgs:
                last = await answer(c, "state", {"thread_id": tid, "path": "messages[-1]"})
                R.check(w, "state path=messages[-1] == the last message", last["value"] == msgs[-1])
            if len(hist) >= 2:
                a, b = hist[-1]["checkpoint_id"], hist[0]["checkpoint_id"]
                mcp_diff = await answer(c, "diff", {"thread_id": tid, "a": {"checkpoint_id": a},
                                                    "b": {"checkpoint_id": b}})
                R.check(w, "diff == flashback diff --json", mcp_diff == fb_json("diff", db, tid, a, b))
            old = await answer(c, "state", {"thread_id": tid, "checkpoint_id": hist[-1]["checkpoint_id"]})
            R.check(w, "state at the first checkpoint == --checkpoint",
                    old == fb_json("state", db, tid, "--checkpoint", hist[-1]["checkpoint_id"]))

        # Paging: the default answers of the longest history, followed by their cursors, are the
        # whole history.
        long = max(cli_threads, key=lambda t: t["checkpoint_count"])["thread_id"]
        pages, cursor, turns = [], None, 0
        while turns < 100:
            args = {"thread_id": long, "checkpoint_ns": ""} | ({"cursor": cursor} if cursor else {})
            r = await call(c, "history", args)
            pages += r.structured_content["result"]
            R.check(where, f"history page {turns} of {long} within the default budget", size_of(r) <= BUDGET_CHARS,
                    str(size_of(r)))
            cursor = r.structured_content.get("page", {}).get("next_cursor")
            turns += 1
            if not cursor:
                break
        R.check(where, f"history of {long} in {turns} pages == flashback history --json",
                turns > 1 and pages == fb_json("history", db, long), f"{turns} pages, {len(pages)} items")

        for query in ["hello", "weather", "a"]:
            lines = fb_lines("search", db, query)
            hits = [line for line in lines if line.get("type") == "search_hit"]
            summary = lines[-1]["result"]
            got = await answer(c, "search", {"query": query, "limit": 200, "max_tokens": 100_000})
            R.check(where, f"search {query!r} == flashback search --json",
                    got == {"hits": hits, "summary": summary},
                    json.dumps(got)[:300] + " / " + json.dumps({"hits": hits, "summary": summary})[:300])

        for tool, args, says in [
            ("state", {}, "thread_id"),
            ("state", {"thread_id": "no-such-thread"}, "no-such-thread"),
            ("state", {"thread_id": ids[0], "path": "messages[["}, "bad path"),
            ("state", {"thread_id": ids[0], "path": "no_such_channel"}, "no channel"),
            ("history", {"thread_id": ids[0], "limt": 3}, "unknown argument"),
            ("history", {"thread_id": ids[0], "limit": "many"}, "limit"),
            ("diff", {"thread_id": ids[0], "a": "x"}, "bad arguments"),
            ("threads", {"cursor": -1}, "cursor"),
            ("no_such_tool", {}, "no tool"),
        ]:
            r = await call(c, tool, args)
            t = text_of(r).strip()
            R.check(where, f"{tool} {args}: a one-line tool error",
                    bool(r.is_error) and says in t and len(t.splitlines()) == 1, t)


async def fork(db: str) -> None:
    where = "fork"
    from langgraph.checkpoint.sqlite import SqliteSaver

    tid = fb_json("threads", db)[0]["thread_id"]
    before = fb_json("history", db, tid)
    head = before[0]["checkpoint_id"]
    async with server(db, "--allow-writes") as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        R.check(where, "writes listed with --allow-writes", "fork" in tools and "rerun" not in tools)
        dry = tools["fork"].input_schema["properties"].get("dry_run", {})
        R.check(where, "fork's dry_run defaults to true", dry.get("default") is True, json.dumps(dry))
        preview = await answer(c, "fork", {"thread_id": tid, "checkpoint_id": head})
        R.check(where, "fork without dry_run is a dry run", preview.get("dry_run") is True, json.dumps(preview))
        R.check(where, "the dry run wrote nothing", fb_json("history", db, tid) == before)
        made = await answer(c, "fork", {"thread_id": tid, "checkpoint_id": head, "dry_run": False})
    conn = sqlite3.connect(db, check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        got = saver.get_tuple({"configurable": {"thread_id": tid, "checkpoint_ns": ""}})
        R.check(where, "SqliteSaver reads the fork as the thread's head",
                got is not None and got.config["configurable"]["checkpoint_id"] == made["checkpoint_id"],
                f"{made} / {got.config if got else None}")
        R.check(where, "its parent is the checkpoint forked",
                got is not None and got.parent_config is not None
                and got.parent_config["configurable"]["checkpoint_id"] == head)
        n = len(list(saver.list({"configurable": {"thread_id": tid, "checkpoint_ns": ""}})))
        R.check(where, "one checkpoint more", n == len(before) + 1, f"{n} vs {len(before)}")
    finally:
        conn.close()


async def http(db: str) -> None:
    where = "http"
    import secrets
    import signal

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    token = "mcp-test-" + secrets.token_hex(12)
    proc = subprocess.Popen([BIN, "mcp", db, "--http", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ | {"FLASHBACK_MCP_TOKEN": token})
    try:
        url = ""
        for line in proc.stdout:
            if line.strip().startswith("url"):
                url = line.split()[-1]
                break
        R.check(where, "the server prints its URL", url.startswith("http://127.0.0.1:"), url)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "probe", "version": "1"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        for what, headers, status in [
            ("no token", {}, 401),
            ("a wrong token", {"Authorization": "Bearer " + "x" * len(token)}, 401),
            ("another Host", {"Authorization": f"Bearer {token}", "Host": "evil.example"}, 403),
            ("another origin", {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}, 403),
        ]:
            r = httpx2.post(url, json=init, headers=accept | headers, timeout=10)
            R.check(where, f"{what}: refused ({status})", r.status_code == status, f"{r.status_code} {r.text[:200]}")
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=client)) as c:
            threads = fb_json("threads", db)
            R.check(where, "threads == flashback threads --json", await answer(c, "threads", {}) == threads)
            tid = threads[0]["thread_id"]
            R.check(where, "state == flashback state --json",
                    await answer(c, "state", {"thread_id": tid}) == fb_json("state", db, tid))
            r = await call(c, "state", {"thread_id": "no-such-thread"})
            R.check(where, "a missing thread is a tool error", bool(r.is_error) and "no-such-thread" in text_of(r))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    R.check(where, "Ctrl-C stops the server", proc.returncode == 0, f"exit {proc.returncode}")


async def store(path: str) -> None:
    where = "store"
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        st = SqliteStore(conn)
        st.setup()
        st.put(("users", "u-1"), "prefs", {"theme": "dark", "lang": "en"})
        st.put(("users", "u-2"), "prefs", {"theme": "light"})
        st.put(("docs",), "intro", {"text": "Hello world"})
        async with server(path, "--allow-writes") as c:
            R.check(where, "store_ls == flashback store ls --json",
                    await answer(c, "store_ls", {}) == fb_json("store", "ls", path))
            R.check(where, "store_ls under a prefix == --prefix",
                    await answer(c, "store_ls", {"prefix": ["users"]}) == fb_json("store", "ls", path, "--prefix", "users"))
            R.check(where, "store_get == flashback store get --json",
                    await answer(c, "store_get", {"namespace": ["users", "u-1"], "key": "prefs"})
                    == fb_json("store", "get", path, "users/u-1", "prefs"))
            R.check(where, "store_search == flashback store search --json",
                    await answer(c, "store_search", {"query": "dark"}) == fb_json("store", "search", path, "--query", "dark"))
            R.check(where, "store_ns == flashback store namespaces --json",
                    await answer(c, "store_ns", {}) == fb_json("store", "namespaces", path))
            item = {"namespace": ["users", "u-1"], "key": "prefs", "value": {"theme": "solarized"}}
            preview = await answer(c, "store_put", item)
            R.check(where, "store_put is a dry run by default", preview.get("dry_run") is True and preview.get("would") == "replace",
                    json.dumps(preview))
            R.check(where, "the dry run changed nothing", st.get(("users", "u-1"), "prefs").value["theme"] == "dark")
            await answer(c, "store_put", item | {"dry_run": False})
        got = st.get(("users", "u-1"), "prefs")
        R.check(where, "SqliteStore reads what store_put wrote", got is not None and got.value == {"theme": "solarized"},
                str(got.value if got else None))
    finally:
        conn.close()


def big_db(path: str) -> str:
    """A thread whose state holds a 200 MB string, written by LangGraph itself."""
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    class S(TypedDict):
        big: str
        note: str

    def fill(state: S) -> dict:
        return {"big": "x" * (200 * 1000 * 1000), "note": "made the big value"}

    g = StateGraph(S)
    g.add_node("fill", fill)
    g.add_edge(START, "fill")
    g.add_edge("fill", END)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        app = g.compile(checkpointer=SqliteSaver(conn))
        app.invoke({"big": "", "note": ""}, {"configurable": {"thread_id": "big"}})
    finally:
        conn.close()
    return "big"


async def huge(path: str) -> None:
    where = "200 MB value"
    tid = big_db(path)
    async with server(path) as c:
        for tool, args in [
            ("threads", {}),
            ("history", {"thread_id": tid}),
            ("state", {"thread_id": tid}),
            ("state", {"thread_id": tid, "full": True}),
            ("state", {"thread_id": tid, "full": True, "path": "big"}),
            ("watch", {"thread_id": tid, "path": "big"}),
            ("search", {"query": "made the big"}),
            ("graph", {"thread_id": tid}),
        ]:
            r = await call(c, tool, args)
            R.check(where, f"{tool} {args}: an answer within the budget",
                    not r.is_error and size_of(r) <= BUDGET_CHARS, f"{size_of(r)} characters: {text_of(r)[:300]}")
        r = await call(c, "state", {"thread_id": tid, "full": True, "path": "big"})
        folded = json.dumps(r.structured_content)
        # A path reads through state_page: a string over the fold limit comes back as its start,
        # its length and the path that fetches it whole.
        R.check(where, "the folded value says its length", '"chars": 200000000' in folded and '"path": "big"' in folded, folded[:400])


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "langgraph.sqlite")
        shutil.copy(FIXTURE, db)
        await reads(db)
        await http(db)
        await fork(db)
        await store(os.path.join(tmp, "store.sqlite"))
        await huge(os.path.join(tmp, "big.sqlite"))
    print(f"{R.passed} passed, {R.failed} failed")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
