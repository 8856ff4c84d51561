#!/usr/bin/env python3
"""Helpers of bench/three_table.sh (issue 14: LangGraph's savers vs the three-table store).

replay: write the chat thread of a LangGraph SQLite database (bench/chat_thread.py) again into
a fresh database with LangGraph's own saver, as a graph run writes it: oldest first, each
checkpoint one `put` (with the versions that changed since its parent as new versions) and
one `put_writes` per task. Each tuple is read from the source before its `put` (not timed);
only `put` + `put_writes` are timed. Prints one JSON line like `flashback-bench put`.

    python bench/three_table.py replay SRC.sqlite --sqlite DST.sqlite
    python bench/three_table.py replay SRC.sqlite --pg URL

size: bytes on disk of a database: a SQLite file (with its -wal, if any), or on Postgres the
total relation size (heap, TOAST and indexes) of every table in the `public` schema.

    python bench/three_table.py size --sqlite PATH --label NAME
    python bench/three_table.py size --pg URL --label NAME

table: read the JSON lines of a run (bench/out/three_table.jsonl) and print the Markdown
table of min / median / max per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fixtures"))
from bench_long_thread import pg_saver, sqlite_saver  # noqa: E402

THREAD = "chat"


def replay(src: str, make_saver, backend: str, setup: bool) -> dict:
    conn = sqlite3.connect(src)
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id",
            (THREAD,),
        )
    ]
    conn.close()
    seconds = 0.0
    parent_versions: dict[str, dict] = {}
    with sqlite_saver(src) as source, make_saver() as saver:
        if setup:
            saver.setup()
        for cid in ids:
            t = source.get_tuple({"configurable": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": cid}})
            cp = t.checkpoint
            parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            before = parent_versions.get(parent, {})
            new_versions = {c: v for c, v in cp["channel_versions"].items() if before.get(c) != v}
            config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
            if parent:
                config["configurable"]["checkpoint_id"] = parent
            tasks: dict[str, list] = defaultdict(list)
            for task_id, channel, value in t.pending_writes or []:
                tasks[task_id].append((channel, value))
            t0 = time.perf_counter()
            saved = saver.put(config, cp, t.metadata, new_versions)
            for task_id, writes in tasks.items():
                saver.put_writes(saved, writes, task_id)
            seconds += time.perf_counter() - t0
            parent_versions[cid] = dict(cp["channel_versions"])
    return {
        "writer": "python",
        "schema": "langgraph",
        "backend": backend,
        "checkpoints": len(ids),
        "seconds": seconds,
        "checkpoints_per_second": len(ids) / seconds,
    }


def sqlite_bytes(path: str) -> int:
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def pg_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0])


def spread(xs: list[float]) -> list[float]:
    return [min(xs), statistics.median(xs), max(xs)]


def fmt(x: float, unit: str) -> str:
    if unit == "MB":
        return f"{x / 1e6:,.1f}"
    if unit == "s":
        return f"{x:.3f}"
    return f"{x:,.0f}"


def table(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip().startswith("{")]
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    order: list[tuple[str, str]] = []
    spreads: dict[tuple[str, str], tuple[list[float], int]] = {}
    for r in rows:
        m = r.get("measure")
        if m is None:
            continue
        key = (m, r["label"])
        if key not in groups:
            order.append(key)
        if "spread" in r:  # a tool's own [min, median, max] over its runs
            spreads[key] = (r["spread"], r["runs"])
        else:
            groups[key].append(r["value"])
    units = {"bytes": "MB", "put": "ckpt/s", "read": "s"}
    titles = {
        "bytes": "bytes on disk (MB)",
        "put": "put throughput (checkpoints/s)",
        "read": "full-history read (s)",
    }
    for measure in ("bytes", "put", "read"):
        keys = [k for k in order if k[0] == measure]
        if not keys:
            continue
        print(f"\n{titles[measure]}\n")
        print("| | min | median | max | runs |")
        print("|---|---:|---:|---:|---:|")
        for k in keys:
            (lo, mid, hi), n = spreads.get(k) or (spread(groups[k]), len(groups[k]))
            u = units[measure]
            print(f"| {k[1]} | {fmt(lo, u)} | {fmt(mid, u)} | {fmt(hi, u)} | {n} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay")
    r.add_argument("src")
    r.add_argument("--sqlite")
    r.add_argument("--pg")
    s = sub.add_parser("size")
    s.add_argument("--sqlite")
    s.add_argument("--pg")
    s.add_argument("--label", required=True)
    t = sub.add_parser("table")
    t.add_argument("jsonl")
    args = ap.parse_args()
    if args.cmd == "replay":
        if args.sqlite:
            out = replay(args.src, lambda: sqlite_saver(args.sqlite), "sqlite", False)
        else:
            out = replay(args.src, lambda: pg_saver(args.pg), "postgres", True)
        print(json.dumps(out), flush=True)
    elif args.cmd == "size":
        n = sqlite_bytes(args.sqlite) if args.sqlite else pg_bytes(args.pg)
        print(json.dumps({"measure": "bytes", "label": args.label, "value": n}), flush=True)
    else:
        table(args.jsonl)


if __name__ == "__main__":
    main()
