#!/usr/bin/env python3
"""Interop test: real LangGraph resumes from Flashback's copy forks exactly as from its own
time travel.

For each backend (SQLite always; Postgres with --pg) and each scenario below, two fresh
copies A and B of the committed fixture database are made:

  A: `flashback fork A THREAD --checkpoint X --json` writes a copy fork of checkpoint X
     (the thread's head moves there), then the real graph, built on the backend's saver,
     continues the thread:  graph.invoke(None, {"configurable": {"thread_id": T}})
  B: LangGraph's own time travel from X:
     graph.invoke(None, {"configurable": {"thread_id": T, "checkpoint_id": X}})

and the outcomes are compared: final state values (random ids normalised) and `next`, the
checkpoints each side added after X ((source, step) lineage), the fork checkpoint itself as
the saver reads it back (parent X, source "fork", step X+1, X's channel values,
channel_versions and versions_seen, no pending writes) against X and against the fork
checkpoint LangGraph's time travel wrote in B, plus per-scenario checks (interrupts, the
re-raised error, pending writes).

Backends:

  sqlite / postgres (default)  LangGraph's own tables (copies of tests/fixtures/langgraph.sqlite,
                               or tests/fixtures/postgres.sql loaded), the official SqliteSaver /
                               PostgresSaver.
  three-table-sqlite / three-table-postgres (--three-table)
                               Flashback's three-table store (docs/three-table.md): A and B are
                               made by `flashback convert tests/fixtures/langgraph.sqlite DST
                               --to three-table` (a new SQLite file, or the Postgres database
                               after its tables are dropped), and LangGraph stores through
                               Flashback's Rust saver: saver_adapter.FlashbackSaver, a
                               `flashback bridge DB` subprocess, used synchronously, reviving
                               stored objects as Python's serializer does. The same scenarios and
                               checks; `flashback fork` / `flashback state` work on the
                               three-table databases.

Scenarios (X is picked by reading the thread's history with the backend's saver, never by a
hard-coded id, so regenerated fixtures keep working):

  forked             step 1 on the head's branch: before `step2` runs. X already has four
                     children (update branch, __copy__ fork, time-travel fork, ...), so the
                     new fork must become the head by id order alone.
  interrupt-waiting  the checkpoint waiting at the first interrupt() (pending
                     __interrupt__ write): both sides stop at the interrupt again
                     (next == ('review',)), then both are resumed twice with
                     Command(resume=...) and must finish identically.
  send-fanout        the checkpoint whose __pregel_tasks channel holds the three pending
                     Send("work", ...) packets (inside the fan-out).
  parallel-failure   the checkpoint where fetch_bad raised (pending __error__ write next to
                     fetch_ok's writes): both sides raise the same error again and are left
                     with the same next, tasks and pending writes.
  chat-tools-turn1   the checkpoint after the first AIMessage with tool_calls (next
                     ('tools',)); ToolNode runs again. ToolMessage ids are random uuids
                     (normalised); everything else in the chat is scripted.
  chat-tools-turn2   the same in the second turn (the newest such checkpoint; the fork sits
                     in the middle of the head's lineage).
  chat-tools-edit    an edit fork (`flashback fork --set messages=...`) of the turn-1
                     checkpoint changing a tool call's arguments, against LangGraph's
                     update_state with the same edited AIMessage, both resumed.

Usage:
  FLASHBACK_BIN=target/debug/flashback python tests/interop/fork_resume.py \
      [--three-table] [--no-sqlite] [--pg URL_A --pg URL_B | --pg SERVER_URL] [--only NAME ...]

  --pg given twice: two existing (empty or throwaway) databases; their checkpoint tables are
  dropped and reloaded from tests/fixtures/postgres.sql before every scenario (--three-table:
  dropped, three-table tables included, and converted from the SQLite fixture).
  --pg given once: a server URL; two throwaway databases are created there and dropped.
  --three-table: the three-table backends instead of LangGraph's tables (SQLite unless
  --no-sqlite; Postgres with --pg).
  --only: scenario names, chat-tools-edit included.

Prints one line per check and finally exactly `N passed, M failed`; exits 1 on failure.
"""

from __future__ import annotations

import os
import sys

# Run with PYTHONHASHSEED=0, as the fixture generator does, so that set iteration order
# (join barriers) is the same as when the fixtures were made. Restart once, before anything
# is printed.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, *sys.argv])

import argparse  # noqa: E402
import contextlib  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import pathlib  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import traceback  # noqa: E402
import uuid  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402
from urllib.parse import urlsplit, urlunsplit  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ next to the committed fixtures
ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))
sys.path.insert(0, str(ROOT / "tests" / "interop"))

import generate  # noqa: E402  (graph builders; main() only runs as __main__)
import results  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command, Interrupt, Send  # noqa: E402
from saver_adapter import FlashbackSaver  # noqa: E402

SQLITE_FIXTURE = FIXTURES / "langgraph.sqlite"
POSTGRES_FIXTURE = FIXTURES / "postgres.sql"
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
# the three-table store's tables (migrations/three-table/postgres): the same three names
THREE_TABLE_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "three_table_migrations")
ALL_TABLES = tuple(dict.fromkeys(CHECKPOINT_TABLES + THREE_TABLE_TABLES))


def cfg(thread_id: str, **extra: Any) -> dict:
    return {"configurable": {"thread_id": thread_id, **extra}}


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class Results(results.Results):
    def __init__(self) -> None:
        super().__init__(verbose=True)

    def equal(self, where: str, what: str, a: Any, b: Any, labels: tuple[str, str] = ("A", "B")) -> bool:
        ok = a == b
        detail = "" if ok else f"{labels[0]}: {short(a)}\n       {labels[1]}: {short(b)}"
        return self.check(where, what, ok, detail)

    def info(self, where: str, text: str) -> None:
        print(f"info {where}: {text}", flush=True)


def short(v: Any, limit: int = 600) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


# ---------------------------------------------------------------------------
# Normalisation (values compared between A and B)
# ---------------------------------------------------------------------------

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def norm(v: Any) -> Any:
    """Comparable form of state values: messages as dicts with random uuid ids masked
    (add_messages gives ToolMessages uuid4 ids), Interrupts without their ids; containers
    recursively; the rest as is."""
    if isinstance(v, BaseMessage):
        d = v.model_dump()
        if isinstance(d.get("id"), str) and UUID_RE.match(d["id"]):
            d["id"] = "<uuid>"
        return {"$message": type(v).__name__, **{k: norm(x) for k, x in d.items()}}
    if isinstance(v, Interrupt):
        # its id hashes the task id, which hashes the checkpoint id: differs between A and B
        return {"$interrupt": norm(v.value)}
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    return v


# ---------------------------------------------------------------------------
# Backends: fresh copies A and B of the fixture, and savers on them
# ---------------------------------------------------------------------------


class SqliteBackend:
    name = "sqlite"

    def __init__(self) -> None:
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="flashback-interop-"))
        self.n = 0

    def prepare(self) -> tuple[str, str]:
        self.n += 1
        out = []
        for side in ("a", "b"):
            p = self.tmp / f"{self.n:02d}-{side}.sqlite"
            shutil.copyfile(SQLITE_FIXTURE, p)
            out.append(str(p))
        return out[0], out[1]

    @contextlib.contextmanager
    def saver(self, loc: str):
        conn = sqlite3.connect(loc, check_same_thread=False)
        try:
            yield SqliteSaver(conn)
        finally:
            conn.close()

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _admin_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres")), parts.path.lstrip("/")


def _with_db(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


class PostgresBackend:
    name = "postgres"

    def __init__(self, urls: list[str]) -> None:
        import psycopg

        self.created: list[str] = []
        if len(urls) == 1:
            # a server URL: create two throwaway databases there
            admin, _ = _admin_url(urls[0])
            tag = f"{os.getpid()}_{uuid.uuid4().hex[:8]}"
            names = [f"flashback_interop_{tag}_a", f"flashback_interop_{tag}_b"]
            with psycopg.connect(admin, autocommit=True) as conn:
                for n in names:
                    conn.execute(f'CREATE DATABASE "{n}"')
                    self.created.append(n)
            self.admin = admin
            self.urls = [_with_db(urls[0], n) for n in names]
        elif len(urls) == 2:
            self.urls = list(urls)
        else:
            raise SystemExit("--pg takes one server URL or two database URLs")
        self.sql = POSTGRES_FIXTURE.read_text(encoding="utf-8")

    def prepare(self) -> tuple[str, str]:
        import psycopg

        for url in self.urls:
            with psycopg.connect(url, autocommit=True) as conn:
                # ALL_TABLES: also a three-table store left by a --three-table run
                conn.execute("DROP TABLE IF EXISTS " + ", ".join(f"public.{t}" for t in ALL_TABLES) + " CASCADE")
                conn.execute(self.sql)  # the dump, as ONE multi-statement script
        return self.urls[0], self.urls[1]

    @contextlib.contextmanager
    def saver(self, loc: str):
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row

        with Connection.connect(loc, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            yield PostgresSaver(conn)

    def close(self) -> None:
        if not self.created:
            return
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            for n in self.created:
                conn.execute(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)')


class ThreeTableSqliteBackend(SqliteBackend):
    """Flashback's three-table store (docs/three-table.md) in SQLite files: A and B are made
    by `flashback convert FIXTURE DST --to three-table`, and LangGraph stores through
    Flashback's Rust saver (`flashback bridge`, saver_adapter.FlashbackSaver)."""

    name = "three-table-sqlite"

    def __init__(self, bin_path: str) -> None:
        super().__init__()
        self.bin = bin_path

    def prepare(self) -> tuple[str, str]:
        self.n += 1
        out = [str(self.tmp / f"{self.n:02d}-{side}.sqlite") for side in ("a", "b")]
        for dst in out:
            convert_to_three_table(self.bin, str(SQLITE_FIXTURE), dst)
        return out[0], out[1]

    @contextlib.contextmanager
    def saver(self, loc: str):
        with FlashbackSaver(loc, bin=self.bin, objects=True) as saver:
            yield saver


class ThreeTablePostgresBackend(PostgresBackend):
    """Flashback's three-table store in Postgres: before every scenario the tables of both
    databases are dropped and the SQLite fixture is converted into them
    (`flashback convert FIXTURE URL --to three-table`); LangGraph stores through
    `flashback bridge URL`."""

    name = "three-table-postgres"

    def __init__(self, urls: list[str], bin_path: str) -> None:
        super().__init__(urls)
        self.bin = bin_path

    def prepare(self) -> tuple[str, str]:
        import psycopg

        for url in self.urls:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("DROP TABLE IF EXISTS " + ", ".join(f"public.{t}" for t in ALL_TABLES) + " CASCADE")
            convert_to_three_table(self.bin, str(SQLITE_FIXTURE), url)
        return self.urls[0], self.urls[1]

    @contextlib.contextmanager
    def saver(self, loc: str):
        with FlashbackSaver(loc, bin=self.bin, objects=True) as saver:
            yield saver


def convert_to_three_table(bin_path: str, src: str, dst: str) -> None:
    p = subprocess.run([bin_path, "convert", src, dst, "--to", "three-table"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"flashback convert {src} -> {dst} --to three-table: exit {p.returncode}: "
                           f"{(p.stderr or p.stdout).strip()[:2000]}")


# ---------------------------------------------------------------------------
# History helpers (Python saver)
# ---------------------------------------------------------------------------


def history(saver, tid: str) -> list:
    """Root-namespace checkpoints, newest first (materialised: SqliteSaver.list holds its
    lock while iterated)."""
    return list(saver.list(cfg(tid, checkpoint_ns="")))


def cid(tup) -> str:
    return tup.config["configurable"]["checkpoint_id"]


def parent_id(tup) -> Optional[str]:
    return tup.parent_config["configurable"]["checkpoint_id"] if tup.parent_config else None


def get(saver, tid: str, checkpoint_id: Optional[str] = None):
    extra = {"checkpoint_ns": ""}
    if checkpoint_id is not None:
        extra["checkpoint_id"] = checkpoint_id
    return saver.get_tuple(cfg(tid, **extra))


def lineage_after(saver, tid: str, x_id: str) -> Optional[list]:
    """Checkpoints from X's child to the head, oldest first; None if the head does not
    descend from X."""
    chain = []
    tup = get(saver, tid)
    while tup is not None:
        if cid(tup) == x_id:
            return list(reversed(chain))
        chain.append(tup)
        pid = parent_id(tup)
        tup = get(saver, tid, pid) if pid else None
    return None


def summary(tups: list) -> list:
    return [(t.metadata.get("source"), t.metadata.get("step")) for t in tups]


def writes_by_task_name(graph, tup) -> list:
    """Pending writes as sorted (task name, channel, repr(value)); task ids differ between
    A and B (they hash the checkpoint id), task names do not."""
    snap = graph.get_state(tup.config)
    names = {t.id: t.name for t in snap.tasks}
    return sorted((names.get(t, "<null task>" if t == NULL_TASK_ID else "?"), ch, repr(norm(v))) for t, ch, v in tup.pending_writes or [])


def tasks_view(snap) -> list:
    return sorted(
        (t.name, repr(t.error) if t.error is not None else None, [norm(i.value) for i in t.interrupts])
        for t in snap.tasks
    )


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Scenario:
    name: str
    thread: str
    build: Callable[[Any], Any]
    pick: Callable[[list], tuple[Any, str]]  # history (newest first) -> (X, why)
    kind: str = "run"  # "run" | "interrupt" | "failure"


def pick_forked(hist: list):
    by_id = {cid(t): t for t in hist}
    t = hist[0]
    while t is not None and t.metadata.get("step") != 1:
        t = by_id.get(parent_id(t))
    assert t is not None, "no step-1 checkpoint on the head's branch"
    return t, "step 1 on the head's branch (next: step2), a checkpoint with several children"


def pick_interrupt(hist: list):
    for t in hist:
        if any(w[1] == "__interrupt__" for w in t.pending_writes or []):
            return t, f"step {t.metadata.get('step')}: waiting at interrupt() (pending __interrupt__ write)"
    raise AssertionError("no checkpoint with a pending __interrupt__ write")


def pick_sends(hist: list):
    for t in hist:
        tasks = t.checkpoint["channel_values"].get("__pregel_tasks")
        if tasks and all(isinstance(s, Send) for s in tasks):
            return t, f"step {t.metadata.get('step')}: __pregel_tasks holds {len(tasks)} pending Sends"
    raise AssertionError("no checkpoint with pending Sends")


def pick_failure(hist: list):
    for t in hist:
        if any(w[1] == "__error__" for w in t.pending_writes or []):
            return t, f"step {t.metadata.get('step')}: fetch_bad failed here (pending __error__ write)"
    raise AssertionError("no checkpoint with a pending __error__ write")


def pick_tool_calls(turn: int):
    def pick(hist: list):
        found = []
        for t in reversed(hist):  # oldest first
            msgs = t.checkpoint["channel_values"].get("messages") or []
            if msgs and isinstance(msgs[-1], AIMessage) and msgs[-1].tool_calls and "branch:to:tools" in t.checkpoint["channel_values"]:
                found.append(t)
        assert len(found) >= turn, f"only {len(found)} checkpoints after an AIMessage with tool_calls"
        t = found[turn - 1]
        return t, f"step {t.metadata.get('step')}: after the turn-{turn} AIMessage with tool_calls (next: tools)"

    return pick


SCENARIOS = [
    Scenario("forked", "forked", generate.build_forked, pick_forked),
    Scenario("interrupt-waiting", "interrupt-waiting", generate.build_review, pick_interrupt, "interrupt"),
    Scenario("send-fanout", "send-fanout", generate.build_fanout, pick_sends),
    Scenario("parallel-failure", "parallel-failure", generate.build_failure, pick_failure, "failure"),
    Scenario("chat-tools-turn1", "chat-tools", generate.build_chat, pick_tool_calls(1)),
    Scenario("chat-tools-turn2", "chat-tools", generate.build_chat, pick_tool_calls(2)),
]

RESUMES = [Command(resume={"approved": True, "by": "interop"}), Command(resume="Fine by me.")]


# ---------------------------------------------------------------------------
# Running one scenario
# ---------------------------------------------------------------------------


def flashback_fork(bin_path: str, db: str, tid: str, x_id: str) -> tuple[int, str, str]:
    cmd = [bin_path, "fork", db, tid, "--checkpoint", x_id, "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def invoke(graph, inp, config) -> Optional[BaseException]:
    try:
        graph.invoke(inp, config)
    except Exception as exc:  # noqa: BLE001 -- the failure scenario expects one
        return exc
    return None


def exc_text(exc: Optional[BaseException]) -> Optional[str]:
    return None if exc is None else f"{type(exc).__name__}: {exc}"


def run_scenario(res: Results, backend, sc: Scenario, bin_path: str) -> None:
    where = f"{backend.name}/{sc.name}"
    tid = sc.thread
    a_loc, b_loc = backend.prepare()
    with backend.saver(b_loc) as saver_b, backend.saver(a_loc) as saver_a:
        # -- pick X (from B; A is an identical copy) ---------------------------------
        x, why = sc.pick(history(saver_b, tid))
        x_id, x_step = cid(x), x.metadata.get("step")
        res.info(where, f"X = {x_id} ({why})")

        # -- A: Flashback's copy fork, then LangGraph continues the thread -----------
        x_a = get(saver_a, tid, x_id)  # (SQLite: A is now open in WAL mode, as in real use)
        count_before = len(history(saver_a, tid))
        rc, out, err = flashback_fork(bin_path, a_loc, tid, x_id)
        if not res.check(where, "flashback fork exits 0", rc == 0, f"exit {rc}; stderr: {err.strip()[:2000]}"):
            return
        try:
            reply = json.loads(out)
        except ValueError:
            res.check(where, "flashback fork --json prints JSON", False, short(out))
            return
        fork_id = reply.get("checkpoint_id")
        res.equal(where, "--json: thread_id, checkpoint_ns, parent_checkpoint_id, step",
                  {k: reply.get(k) for k in ("thread_id", "checkpoint_ns", "parent_checkpoint_id", "step")},
                  {"thread_id": tid, "checkpoint_ns": "", "parent_checkpoint_id": x_id, "step": x_step + 1},
                  ("flashback", "expected"))
        res.check(where, "--json: checkpoint_id is a new id", isinstance(fork_id, str) and fork_id != x_id and get(saver_b, tid, fork_id) is None, short(reply))
        res.equal(where, "exactly one checkpoint added", len(history(saver_a, tid)) - count_before, 1, ("added", "expected"))

        head = get(saver_a, tid)
        res.equal(where, "the thread's head is the fork (Python get_tuple without id)", cid(head), fork_id, ("head", "fork"))
        fork = get(saver_a, tid, fork_id)
        if not res.check(where, "Python's saver reads the fork back", fork is not None):
            return
        res.equal(where, "fork: parent is X", parent_id(fork), x_id, ("fork parent", "X"))
        res.equal(where, "fork: metadata source/step", (fork.metadata.get("source"), fork.metadata.get("step")), ("fork", x_step + 1), ("fork", "expected"))
        res.equal(where, "fork: channel_values == X's (Python objects)", fork.checkpoint["channel_values"], x_a.checkpoint["channel_values"], ("fork", "X"))
        res.equal(where, "fork: channel_versions == X's", dict(fork.checkpoint["channel_versions"]), dict(x_a.checkpoint["channel_versions"]), ("fork", "X"))
        res.equal(where, "fork: versions_seen == X's", fork.checkpoint["versions_seen"], x_a.checkpoint["versions_seen"], ("fork", "X"))
        res.equal(where, "fork: no pending writes", list(fork.pending_writes or []), [], ("fork", "expected"))

        graph_a = sc.build(saver_a)
        graph_b = sc.build(saver_b)
        snap_fork = graph_a.get_state(fork.config)
        snap_x = graph_b.get_state(x.config)
        res.equal(where, "get_state(fork).next == get_state(X).next", snap_fork.next, snap_x.next, ("fork", "X"))

        exc_a = invoke(graph_a, None, cfg(tid))
        # -- B: LangGraph's own time travel from X --------------------------------
        exc_b = invoke(graph_b, None, cfg(tid, checkpoint_id=x_id))

        if sc.kind == "failure":
            res.check(where, "both sides raise again", exc_a is not None and exc_b is not None,
                      f"A: {exc_text(exc_a)!r}, B: {exc_text(exc_b)!r}")
            res.equal(where, "same error (type and text)", exc_text(exc_a), exc_text(exc_b))
            x_errors = [v for _, ch, v in x.pending_writes or [] if ch == "__error__"]
            res.equal(where, "the error is the one stored at X (__error__ write)", [repr(exc_a)], x_errors, ("A", "X"))
        else:
            res.check(where, "both sides run without error", exc_a is None and exc_b is None,
                      f"A: {exc_text(exc_a)!r}, B: {exc_text(exc_b)!r}"
                      + ("\n" + "".join(traceback.format_exception(exc_a or exc_b)) if (exc_a or exc_b) else ""))

        # LangGraph's time travel wrote its own fork as X's newest child: compare
        lin_a, lin_b = lineage_after(saver_a, tid, x_id), lineage_after(saver_b, tid, x_id)
        if res.check(where, "both heads descend from X", lin_a is not None and lin_b is not None and lin_a and lin_b,
                     f"A: {lin_a and summary(lin_a)}, B: {lin_b and summary(lin_b)}"):
            res.equal(where, "checkpoints after X: (source, step) lineage", summary(lin_a), summary(lin_b))
            res.equal(where, "Flashback's fork is the first checkpoint after X in A", cid(lin_a[0]), fork_id, ("first", "fork"))
            lg_fork = lin_b[0]
            res.equal(where, "fork's channel_values == LangGraph time-travel fork's", fork.checkpoint["channel_values"], lg_fork.checkpoint["channel_values"], ("flashback", "langgraph"))
            res.equal(where, "fork's channel_versions == LangGraph time-travel fork's", dict(fork.checkpoint["channel_versions"]), dict(lg_fork.checkpoint["channel_versions"]), ("flashback", "langgraph"))
            vs_f = {k: v for k, v in fork.checkpoint["versions_seen"].items() if k != "__interrupt__"}
            vs_l = {k: v for k, v in lg_fork.checkpoint["versions_seen"].items() if k != "__interrupt__"}
            res.equal(where, "fork's versions_seen == LangGraph's (nodes; __interrupt__ is refreshed by LangGraph on resume)", vs_f, vs_l, ("flashback", "langgraph"))

        def compare_states(label: str) -> tuple:
            sa, sb = graph_a.get_state(cfg(tid)), graph_b.get_state(cfg(tid))
            res.equal(where, f"{label}: state values", norm(sa.values), norm(sb.values))
            res.equal(where, f"{label}: next", sa.next, sb.next)
            res.equal(where, f"{label}: tasks (name, error, interrupt values)", tasks_view(sa), tasks_view(sb))
            res.equal(where, f"{label}: head's pending writes (task name, channel, value)",
                      writes_by_task_name(graph_a, get(saver_a, tid)), writes_by_task_name(graph_b, get(saver_b, tid)))
            return sa, sb

        sa, sb = compare_states("after the resume")
        if sc.kind == "interrupt":
            res.equal(where, "both stop at the interrupt again", (sa.next, sb.next), (("review",), ("review",)), ("A, B", "expected"))
            for i, cmd in enumerate(RESUMES, 1):
                ea, eb = invoke(graph_a, cmd, cfg(tid)), invoke(graph_b, cmd, cfg(tid))
                res.check(where, f"Command(resume=...) #{i} runs on both", ea is None and eb is None,
                          f"A: {exc_text(ea)!r}, B: {exc_text(eb)!r}")
                sa, sb = compare_states(f"after Command(resume) #{i}")
            res.equal(where, "both finish (next == ())", (sa.next, sb.next), ((), ()), ("A, B", "expected"))
            res.check(where, "the result went through review", "published" in str(sa.values.get("result")), short(sa.values))
        elif sc.kind == "failure":
            res.check(where, "the failed node is pending again", bool(sa.next) and any(t.error is not None for t in sa.tasks), short(sa.tasks))
        else:
            res.equal(where, "the run finished (next == ())", (sa.next, sb.next), ((), ()), ("A, B", "expected"))


# ---------------------------------------------------------------------------


def run_edit_scenario(res: Results, backend, bin_path: str) -> None:
    """Edit fork: change the arguments of the turn-1 tool calls, let LangGraph resume, and
    compare with LangGraph's own `update_state` carrying the same edited AIMessage (add_messages
    replaces a message with the same id), followed by the same resume."""
    where = f"{backend.name}/chat-tools-edit"
    tid = "chat-tools"
    a_loc, b_loc = backend.prepare()
    with backend.saver(b_loc) as saver_b, backend.saver(a_loc) as saver_a:
        x, why = pick_tool_calls(1)(history(saver_b, tid))
        x_id = cid(x)
        res.info(where, f"X = {x_id} ({why}); edit: add(a=2, b=3) -> add(a=7, b=3)")
        p = subprocess.run([bin_path, "state", a_loc, tid, "--checkpoint", x_id, "--json"],
                           capture_output=True, text=True, timeout=300)
        if not res.check(where, "flashback state exits 0", p.returncode == 0, p.stderr[:2000]):
            return
        messages = json.loads(p.stdout)["values"]["messages"]
        last = messages[-1]
        for call in last["tool_calls"]:
            if call["name"] == "add":
                call["args"] = {"a": 7, "b": 3}
        p = subprocess.run([bin_path, "fork", a_loc, tid, "--checkpoint", x_id, "--set",
                            "messages=" + json.dumps(messages), "--json"],
                           capture_output=True, text=True, timeout=300)
        if not res.check(where, "flashback fork --set exits 0", p.returncode == 0, p.stderr[:2000]):
            return
        fork = get(saver_a, tid, json.loads(p.stdout)["checkpoint_id"])
        res.equal(where, "fork: metadata source", fork.metadata.get("source"), "update", ("fork", "expected"))
        edited = fork.checkpoint["channel_values"]["messages"][-1]
        res.check(where, "the edited message is still an AIMessage with the new args",
                  isinstance(edited, AIMessage) and edited.tool_calls[0]["args"] == {"a": 7, "b": 3}, short(edited))

        graph_a, graph_b = generate.build_chat(saver_a), generate.build_chat(saver_b)
        ai = x.checkpoint["channel_values"]["messages"][-1]
        calls = [dict(c, args={"a": 7, "b": 3}) if c["name"] == "add" else c for c in ai.tool_calls]
        graph_b.update_state(x.config, {"messages": [ai.model_copy(update={"tool_calls": calls})]}, as_node="agent")
        ea, eb = invoke(graph_a, None, cfg(tid)), invoke(graph_b, None, cfg(tid))
        res.check(where, "both sides run without error", ea is None and eb is None, f"A: {exc_text(ea)!r}, B: {exc_text(eb)!r}")
        sa, sb = graph_a.get_state(cfg(tid)), graph_b.get_state(cfg(tid))
        res.equal(where, "final state values (Flashback edit fork vs LangGraph update_state)", norm(sa.values), norm(sb.values))
        res.equal(where, "the run finished (next == ())", (sa.next, sb.next), ((), ()), ("A, B", "expected"))
        tool_results = [m.content for m in sa.values["messages"] if type(m).__name__ == "ToolMessage"]
        res.check(where, "the tool ran with the edited arguments (7 + 3 = 10)", "10" in tool_results, short(tool_results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pg", action="append", default=[], metavar="URL",
                    help="twice: two throwaway database URLs (A and B); once: a server URL to create them on")
    ap.add_argument("--no-sqlite", action="store_true", help="skip the SQLite backend")
    ap.add_argument("--three-table", action="store_true",
                    help="run on Flashback's three-table store (converted fixture, `flashback bridge` saver) "
                         "instead of LangGraph's own tables")
    ap.add_argument("--only", action="append", default=[], metavar="SCENARIO")
    args = ap.parse_args()
    # "Deserializing unregistered type ..." warnings are not what this test is about
    logging.getLogger("langgraph.checkpoint.serde.jsonplus").setLevel(logging.ERROR)

    bin_path = os.environ.get("FLASHBACK_BIN") or str(
        pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "flashback"
    )
    res = Results()
    if not os.access(bin_path, os.X_OK):
        res.check("setup", f"flashback binary at {bin_path}", False, "set FLASHBACK_BIN")
        print(f"{res.passed} passed, {res.failed} failed")
        return 1
    scenarios = [s for s in SCENARIOS if not args.only or s.name in args.only]

    backends: list[Callable[[], Any]] = []
    if not args.no_sqlite:
        backends.append((lambda: ThreeTableSqliteBackend(bin_path)) if args.three_table else SqliteBackend)
    if args.pg:
        if args.three_table:
            backends.append(lambda: ThreeTablePostgresBackend(args.pg, bin_path))
        else:
            backends.append(lambda: PostgresBackend(args.pg))
    for make in backends:
        try:
            backend = make()
        except Exception as exc:  # noqa: BLE001
            res.check("setup", "backend setup", False, f"{type(exc).__name__}: {exc}")
            continue
        try:
            for sc in scenarios:
                try:
                    run_scenario(res, backend, sc, bin_path)
                except Exception as exc:  # noqa: BLE001
                    res.check(f"{backend.name}/{sc.name}", "scenario ran to the end", False,
                              "".join(traceback.format_exception(exc)).strip())
            if not args.only or "chat-tools-edit" in args.only:
                try:
                    run_edit_scenario(res, backend, bin_path)
                except Exception as exc:  # noqa: BLE001
                    res.check(f"{backend.name}/chat-tools-edit", "scenario ran to the end", False,
                              "".join(traceback.format_exception(exc)).strip())
        finally:
            backend.close()

    print(f"{res.passed} passed, {res.failed} failed")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
