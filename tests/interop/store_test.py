#!/usr/bin/env python3
"""Interop test: LangGraph's memory Store (long-term memory) read and written by Flashback.

The REAL `langgraph.store.sqlite.SqliteStore` (always) and `langgraph.store.postgres.
PostgresStore` (with --pg URL of an empty database) write items in nested namespaces, with
updates, deletes and TTLs (`TTLConfig`); on SQLite also an index with vectors from a fake
deterministic embedding (8 dimensions). Then:

  * `flashback store ls/get/search/namespaces --json` must show, item by item, what Python's
    `store.search(...)` / `store.get(...)` / `store.list_namespaces()` return (value,
    created_at, updated_at; prefixes on whole labels), TTLs and vector dimensions as the rows
    hold them, and search as documented (case-insensitive substring of the value's compact
    JSON text);
  * a mixed database (checkpoints from `SqliteSaver`/`PostgresSaver` and a store in the same
    file or database) opens and shows both; a store-only one says so in `flashback threads`;
  * Python reads back what `flashback store put` wrote (value, TTL) and no longer sees what
    `flashback store delete --yes` deleted (and still sees what a preview did not).

This Python has no SQLite extension loading (`enable_load_extension`), so the SQLite store is
given a connection whose `enable_load_extension` does nothing and `sqlite_vec.load` is not
called: the store's own code still writes every row (its vectors are
`sqlite_vec.serialize_float32`), only vector *search* (not used here) would need the extension.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/store_test.py [--pg URL] [--no-sqlite]
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
import time
from datetime import datetime, timedelta, timezone
from typing import Any, Optional, TypedDict

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))

import sqlite_vec  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import TTLConfig  # noqa: E402
from langgraph.store.sqlite import SqliteStore  # noqa: E402
from results import Results  # noqa: E402

DIMS = 8
TTL = TTLConfig(refresh_on_read=False)  # reads must not move expires_at under the comparison


def flashback(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def fb_json(*args: str) -> Any:
    p = flashback(*args, "--json")
    if p.returncode != 0:
        raise RuntimeError(f"flashback {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic fake embedding: character codes folded into DIMS floats."""
    out = []
    for t in texts:
        v = [0.0] * DIMS
        for i, ch in enumerate(t):
            v[i % DIMS] += (ord(ch) % 97) / 97.0
        out.append(v)
    return out


def when(value: Any) -> Optional[datetime]:
    """A timestamp as an aware UTC datetime (Python's SQLite store gives naive UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace(" ", "T"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------
# Writing the store with Python
# ---------------------------------------------------------------------------


def populate(store, vectors: bool) -> None:
    """Nested namespaces, updates, a delete, TTLs and (on SQLite) vectors."""
    store.put(("users", "u-1"), "prefs", {"theme": "Dark", "lang": "en"})
    store.put(("users", "u-1"), "notes", {"text": "likes green tea", "tags": ["tea", "green"]})
    store.put(("users", "u-1", "history"), "h1", {"text": "ordered a book", "n": 1})
    store.put(("users", "u-2"), "prefs", {"theme": "light"}, ttl=45)
    store.put(("users2",), "prefs", {"theme": "dark", "note": "not under users"})
    store.put(("docs",), "intro", {"text": "Héllo wörld", "nested": {"a": [1, 2.5, None, True]}})
    store.put(("docs",), "gone", {"text": "to be deleted by Python"})
    time.sleep(1.1)  # updates land in a later second (SQLite's CURRENT_TIMESTAMP)
    store.put(("users", "u-1"), "prefs", {"theme": "dark", "lang": "fr"})  # an update
    store.put(("docs",), "raw", {"text": "not indexed"}, index=False if vectors else None)
    store.put(("users", "u-3"), "short", {"text": "expires soon"}, ttl=0.5)
    store.delete(("docs",), "gone")


def sqlite_rows(path: str) -> dict:
    conn = sqlite3.connect(path)
    rows = {}
    for prefix, key, exp, ttl in conn.execute("SELECT prefix, key, expires_at, ttl_minutes FROM store"):
        rows[(prefix, key)] = (when(exp), ttl)
    vecs: dict = {}
    has_vectors = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'store_vectors'").fetchone()
    if has_vectors:
        for prefix, key, field, emb in conn.execute("SELECT prefix, key, field_name, embedding FROM store_vectors"):
            vecs.setdefault((prefix, key), []).append((field, len(emb) // 4))
    conn.close()
    return {"rows": rows, "vectors": vecs}


def pg_rows(url: str) -> dict:
    import psycopg

    rows = {}
    with psycopg.connect(url) as conn:
        for prefix, key, exp, ttl in conn.execute("SELECT prefix, key, expires_at, ttl_minutes FROM store"):
            rows[(prefix, key)] = (exp, None if ttl is None else float(ttl))
    return {"rows": rows, "vectors": {}}


# ---------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------


def compare(r: Results, where: str, db: str, store, raw: dict) -> None:
    fb_items = fb_json("store", "ls", db)
    py_items = store.search((), limit=10_000)
    fb_by = {(tuple(i["namespace"]), i["key"]): i for i in fb_items}
    py_by = {(tuple(i.namespace), i.key): i for i in py_items}
    r.check(where, f"store ls lists the items Python's search lists ({len(py_by)})", set(fb_by) == set(py_by),
            f"flashback {sorted(fb_by)} python {sorted(py_by)}")
    for k, py in sorted(py_by.items()):
        fb = fb_by.get(k)
        if fb is None:
            continue
        name = "/".join(k[0]) + "/" + k[1]
        ok = (
            fb["value"] == py.value
            and when(fb["created_at"]) == when(py.created_at)
            and when(fb["updated_at"]) == when(py.updated_at)
            and "problem" not in fb
        )
        r.check(where, f"{name}: value and times as Python's search", ok,
                f"flashback {fb} python {py.dict()}")
        got = fb_json("store", "get", db, "/".join(k[0]), k[1])
        one = store.get(k[0], k[1])
        r.check(where, f"{name}: store get equals Python's get", one is not None and got["value"] == one.value
                and when(got["created_at"]) == when(one.created_at) and when(got["updated_at"]) == when(one.updated_at),
                f"flashback {got} python {one}")
        exp, ttl = raw["rows"][(".".join(k[0]), k[1])]
        fb_exp = when(fb.get("expires_at"))
        ok = fb.get("ttl_minutes") == ttl and (fb_exp == exp if exp is None else abs((fb_exp - exp).total_seconds()) < 1e-6)
        ok = ok and fb["expired"] == (exp is not None and exp < datetime.now(timezone.utc))
        r.check(where, f"{name}: TTL as stored (expires_at {exp}, ttl_minutes {ttl})", ok, f"flashback {fb}")
        want_vecs = sorted(raw["vectors"].get((".".join(k[0]), k[1]), []))
        have_vecs = sorted((v["field"], v["dims"]) for v in fb.get("vectors", []))
        r.check(where, f"{name}: vectors {want_vecs}", have_vecs == want_vecs, f"flashback {have_vecs}")

    # Prefixes match whole labels, as Python's namespace_prefix does.
    for prefix in [("users",), ("users", "u-1"), ("docs",), ("user",)]:
        fb = {(tuple(i["namespace"]), i["key"]) for i in fb_json("store", "ls", db, "--prefix", "/".join(prefix))}
        py = {(tuple(i.namespace), i.key) for i in store.search(prefix, limit=10_000)}
        r.check(where, f"store ls --prefix {'/'.join(prefix)}: {len(py)} items as Python", fb == py,
                f"flashback {sorted(fb)} python {sorted(py)}")
    page = fb_json("store", "ls", db, "--limit", "2", "--offset", "1")
    r.check(where, "store ls --limit 2 --offset 1 is a page of the listing",
            [(i["namespace"], i["key"]) for i in page] == [(i["namespace"], i["key"]) for i in fb_items[1:3]])

    # Text search: the documented rule, over Python's own items.
    for query, prefix in [("DARK", ()), ('"theme":"dark"', ("users",)), ("wörld", ()), ("tea", ("users", "u-1"))]:
        args = ["store", "search", db, "--query", query]
        if prefix:
            args += ["--prefix", "/".join(prefix)]
        fb = {(tuple(i["namespace"]), i["key"]) for i in fb_json(*args)}
        py = {(tuple(i.namespace), i.key) for i in store.search(prefix, limit=10_000)
              if query.lower() in compact(i.value).lower()}
        r.check(where, f"store search {query!r} under {prefix}: {len(py)} matches", fb == py and len(py) > 0,
                f"flashback {sorted(fb)} expected {sorted(py)}")

    fb_ns = {tuple(n["namespace"]): n["items"] for n in fb_json("store", "namespaces", db)}
    py_ns = set(store.list_namespaces(limit=10_000))
    counts = {}
    for i in py_items:
        counts[tuple(i.namespace)] = counts.get(tuple(i.namespace), 0) + 1
    r.check(where, f"store namespaces: Python's {len(py_ns)} namespaces with their item counts",
            set(fb_ns) == py_ns and fb_ns == counts, f"flashback {fb_ns} python {sorted(py_ns)} counts {counts}")


def writes(r: Results, where: str, db: str, store, raw_of) -> None:
    # A new item with a TTL: Python reads it back, the row holds the TTL.
    value = {"text": "written by flashback", "ü": [1, {"x": None}]}
    p = flashback("store", "put", db, "users/u-9", "fb-key", json.dumps(value), "--ttl", "30", "--json")
    out = json.loads(p.stdout) if p.returncode == 0 else {}
    r.check(where, "store put creates an item", out.get("created") is True, p.stderr)
    item = store.get(("users", "u-9"), "fb-key")
    r.check(where, "Python reads back the value flashback put", item is not None and item.value == value, str(item))
    exp, ttl = raw_of()["rows"][("users.u-9", "fb-key")]
    soon = datetime.now(timezone.utc) + timedelta(minutes=30)
    r.check(where, "the TTL flashback put is stored as Python stores it (ttl_minutes 30, expires in 30 min)",
            ttl == 30.0 and exp is not None and abs((exp - soon).total_seconds()) < 120, f"{exp} {ttl}")
    r.check(where, "Python's search finds the new item",
            any(i.key == "fb-key" for i in store.search(("users",), limit=10_000)))

    # An update: the item's vectors (if any) go, Python sees the new value.
    had = raw_of()["vectors"].get(("users.u-1", "notes"), [])
    out = fb_json("store", "put", db, "users/u-1", "notes", '{"text": "now likes coffee"}')
    r.check(where, f"store put updates and removes the stale vectors ({len(had)})",
            out["created"] is False and sorted(out["removed_vectors"]) == sorted(f for f, _ in had)
            and ("users.u-1", "notes") not in raw_of()["vectors"], str(out))
    item = store.get(("users", "u-1"), "notes")
    r.check(where, "Python reads back the updated value", item is not None and item.value == {"text": "now likes coffee"})

    # Delete: a preview changes nothing, --yes deletes.
    p = flashback("store", "delete", db, "users/u-1", "prefs")
    r.check(where, "store delete without --yes only previews",
            p.returncode == 0 and "--yes" in p.stdout and store.get(("users", "u-1"), "prefs") is not None, p.stdout + p.stderr)
    out = fb_json("store", "delete", db, "users/u-1", "prefs", "--yes")
    r.check(where, "store delete --yes deletes; Python no longer sees the item",
            out["dry_run"] is False and store.get(("users", "u-1"), "prefs") is None
            and all(i.key != "prefs" or i.namespace != ["users", "u-1"] for i in store.search(("users",), limit=10_000)))
    p = flashback("store", "get", db, "users/u-1", "prefs")
    r.check(where, "store get of the deleted item exits 3 with one line", p.returncode == 3 and len(p.stderr.strip().splitlines()) == 1,
            f"{p.returncode} {p.stderr}")


class S(TypedDict):
    n: int


def run_graph(saver, tid: str) -> None:
    b = StateGraph(S)
    b.add_node("inc", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "inc")
    b.add_edge("inc", END)
    b.compile(checkpointer=saver).invoke({"n": 1}, {"configurable": {"thread_id": tid}})


def mixed(r: Results, where: str, db: str) -> None:
    threads = fb_json("threads", db)
    r.check(where, "a mixed database lists its thread", [t["thread_id"] for t in threads] == ["mixed-thread"], str(threads))
    items = fb_json("store", "ls", db)
    r.check(where, "a mixed database lists its store items", [i["key"] for i in items] == ["beside"], str(items))
    p = flashback("threads", db)
    r.check(where, "flashback threads mentions the memory store beside the threads",
            "mixed-thread" in p.stdout and "also a LangGraph memory store (1 item in 1 namespace)" in p.stdout, p.stdout)


def store_only_threads(r: Results, where: str, db: str) -> None:
    p = flashback("threads", db)
    r.check(where, "flashback threads on a store-only database says so in one line",
            p.returncode == 0 and len(p.stdout.strip().splitlines()) == 1 and "only a LangGraph memory store" in p.stdout,
            p.stdout + p.stderr)


# ---------------------------------------------------------------------------


def sqlite_part(r: Results) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    sqlite_vec.load = lambda conn: None  # see the module docs

    class Conn(sqlite3.Connection):
        def enable_load_extension(self, enabled: bool) -> None:  # noqa: D401
            pass

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "memory.sqlite")
        conn = sqlite3.connect(path, factory=Conn, check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn, index={"dims": DIMS, "embed": embed, "fields": ["text"], "text_fields": ["text", "tags[*]"]}, ttl=TTL)
        store.setup()
        populate(store, vectors=True)
        store_only_threads(r, "sqlite", path)
        compare(r, "sqlite", path, store, sqlite_rows(path))
        writes(r, "sqlite", path, store, lambda: sqlite_rows(path))
        conn.close()

        mixed_path = os.path.join(d, "mixed.sqlite")
        mconn = sqlite3.connect(mixed_path, check_same_thread=False)
        saver = SqliteSaver(mconn)
        saver.setup()
        run_graph(saver, "mixed-thread")
        mconn.close()
        with SqliteStore.from_conn_string(mixed_path) as mstore:
            mstore.setup()
            mstore.put(("notes",), "beside", {"text": "next to checkpoints"})
        mixed(r, "sqlite", mixed_path)


def postgres_part(r: Results, url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(url, ttl=TTL) as store:
        store.setup()
        populate(store, vectors=False)
        store_only_threads(r, "postgres", url)
        compare(r, "postgres", url, store, pg_rows(url))
        writes(r, "postgres", url, store, lambda: pg_rows(url))
        for i in store.search((), limit=10_000):
            store.delete(tuple(i.namespace), i.key)
        store.put(("notes",), "beside", {"text": "next to checkpoints"})
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        run_graph(saver, "mixed-thread")
    mixed(r, "postgres", url)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="an empty Postgres database (the store's and saver's tables are created)")
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    r = Results(verbose=True)
    if not args.no_sqlite:
        sqlite_part(r)
    if args.pg:
        postgres_part(r, args.pg)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
