#!/usr/bin/env python3
"""Flashback's indexes around a conformance run (conformance.sh, FLASHBACK_CONFORMANCE_INDEXED=1).

    python tests/interop/index_seed.py create DB   # setup() by the real saver, every index built
    python tests/interop/index_seed.py drop DB     # every flashback_ index dropped, none left

`create` sets the database up with the REAL saver (SqliteSaver / PostgresSaver), writes one
checkpoint whose metadata carries the keys the SQLite metadata indexes are proposed for, builds
every index `flashback index` proposes (`--create all --yes`), then deletes that thread, so the
suite starts on an empty, indexed database. `drop` drops them and fails when one is left.
"""

from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))
SEED = "flashback-index-seed"


def saver_for(db: str):
    if db.startswith("postgres"):
        from langgraph.checkpoint.postgres import PostgresSaver

        return PostgresSaver.from_conn_string(db)
    from contextlib import contextmanager

    from langgraph.checkpoint.sqlite import SqliteSaver

    @contextmanager
    def cm():
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()

    return cm()


def ours(db: str) -> list[str]:
    if db.startswith("postgres"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as c:
            rows = c.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'flashback\\_%'").fetchall()
    else:
        with sqlite3.connect(db) as c:
            rows = c.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'flashback\\_%' ESCAPE '\\'").fetchall()
    return sorted(r[0] for r in rows)


def flashback(*args: str) -> dict:
    p = subprocess.run([BIN, *args, "--json"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"index_seed: flashback {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def main() -> int:
    action, db = sys.argv[1], sys.argv[2]
    if action == "create":
        from langgraph.checkpoint.base import empty_checkpoint

        with saver_for(db) as saver:
            saver.setup()
            meta = {"source": "input", "step": -1, "user_id": "u", "assistant_id": "a", "graph_id": "g", "run_id": "r"}
            config = {"configurable": {"thread_id": SEED, "checkpoint_ns": ""}}
            saver.put(config, empty_checkpoint(), meta, {})
        report = flashback("index", db, "--create", "all", "--yes")
        with saver_for(db) as saver:
            saver.delete_thread(SEED)
        names = ours(db)
        print(f"indexed: {', '.join(names)} ({len(report['plan']['statements'])} statements)")
        return 0 if names and names == sorted(report["plan"]["names"]) else 1
    flashback("index", db, "--drop", "all", "--yes")
    left = ours(db)
    print("flashback indexes left: " + (", ".join(left) if left else "none"))
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
