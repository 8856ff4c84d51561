#!/usr/bin/env python3
"""Interop test (issue 28): Flashback's prunes beside a running LangGraph program lose nothing.

A REAL LangGraph graph (`SqliteSaver`, and with --pg `PostgresSaver`) resumes old finished
threads on its own thread, putting a checkpoint about every 20 ms, while Flashback runs:

  * `flashback prune DB --older-than 1s --status finished --strategy delete --yes` (retention,
    whole threads),
  * `flashback prune DB --older-than 1s --keep-last 1 --yes` (retention, keep_latest),
  * `flashback delete-branch DB THREAD FORK --yes` for each thread's side branch (a fork the
    program no longer extends; it resumes from the thread's newest checkpoint).

Each run starts from a copy of one base database (threads finished more than a second ago,
so they are old), starts the program, runs Flashback 0.05–0.3 s later, lets the program go on
a little, then checks: every checkpoint the program committed (its saver's `put` returned) is
still there, no checkpoint's parent is missing (no orphan), and the program never failed. A
thread the program resumed after Flashback judged it is skipped (it is no longer old or
finished), so the runs also count the skips Flashback reported.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/prune_race_test.py
           [--runs N] [--pg URL] [--no-sqlite]
--pg URL names a database the role may use to create (and drop) per-run copies of a template
database next to it. Prints one line per failed check and finally `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import pathlib
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from typing import Annotated, Any, Callable, Optional, TypedDict
from urllib.parse import urlsplit, urlunsplit

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from results import Results  # noqa: E402

THREADS = 24  # old finished threads
FORKED = 6  # of them, with a side branch
STEP = 0.02  # the program's pace: one checkpoint about every 20 ms


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def build(saver, pace: Callable[[], float]):
    def node(name):
        def run(state: State) -> dict:
            time.sleep(pace())
            return {"n": state["n"] + 1, "log": [name]}

        return run

    g = StateGraph(State)
    for name in ("a", "b", "c"):
        g.add_node(name, node(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver)


def recording(base: type) -> type:
    """The saver, remembering every checkpoint whose `put` returned (committed)."""

    class Recording(base):  # type: ignore[misc, valid-type]
        committed: list

        def put(self, config, checkpoint, metadata, new_versions):
            out = super().put(config, checkpoint, metadata, new_versions)
            c = out["configurable"]
            self.committed.append((c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"]))
            return out

    return Recording


# ---- the databases ------------------------------------------------------------------------


class Backend:
    name: str

    def saver(self, location: str):  # a context manager yielding a recording saver
        raise NotImplementedError

    def copy(self, run: int) -> str:
        raise NotImplementedError

    def drop(self, location: str) -> None:
        raise NotImplementedError

    def rows(self, location: str) -> list[tuple[str, str, str, Optional[str]]]:
        raise NotImplementedError


class Sqlite(Backend):
    name = "sqlite"

    def __init__(self, tmp: pathlib.Path) -> None:
        self.tmp = tmp
        self.base = str(tmp / "base.sqlite")

    def saver(self, location: str):
        conn = sqlite3.connect(location, check_same_thread=False)  # 5 s busy timeout
        saver = recording(SqliteSaver)(conn)
        saver.committed = []
        return _Closing(saver, conn)

    def copy(self, run: int) -> str:
        path = str(self.tmp / f"run{run}.sqlite")
        shutil.copy(self.base, path)
        return path

    def drop(self, location: str) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(location + suffix)
            except FileNotFoundError:
                pass

    def rows(self, location: str):
        conn = sqlite3.connect(location)
        try:
            return conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints"
            ).fetchall()
        finally:
            conn.close()


class _Closing:
    def __init__(self, saver, conn) -> None:
        self.saver, self.conn = saver, conn

    def __enter__(self):
        return self.saver

    def __exit__(self, *exc) -> None:
        self.conn.close()


class Postgres(Backend):
    name = "postgres"

    def __init__(self, url: str) -> None:
        import psycopg

        self.psycopg = psycopg
        self.url = url
        parts = urlsplit(url)
        self.prefix = f"{parts.path.lstrip('/') or 'postgres'}_race_{os.getpid()}_{random.randrange(1 << 30):x}"
        self.base = with_db(url, self.prefix + "_base")
        self.admin(f'DROP DATABASE IF EXISTS "{self.prefix}_base" WITH (FORCE)', f'CREATE DATABASE "{self.prefix}_base"')

    def admin(self, *sql: str) -> None:
        with self.psycopg.connect(self.url, autocommit=True) as conn:
            for s in sql:
                conn.execute(s)

    def saver(self, location: str):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = self.psycopg.connect(location, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = recording(PostgresSaver)(conn)
        saver.committed = []
        return _Closing(saver, conn)

    def copy(self, run: int) -> str:
        name = f"{self.prefix}_{run}"
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}" TEMPLATE "{self.prefix}_base"')
        return with_db(self.url, name)

    def drop(self, location: str) -> None:
        name = urlsplit(location).path.lstrip("/")
        self.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        self.admin(f'DROP DATABASE IF EXISTS "{self.prefix}_base" WITH (FORCE)')

    def rows(self, location: str):
        with self.psycopg.connect(location) as conn:
            return [
                tuple(r)
                for r in conn.execute(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id FROM checkpoints"
                ).fetchall()
            ]


def with_db(url: str, db: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "/" + db, p.query, p.fragment))


def make_base(backend: Backend) -> dict[str, str]:
    """THREADS finished threads; FORKED of them with a side branch that is not the newest
    checkpoint. Returns {thread: fork checkpoint id}."""
    forks: dict[str, str] = {}
    with backend.saver(backend.base) as saver:
        saver.setup()
        graph = build(saver, lambda: 0.0)
        for i in range(THREADS):
            cfg = {"configurable": {"thread_id": f"t{i:02d}"}}
            graph.invoke({"n": 0, "log": []}, cfg)
            if i < FORKED:
                history = list(graph.get_state_history(cfg))
                head = history[0].config
                fork = graph.update_state(history[2].config, {"n": 100})
                forks[f"t{i:02d}"] = fork["configurable"]["checkpoint_id"]
                # Run on from the main line's head: the fork is a side branch again.
                graph.invoke({"n": 0, "log": []}, head)
    time.sleep(1.2)  # every thread is now older than --older-than 1s
    return forks


# ---- one run --------------------------------------------------------------------------------


class Program:
    """The LangGraph program: resumes old threads one after another until stopped."""

    def __init__(self, backend: Backend, location: str, threads: list[str]) -> None:
        self.backend, self.location, self.threads = backend, location, threads
        self.errors: list[str] = []
        self.committed: list = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        try:
            with self.backend.saver(self.location) as saver:
                self.committed = saver.committed
                graph = build(saver, lambda: STEP)
                order = list(self.threads)
                random.shuffle(order)
                while not self.stop.is_set():
                    for t in order:
                        if self.stop.is_set():
                            break
                        graph.invoke({"n": 0, "log": []}, {"configurable": {"thread_id": t}})
        except Exception as e:  # noqa: BLE001 - the program died: that is the finding
            self.errors.append(f"{type(e).__name__}: {e}")


def flashback(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


def one_run(r: Results, backend: Backend, run: int, variant: str, forks: dict[str, str], heads: set) -> tuple[int, int]:
    location = backend.copy(run)
    where = f"{backend.name} run {run} {variant}"
    skipped = racing = 0
    try:
        resumed = [f"t{i:02d}" for i in range(THREADS) if i % 2 == 0]
        program = Program(backend, location, resumed)
        program.thread.start()
        time.sleep(random.uniform(0.05, 0.3))
        if variant == "delete-branch":
            for thread, fork in forks.items():
                p = flashback("delete-branch", location, thread, fork, "--yes", "--json")
                r.check(where, f"delete-branch {thread} exits 0", p.returncode == 0, p.stderr.strip())
        else:
            args = ["prune", location, "--older-than", "1s", "--yes", "--json"]
            args += ["--status", "finished", "--strategy", "delete"] if variant == "delete" else ["--keep-last", "1"]
            p = flashback(*args)
            if r.check(where, "prune exits 0", p.returncode == 0, p.stderr.strip()):
                skipped = json.loads(p.stdout)["totals"]["skipped"]
        time.sleep(0.15)
        program.stop.set()
        program.thread.join(timeout=30)
        r.check(where, "the program never failed", not program.errors, "; ".join(program.errors))
        rows = backend.rows(location)
        present = {(t, ns, i) for t, ns, i, _ in rows}
        lost = [c for c in program.committed if tuple(c) not in present]
        r.check(where, f"every committed checkpoint is there ({len(program.committed)} committed)", not lost, f"lost: {lost[:5]}")
        orphans = [(t, ns, i, p_) for t, ns, i, p_ in rows if p_ is not None and (t, ns, p_) not in present]
        # The one window no lock closes (README, "Pruning beside a running program"): the
        # program read a thread's head just before a batch deleted the thread and put the
        # head's child just after: that child's parent is the thread's old head. Any other
        # orphan is a failure.
        window = [o for o in orphans if variant == "delete" and (o[0], o[1], o[3]) in heads]
        stray = [o for o in orphans if o not in window]
        r.check(where, "no checkpoint lost its parent", not stray, f"orphans: {stray[:5]}")
        racing = len(window)
        if variant == "delete-branch":
            gone = all((t, "", f) not in present for t, f in forks.items())
            r.check(where, "the side branches are gone", gone)
        elif variant == "delete":
            # The threads the program never touched are pruned.
            untouched = {f"t{i:02d}" for i in range(THREADS) if i % 2 == 1}
            left = sorted({t for t, *_ in rows} & untouched)
            r.check(where, "the threads the program left alone are deleted", not left, str(left))
    finally:
        backend.drop(location)
    return skipped, racing


def suite(r: Results, backend: Backend, runs: int) -> None:
    started = time.monotonic()
    forks = make_base(backend)
    # Each thread's newest checkpoint in the base: what the program reads when it resumes.
    newest: dict[tuple[str, str], str] = {}
    for t, ns, i, _ in backend.rows(backend.base):
        newest[(t, ns)] = max(newest.get((t, ns), i), i)
    heads = {(t, ns, i) for (t, ns), i in newest.items()}
    skipped = racing = 0
    for run in range(runs):
        for variant in ("delete", "keep_latest", "delete-branch"):
            s, w = one_run(r, backend, run, variant, forks, heads)
            skipped += s
            racing += w
    r.note(
        f"{backend.name}: {runs} runs × 3 (retention delete, keep_latest, delete-branch) in "
        f"{time.monotonic() - started:.1f} s; {skipped} threads skipped as written to after being "
        f"chosen; {racing} resumed from a head read just before its thread was deleted (the "
        f"window no lock closes: the resumed run's first checkpoint has no parent row)"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=int(os.environ.get("FLASHBACK_RACE_RUNS", "20")))
    ap.add_argument("--pg", help="a postgres:// URL (per-run databases are made beside it)")
    ap.add_argument("--no-sqlite", action="store_true")
    args = ap.parse_args()
    r = Results()
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as tmp:
            suite(r, Sqlite(pathlib.Path(tmp)), args.runs)
    if args.pg:
        pg = Postgres(args.pg)
        try:
            suite(r, pg, args.runs)
        finally:
            pg.close()
    print(f"{r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
