#!/usr/bin/env python3
"""Timing helpers for bench/scale.sh: each subcommand appends one JSON line per figure to --out
(min / median / max over --runs runs, and every run) and prints a one-line summary to stderr.

    scale_time.py cmd    --out F --db LABEL --backend B --tool T --what W [--cold] --runs R -- CMD …
        runs CMD R times (stdout to /dev/null); --cold drops the OS page cache before each run
        (`sync; echo 3 > /proc/sys/vm/drop_caches`, needs root); --warmup: one untimed run
        first; --budget S: no more runs after
        a first run longer than S seconds.
    scale_time.py python --out F --db LABEL --backend B --location L --what W --runs R [--budget S]
        what a Python user does, in this process with a fresh saver and connection per run
        (imports excluded, connecting included):
          get_tuple  the distinct thread ids (one query), then saver.get_tuple() for each, and a
                     status from its pending writes (__error__ / __interrupt__)
          list       list(saver.list(None)): every checkpoint of every thread, decoded
          floor      one SQL query fetching the latest checkpoint row per thread
                     (checkpoint and metadata included, undecoded)
          get_one    saver.get_tuple() of one thread (--thread), its latest checkpoint
          list10     list(saver.list(config, limit=10)) of one thread (--thread)
        --budget S: if the first run takes longer than S seconds, stop there and record it as
        skipped (one run); --cold: the OS page cache dropped before each run (as cmd --cold).
    scale_time.py sql    --out F --db LABEL --backend B --location L --what W --runs R --query SQL
        one SQL query (a filter's floor: what the database alone takes to answer it), a fresh
        connection per run (connecting included), every row fetched; recorded under tool "sql".
    scale_time.py check  --out F --db LABEL --backend B --bin FLASHBACK --location L
        runs `flashback threads L --json` once and records the thread count, statuses and
        problems (and the human output's lines that mention a problem).
    scale_time.py record --out F --db LABEL --backend B --tool T --what W [--part K] < RESULT
        appends a result measured elsewhere (bench/first_paint.mjs's JSON line; with --part,
        its key K, as thread_open.mjs's "open" and "step").
    scale_time.py table  F
        the Markdown table of F's figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import time


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def record(args, runs: list[float], **extra) -> None:
    line = {
        "db": args.db,
        "backend": args.backend,
        "tool": args.tool,
        "what": args.what,
        "runs": [round(r, 4) for r in runs],
        "min": round(min(runs), 4) if runs else None,
        "median": round(statistics.median(runs), 4) if runs else None,
        "max": round(max(runs), 4) if runs else None,
        "loadavg_1m": round(os.getloadavg()[0], 2),  # other work on the machine skews figures
        **extra,
    }
    with open(args.out, "a") as f:
        f.write(json.dumps(line) + "\n")
    if runs:
        print(f"  {args.db} {args.backend} {args.tool} {args.what}: min {line['min']:.3f} s, median {line['median']:.3f} s, max {line['max']:.3f} s ({len(runs)} runs)", file=sys.stderr)
    else:
        print(f"  {args.db} {args.backend} {args.tool} {args.what}: {extra}", file=sys.stderr)


# --- cmd -------------------------------------------------------------------------------------


def cmd_cmd(args) -> None:
    runs = []
    if args.warmup:
        subprocess.run(args.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for i in range(args.runs):
        if args.cold:
            drop_caches()
        t0 = time.perf_counter()
        p = subprocess.run(args.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        runs.append(time.perf_counter() - t0)
        if p.returncode != 0:
            record(args, runs, error=f"exit {p.returncode}: {p.stderr.strip()[-500:]}")
            sys.exit(1)
        if i == 0 and args.budget and runs[0] > args.budget:
            record(args, runs, cold=args.cold, skipped=f"first run took {runs[0]:.0f} s > budget {args.budget:.0f} s: no more runs")
            return
    record(args, runs, cold=args.cold)


# --- python ----------------------------------------------------------------------------------


def open_saver(backend: str, location: str):
    """(saver, closer, cursor-ish execute function) with a fresh connection."""
    if backend == "sqlite":
        import sqlite3

        from langgraph.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(location, check_same_thread=False)
        return SqliteSaver(conn), conn.close, lambda q: conn.execute(q).fetchall()
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    conn = psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    return PostgresSaver(conn), conn.close, lambda q: conn.execute(q).fetchall()


FLOOR = {
    # The max per thread from the primary key's (covering) index, then one lookup per thread.
    "sqlite": "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata"
    " FROM (SELECT thread_id, checkpoint_ns, max(checkpoint_id) AS id FROM checkpoints GROUP BY thread_id, checkpoint_ns) m"
    " JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = m.checkpoint_ns AND c.checkpoint_id = m.id",
    # (The same on Postgres: 3× faster than DISTINCT ON, which renders every row's jsonb.)
    "postgres": "SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint::text, c.metadata::text"
    " FROM (SELECT thread_id, checkpoint_ns, max(checkpoint_id) AS id FROM checkpoints GROUP BY thread_id, checkpoint_ns) m"
    " JOIN checkpoints c ON c.thread_id = m.thread_id AND c.checkpoint_ns = m.checkpoint_ns AND c.checkpoint_id = m.id",
}


def python_once(backend: str, location: str, what: str, thread: str | None = None) -> dict:
    saver, close, query = open_saver(backend, location)
    config = {"configurable": {"thread_id": thread}}
    try:
        if what == "get_one":
            return {"found": saver.get_tuple(config) is not None}
        if what == "list10":
            return {"checkpoints": len(list(saver.list(config, limit=10)))}
        if what == "floor":
            return {"threads": len(query(FLOOR[backend]))}
        if what == "list":
            n = sum(1 for _ in saver.list(None))
            return {"checkpoints": n}
        rows = query("SELECT DISTINCT thread_id FROM checkpoints")
        ids = [r[0] if isinstance(r, tuple) else r["thread_id"] for r in rows]
        statuses = collections.Counter()
        for tid in ids:
            tup = saver.get_tuple({"configurable": {"thread_id": tid}})
            channels = {w[1] for w in tup.pending_writes or ()}
            statuses["failed" if "__error__" in channels else "interrupted" if "__interrupt__" in channels else "other"] += 1
        return {"threads": len(ids), "statuses": dict(sorted(statuses.items()))}
    finally:
        close()


class OverBudget(Exception):
    pass


def on_alarm(signum, frame):
    raise OverBudget()


def preload(backend: str) -> None:
    """Everything the timed runs import, imported before them (Python's start-up is not timed)."""
    import langchain_core.messages  # noqa: F401  (revived by the serializer)
    import langgraph.types  # noqa: F401  (Interrupt)

    if backend == "sqlite":
        import langgraph.checkpoint.sqlite  # noqa: F401
    else:
        import langgraph.checkpoint.postgres  # noqa: F401
        import psycopg  # noqa: F401


def cmd_python(args) -> None:
    runs, info = [], {}
    preload(args.backend)
    for i in range(args.runs):
        if args.cold:
            drop_caches()
        if i == 0 and args.budget:
            # A first run over the budget is stopped there (list(None) on 1M checkpoints).
            signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(int(args.budget))
        t0 = time.perf_counter()
        try:
            info = python_once(args.backend, args.location, args.kind, args.thread)
        except OverBudget:
            record(args, [], skipped=f"stopped after {time.perf_counter() - t0:.0f} s (budget {args.budget:.0f} s)")
            return
        finally:
            signal.alarm(0)
        runs.append(time.perf_counter() - t0)
        if i == 0 and args.budget and runs[0] > args.budget:
            record(args, runs, cold=args.cold, skipped=f"first run took {runs[0]:.0f} s > budget {args.budget:.0f} s: no more runs", **info)
            return
    record(args, runs, cold=args.cold, **info)


def cmd_sql(args) -> None:
    args.tool = "sql"
    preload(args.backend)
    runs, rows = [], 0
    for i in range(args.runs):
        t0 = time.perf_counter()
        _, close, query = open_saver(args.backend, args.location)
        try:
            rows = len(query(args.query))
        finally:
            close()
        runs.append(time.perf_counter() - t0)
        if i == 0 and args.budget and runs[0] > args.budget:
            record(args, runs, rows=rows, skipped=f"first run took {runs[0]:.0f} s > budget {args.budget:.0f} s: no more runs")
            return
    record(args, runs, rows=rows, query=args.query)


# --- check -----------------------------------------------------------------------------------


def cmd_check(args) -> None:
    p = subprocess.run([args.bin, "threads", args.location, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        record(args, [], error=f"exit {p.returncode}: {p.stderr.strip()[-500:]}")
        return
    threads = json.loads(p.stdout)
    if isinstance(threads, dict):  # tolerate a wrapper object
        threads = next(v for v in threads.values() if isinstance(v, list))
    statuses = collections.Counter(str(t.get("status")) for t in threads)
    problems = collections.Counter(t["problem"] for t in threads if t.get("problem"))
    human = subprocess.run([args.bin, "threads", args.location], capture_output=True, text=True)
    odd = [ln for ln in (human.stdout + human.stderr).splitlines() if "problem" in ln.lower() or "error:" in ln.lower() or "warning" in ln.lower()]
    record(
        args,
        [],
        threads=len(threads),
        statuses=dict(sorted(statuses.items())),
        problems=dict(problems.most_common(5)),
        problem_threads=sum(problems.values()),
        stderr=p.stderr.strip()[-500:],
        human_exit=human.returncode,
        human_odd_lines=odd[:10],
        human_odd_count=len(odd),
    )


# --- table -----------------------------------------------------------------------------------

ORDER = [
    ("flashback", "threads --json, cold"),
    ("flashback", "threads --json, warm"),
    ("flashback", "threads --json, sslmode=disable"),
    ("flashback", "threads --json, sslmode=prefer (TLS)"),
    ("app", "first paint (serve, sslmode=disable)"),
    ("app", "first paint (serve, sslmode=prefer (TLS))"),
    ("app", "first paint (serve)"),
    ("app", "open the thread"),
    ("app", "step to the previous checkpoint"),
    ("flashback", "state THREAD --json (process)"),
    ("flashback", "history THREAD --limit 10 --json (process)"),
    ("python", "get_tuple of one thread (in-process)"),
    ("python", "list(config, limit=10) of one thread (in-process)"),
    ("python", "get_tuple per thread"),
    ("python", "list(None)"),
    ("sql", "floor: latest row per thread, cold"),
    ("sql", "floor: latest row per thread"),
]


def fmt(s: float | None) -> str:
    if s is None:
        return "–"
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def cmd_table(args) -> None:
    rows = [json.loads(ln) for ln in open(args.file) if ln.strip()]
    # the newest figure for each (db, backend, tool, what)
    latest = {}
    for r in rows:
        latest[(r["db"], r["backend"], r["tool"], r["what"])] = r
    dbs = list(dict.fromkeys(r["db"] for r in rows))
    print("| database | backend | what | min | median | max | runs |")
    print("|---|---|---|---:|---:|---:|---:|")
    for db in dbs:
        for backend in ("sqlite", "postgres"):
            keyed = [(k, r) for k, r in latest.items() if k[0] == db and k[1] == backend and k[3] != "check" and (r.get("runs") or r.get("skipped") or r.get("error"))]
            rank = {w: i for i, w in enumerate(ORDER)}
            keyed.sort(key=lambda kr: rank.get((kr[0][2], kr[0][3]), 99))
            for (_, _, tool, what), r in keyed:
                note = f" ({r['skipped']})" if r.get("skipped") else f" (error: {r['error'][:80]})" if r.get("error") else ""
                print(f"| {db} | {backend} | {tool}: {what}{note} | {fmt(r['min'])} | {fmt(r['median'])} | {fmt(r['max'])} | {len(r.get('runs') or [])} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="sub", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True)
    common.add_argument("--db", required=True, help="a label: 20k×5, 100k×10, one thread × 10k")
    common.add_argument("--backend", choices=["sqlite", "postgres"], required=True)
    c = sub.add_parser("cmd", parents=[common])
    c.add_argument("--tool", required=True)
    c.add_argument("--what", required=True)
    c.add_argument("--runs", type=int, default=5)
    c.add_argument("--cold", action="store_true")
    c.add_argument("--warmup", action="store_true", help="one untimed run first")
    c.add_argument("--budget", type=float, default=0, help="no more runs after a first run longer than this")
    c.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("python", parents=[common])
    p.add_argument("--location", required=True)
    p.add_argument("--what", choices=["get_tuple", "list", "floor", "get_one", "list10"], required=True)
    p.add_argument("--thread", help="the thread of get_one and list10")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--budget", type=float, default=0)
    p.add_argument("--cold", action="store_true")
    q = sub.add_parser("sql", parents=[common])
    q.add_argument("--location", required=True)
    q.add_argument("--what", required=True)
    q.add_argument("--runs", type=int, default=5)
    q.add_argument("--budget", type=float, default=0)
    q.add_argument("--query", required=True)
    k = sub.add_parser("check", parents=[common])
    k.add_argument("--bin", required=True)
    k.add_argument("--location", required=True)
    r = sub.add_parser("record", parents=[common], help="append a JSON result (first_paint.mjs's) read from stdin")
    r.add_argument("--tool", required=True)
    r.add_argument("--what", required=True)
    r.add_argument("--part", help="record this key of the JSON (an object with runs/min/median/max)")
    t = sub.add_parser("table")
    t.add_argument("file")
    args = ap.parse_args()
    if args.sub == "cmd":
        if args.command[:1] == ["--"]:
            args.command = args.command[1:]
        cmd_cmd(args)
    elif args.sub == "python":
        args.kind = args.what
        args.tool = "python" if args.what != "floor" else "sql"
        args.what = {
            "get_tuple": "get_tuple per thread",
            "list": "list(None)",
            "floor": "floor: latest row per thread",
            "get_one": "get_tuple of one thread (in-process)",
            "list10": "list(config, limit=10) of one thread (in-process)",
        }[args.what]
        if args.cold:
            args.what += ", cold"
        cmd_python(args)
    elif args.sub == "sql":
        cmd_sql(args)
    elif args.sub == "check":
        args.tool, args.what = "flashback", "check"
        cmd_check(args)
    elif args.sub == "record":
        result = json.loads(sys.stdin.read().strip().splitlines()[-1])
        if args.part:
            # One figure of several (thread_open.mjs's "open" and "step"), with the shared keys.
            part = result.pop(args.part, None) or {"runs": []}
            result = {**{k: v for k, v in result.items() if not isinstance(v, dict)}, **part}
        runs = result.pop("runs")
        for k in ("min", "median", "max"):
            result.pop(k, None)
        record(args, runs, **result)
    else:
        cmd_table(args)


if __name__ == "__main__":
    main()
