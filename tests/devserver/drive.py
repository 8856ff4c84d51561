#!/usr/bin/env python3
"""Drive the real `langgraph dev` server (langgraph-cli[inmem]: langgraph-api with the
in-memory runtime langgraph-runtime-inmem) and keep the `.langgraph_api/` folder it writes.

Used by tests/devserver/generate.py (the committed fixtures) and
tests/interop/devserver_test.py. Functions:

  start(workdir=None, port=None, auth=False)
                                   copies tests/devserver/project into a temp dir (or reuses
                                   `workdir`, e.g. one holding a `.langgraph_api/` from an
                                   earlier run) and starts `langgraph dev --no-browser --port P
                                   --no-reload` there, headless; returns a Server once GET /ok
                                   answers (a timeout raises with the server's log). auth=True:
                                   the copy gets custom auth (auth.py, langgraph_sdk.Auth:
                                   every request without `x-api-key: test-key` is refused with
                                   401; the committed project is not changed)
  Server.stop(sig=SIGINT)          stops it (SIGINT: the clean Ctrl-C shutdown that writes every
                                   pickle) and returns the `.langgraph_api` folder
  run_scenario(client)             the scenario (below); returns {name: thread_id, ...}
  record(client, scenario)         the server's answers for every thread (expected.json)

When the server writes each file (measured with `python tests/devserver/drive.py --measure`
on langgraph-api 0.16.7 / langgraph-runtime-inmem 0.36.7; the code: langgraph_runtime_inmem/
_persistence.py, database.py, store.py, checkpoint.py):

  * at start: `.langgraph_api/` is created, empty; nothing is written at start or after a run
    (measured: still empty 1 s after the first run finished, 3.8 s after start).
  * every 10 s (`_persistence._flush_interval`; one daemon thread, counting from the first
    PersistentDict registered at start): every registered PersistentDict is written again,
    changed or not, each as `<name>.tmp` then `shutil.move` (an atomic rename):
    `.langgraph_checkpoint.{1,2,3}.pckl`, `.langgraph_ops.pckl`,
    `.langgraph_retry_counter.pckl`, `store.pckl` (measured: all six at t=+11.6 s, one run
    at t=2.8 s). `store.vectors.pckl` was NOT written by the periodic flush in our runs, only at
    shutdown. So a run's checkpoints reach the disk up to 10 s after it finishes.
  * at SIGINT (clean shutdown, `database.stop_pool`): the flush loop stops, then the ops file,
    the retry counter, store.pckl + store.vectors.pckl and the three checkpoint files are
    written (`PersistentDict.close()`: sync() then clear()); measured 0.2 s after the signal,
    holding everything, a run finished 0.1 s before included.
  * at kill -9: nothing more is written: the folder holds the last periodic flush (measured:
    the files of t=+11.3 s, without the run that finished at t=15.4 s). No `.langgraph_api`
    files at all if the server dies before its first flush. The ops file may then name runs
    "running" (the next start turns them back to "pending").

The scenario (thread ids are uuid5 of the names, so they are the same every time):

  chat-tools        two turns: get_weather then add, each model -> tools -> model
  chat-failed       the model raises (run status "error", pending __error__ write)
  approval-waiting  stops at interrupt() in `review` (status "interrupted")
  approval-resumed  interrupted, then resumed with Command(resume="approved")
  research          Send fan-out to `work` (2 topics) and the `researcher` subgraph
                    (checkpoint_ns "researcher:<task id>")
  chat-fork         one weather turn, then threads.update_state(checkpoint_id=<the checkpoint
                    waiting on `tools`>) replacing the AIMessage's tool call (Oslo -> Bergen)
                    as `model`, then a run from that fork (runs.wait(checkpoint_id=fork))
  every thread has metadata {"fixture": name, "user_id": ...}; the store holds
  ("users","u-1")/"prefs" and ("users","u-1","memories")/"m1".
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from typing import Any, Optional

HERE = pathlib.Path(__file__).resolve().parent
PROJECT = HERE / "project"
NAMESPACE = uuid.UUID("6d1f3b7e-3c0a-4f5e-9d8a-7f1e2a3b4c5d")
STATE_DIR = ".langgraph_api"
FILES = (
    ".langgraph_checkpoint.1.pckl",
    ".langgraph_checkpoint.2.pckl",
    ".langgraph_checkpoint.3.pckl",
    ".langgraph_ops.pckl",
    ".langgraph_retry_counter.pckl",
    "store.pckl",
    "store.vectors.pckl",
)
# The API key the server started with auth=True accepts (x-api-key).
AUTH_KEY = "test-key"
AUTH_PY = f'''"""Custom auth for the test server (written by tests/devserver/drive.py): the
x-api-key header must be {AUTH_KEY!r}, else 401."""

from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict) -> Auth.types.MinimalUserDict:
    key = headers.get(b"x-api-key") or headers.get("x-api-key")
    if isinstance(key, bytes):
        key = key.decode("utf-8", "replace")
    if key != {AUTH_KEY!r}:
        raise Auth.exceptions.HTTPException(status_code=401, detail="invalid API key")
    return {{"identity": "tester", "is_authenticated": True}}
'''
NAMES = ("chat-tools", "chat-failed", "approval-waiting", "approval-resumed", "research", "chat-fork")


def thread_id(name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, name))


def langgraph_cli() -> str:
    """The `langgraph` script of the running Python's environment (else PATH)."""
    cand = pathlib.Path(sys.executable).parent / "langgraph"
    if cand.exists():
        return str(cand)
    found = shutil.which("langgraph")
    if not found:
        raise RuntimeError("no `langgraph` CLI: pip install -r tests/fixtures/requirements.txt")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, workdir: pathlib.Path, port: int, proc: subprocess.Popen, log: pathlib.Path,
                 api_key: Optional[str] = None) -> None:
        self.workdir = workdir
        self.port = port
        self.proc = proc
        self.log = log
        self.url = f"http://127.0.0.1:{port}"
        self.api_key = api_key  # what a server started with auth=True wants in x-api-key

    @property
    def state_dir(self) -> pathlib.Path:
        return self.workdir / STATE_DIR

    def log_text(self, tail: int = 6000) -> str:
        try:
            return self.log.read_text(errors="replace")[-tail:]
        except OSError:
            return "(no log)"

    def client(self):
        from langgraph_sdk import get_sync_client

        # api_key=None: no key from the environment (LANGGRAPH_API_KEY ...) for a server without auth
        return get_sync_client(url=self.url, timeout=60, api_key=self.api_key)

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> pathlib.Path:
        """Stops the server (SIGINT: the clean shutdown that writes the pickles; SIGKILL:
        a crash) and returns its `.langgraph_api` folder."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
                raise RuntimeError(f"langgraph dev did not stop on signal {sig} in {timeout}s; log:\n{self.log_text()}")
        # the server's own children (none with --no-reload), if any, go with its group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        return self.state_dir

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:
            self.stop()


def with_auth(workdir: pathlib.Path) -> None:
    """Custom auth in a project copy: auth.py (AUTH_PY) and `"auth": {"path": "./auth.py:auth"}`
    in its langgraph.json."""
    (workdir / "auth.py").write_text(AUTH_PY)
    conf = json.loads((workdir / "langgraph.json").read_text())
    conf["auth"] = {"path": "./auth.py:auth"}
    (workdir / "langgraph.json").write_text(json.dumps(conf, indent=2) + "\n")


def start(workdir: Optional[pathlib.Path] = None, port: Optional[int] = None, timeout: float = 60.0,
          auth: bool = False) -> Server:
    """Starts `langgraph dev` headless in `workdir` (default: a fresh temp copy of the project;
    a given workdir without langgraph.json gets the project copied in, its `.langgraph_api/`
    kept). auth=True: with custom auth (with_auth; the key is AUTH_KEY)."""
    if workdir is None:
        workdir = pathlib.Path(tempfile.mkdtemp(prefix="flashback-devserver-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if not (workdir / "langgraph.json").exists():
        for f in PROJECT.iterdir():
            if f.is_file() and f.suffix in (".py", ".json"):
                shutil.copy2(f, workdir / f.name)
    if auth:
        with_auth(workdir)
    port = port or free_port()
    env = dict(os.environ)
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONHASHSEED="0",
    )
    log = workdir / "server.log"
    out = open(log, "ab")
    proc = subprocess.Popen(
        [langgraph_cli(), "dev", "--no-browser", "--port", str(port), "--no-reload", "--host", "127.0.0.1"],
        cwd=workdir,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: SIGINT reaches only the server
    )
    out.close()
    server = Server(workdir, port, proc, log, AUTH_KEY if auth else None)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {proc.returncode} before /ok answered; log:\n{server.log_text()}")
        try:
            probe = urllib.request.Request(f"{server.url}/ok", headers={"x-api-key": AUTH_KEY} if auth else {})
            with urllib.request.urlopen(probe, timeout=2) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop(signal.SIGKILL)
            raise RuntimeError(f"langgraph dev did not answer /ok within {timeout}s; log:\n{server.log_text()}")
        time.sleep(0.25)


# ---------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------


def human(text: str, mid: str) -> dict:
    return {"messages": [{"type": "human", "content": text, "id": mid}]}


def api_message(msg: dict) -> dict:
    """An AIMessage as the API reads it back: only the fields it coerces. (Sent whole, the
    fields it does not know for a dict, `invalid_tool_calls` and `usage_metadata`, land in
    `additional_kwargs`.)"""
    return {k: msg[k] for k in ("type", "content", "id", "name", "tool_calls") if k in msg}


def _new_thread(client, name: str, user: str) -> str:
    tid = thread_id(name)
    client.threads.create(thread_id=tid, metadata={"fixture": name, "user_id": user}, if_exists="do_nothing")
    return tid


def run_scenario(client) -> dict:
    """Runs every thread of the scenario (module docstring); returns what the recording and the
    test need: {"threads": {name: thread_id}, "fork": {...}}."""
    out: dict[str, Any] = {"threads": {}}
    client.store.put_item(["users", "u-1"], "prefs", {"theme": "dark", "lang": "en"})
    client.store.put_item(["users", "u-1", "memories"], "m1", {"text": "likes green tea"})

    t = out["threads"]["chat-tools"] = _new_thread(client, "chat-tools", "u-1")
    client.runs.wait(t, "chat", input=human("what is the weather in Paris", "h-1"))
    client.runs.wait(t, "chat", input=human("please add two numbers", "h-2"))

    t = out["threads"]["chat-failed"] = _new_thread(client, "chat-failed", "u-2")
    client.runs.wait(t, "chat", input=human("boom goes the model", "h-1"), raise_error=False)

    t = out["threads"]["approval-waiting"] = _new_thread(client, "approval-waiting", "u-1")
    client.runs.wait(t, "approval", input={"request": "a refund", "log": []})

    t = out["threads"]["approval-resumed"] = _new_thread(client, "approval-resumed", "u-2")
    client.runs.wait(t, "approval", input={"request": "a discount", "log": []})
    client.runs.wait(t, "approval", command={"resume": "approved"})

    t = out["threads"]["research"] = _new_thread(client, "research", "u-3")
    client.runs.wait(t, "research", input={"topics": ["rust", "pickle"], "notes": []})

    t = out["threads"]["chat-fork"] = _new_thread(client, "chat-fork", "u-1")
    client.runs.wait(t, "chat", input=human("what is the weather in Oslo", "h-1"))
    hist = client.threads.get_history(t, limit=1000)
    src = next(s for s in hist if s["next"] == ["tools"])
    ai = api_message(src["values"]["messages"][-1])
    ai["tool_calls"] = [dict(ai["tool_calls"][0], args={"city": "Bergen"})]
    upd = client.threads.update_state(
        t, {"messages": [ai]}, as_node="model", checkpoint_id=src["checkpoint"]["checkpoint_id"]
    )
    fork_id = upd["checkpoint"]["checkpoint_id"]
    client.runs.wait(t, "chat", input=None, checkpoint_id=fork_id)
    out["fork"] = {"thread": "chat-fork", "source_checkpoint_id": src["checkpoint"]["checkpoint_id"],
                   "update_checkpoint_id": fork_id}
    return out


def subgraph_namespaces(history: list[dict], node: str = "researcher") -> list[str]:
    """checkpoint_ns of the subgraph runs a thread's history shows (tasks named `node`)."""
    seen: list[str] = []
    for s in history:
        for task in s.get("tasks", []):
            if task.get("name") == node:
                ns = f"{node}:{task['id']}"
                if ns not in seen:
                    seen.append(ns)
    return seen


def record(client, scenario: dict) -> dict:
    """The server's answers: for every thread threads.get, threads.get_history (limit 1000;
    per subgraph namespace too), threads.get_state(subgraphs=True), runs.list; threads.search;
    store.search_items."""
    threads: dict[str, Any] = {}
    for name, tid in scenario["threads"].items():
        history = client.threads.get_history(tid, limit=1000)
        sub = {}
        for ns in subgraph_namespaces(history):
            sub[ns] = client.threads.get_history(tid, limit=1000, checkpoint={"checkpoint_ns": ns})
        threads[name] = {
            "thread_id": tid,
            "thread": client.threads.get(tid),
            "state": client.threads.get_state(tid, subgraphs=True),
            "history": history,
            "subgraph_history": sub,
            "runs": client.runs.list(tid, limit=100),
        }
    return {
        "scenario": scenario,
        "threads": threads,
        "search": client.threads.search(limit=100),
        "store": client.store.search_items([], limit=100),
    }


def python_saver(state_dir: pathlib.Path):
    """LangGraph's own InMemorySaver over a stopped server's `.langgraph_api` folder, built as
    the server builds it (langgraph_runtime_inmem/checkpoint.py: factory -> PersistentDict
    loaded from .langgraph_checkpoint.{1,2,3}.pckl), read-only (flag "r": never written back).
    The default JsonPlusSerializer reads what the server's Serializer wrote for these graphs."""
    from langgraph.checkpoint.memory import InMemorySaver, PersistentDict

    n = 0

    def factory(*args: Any) -> PersistentDict:
        nonlocal n
        n += 1
        d = PersistentDict(*args, filename=str(state_dir / f".langgraph_checkpoint.{n}.pckl"))
        d.flag = "r"
        with contextlib.suppress(FileNotFoundError):
            d.load()
        return d

    return InMemorySaver(factory=factory)


def python_graphs(saver) -> dict:
    """The project's graphs compiled with `saver` ({graph_id: compiled graph})."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("flashback_devserver_graphs", PROJECT / "graphs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # get_type_hints looks the module up by name
    spec.loader.exec_module(mod)
    return {name: getattr(mod, "_" + name).compile(checkpointer=saver) for name in ("chat", "approval", "research")}


# ---------------------------------------------------------------------------
# --measure: when each file is written
# ---------------------------------------------------------------------------


def snapshot(d: pathlib.Path) -> dict:
    out = {}
    if d.exists():
        for f in sorted(d.iterdir()):
            st = f.stat()
            out[f.name] = (st.st_size, round(st.st_mtime, 2))
    return out


def measure() -> None:
    def show(label: str, d: pathlib.Path, t0: float) -> None:
        snap = snapshot(d)
        print(f"{label}:")
        for name, (size, mtime) in snap.items():
            print(f"    {name:34s} {size:7d} B  written at t={mtime - t0:+.1f}s")
        if not snap:
            print("    (nothing)")

    for end in ("SIGINT", "SIGKILL"):
        print(f"== run, 12 s idle, {end}")
        t0 = time.time()
        srv = start()
        c = srv.client()
        show(f"after start (t={time.time() - t0:.1f}s)", srv.state_dir, t0)
        t = _new_thread(c, "measure", "u-9")
        c.store.put_item(["m"], "k", {"v": 1})
        c.runs.wait(t, "chat", input=human("what is the weather in Rome", "h-1"))
        show(f"right after a run (t={time.time() - t0:.1f}s)", srv.state_dir, t0)
        time.sleep(12)
        show(f"after 12 s idle (t={time.time() - t0:.1f}s)", srv.state_dir, t0)
        c.runs.wait(t, "chat", input=human("please add", "h-2"))
        t1 = time.time()
        srv.stop(signal.SIGINT if end == "SIGINT" else signal.SIGKILL)
        show(f"after a second run and {end} at t={t1 - t0:.1f}s", srv.state_dir, t0)
        shutil.rmtree(srv.workdir, ignore_errors=True)


if __name__ == "__main__":
    if "--measure" in sys.argv:
        measure()
    else:
        srv = start()
        try:
            sc = run_scenario(srv.client())
            rec = record(srv.client(), sc)
        finally:
            d = srv.stop()
        print(json.dumps(sc, indent=2))
        print("state folder:", d)
