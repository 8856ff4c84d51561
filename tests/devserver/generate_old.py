#!/usr/bin/env python3
"""Regenerate tests/devserver-fixtures/py-old/: the OLD in-memory format, as `langgraph dev`
(langgraph-api's in-memory runtime of early 2025) wrote it with langgraph-checkpoint < 2.0.22:
`MemorySaver(factory=PersistentDict)` keeps two files, no blob file:

  .langgraph_checkpoint.1.pckl  {thread_id: defaultdict(dict, {ns: {checkpoint_id:
                                 ((type, checkpoint bytes WITH channel_values inside),
                                  (type, metadata bytes), parent_id or None)}})}
  .langgraph_checkpoint.2.pckl  {(thread_id, ns, checkpoint_id): {(task_id, idx):
                                 (task_id, channel, (type, bytes))}}   <- 3-tuples, no task_path

Made without the server (its old versions need an old langgraph-api): the saver is built as
the server built it (factory numbering the files 1, 2 in `.langgraph_api/`) and the project's
graphs (tests/devserver/project/graphs.py) run on it directly. Needs its own venv:

    python3 -m venv /tmp/venv-old
    /tmp/venv-old/bin/pip install langgraph==0.2.60 langgraph-checkpoint==2.0.9
    /tmp/venv-old/bin/python tests/devserver/generate_old.py

(pins used: langgraph 0.2.60, langgraph-checkpoint 2.0.9, langchain-core 0.3.86,
msgpack 1.2.4). expected.json: for every thread, LangGraph's get_state_history (newest first)
in the server's JSON form: checkpoint_id, parent_checkpoint_id, metadata, next, values
(messages as model_dump() dicts), tasks (name, interrupt values).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pathlib
import shutil
import sys
import uuid

if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

sys.dont_write_bytecode = True
HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "devserver-fixtures" / "py-old"
NAMESPACE = uuid.UUID("6d1f3b7e-3c0a-4f5e-9d8a-7f1e2a3b4c5d")  # as drive.py

from langchain_core.messages import BaseMessage  # noqa: E402
from langgraph.checkpoint.memory import MemorySaver, PersistentDict  # noqa: E402
from langgraph.types import Command  # noqa: E402


def load_graphs():
    spec = importlib.util.spec_from_file_location("flashback_devserver_graphs", HERE / "project" / "graphs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def jsonable(v):
    if isinstance(v, BaseMessage):
        return jsonable(v.model_dump())
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def main() -> int:
    state = OUT / ".langgraph_api"
    if state.exists():
        shutil.rmtree(state)
    state.mkdir(parents=True)
    n = 0

    def factory(*args):
        nonlocal n
        n += 1
        d = PersistentDict(*args, filename=str(state / f".langgraph_checkpoint.{n}.pckl"))
        with contextlib.suppress(FileNotFoundError):
            d.load()
        return d

    mod = load_graphs()
    threads = {}
    saver = MemorySaver(factory=factory)
    with saver:  # (2.0.9's __enter__ returns its ExitStack, not the saver)
        chat = mod._chat.compile(checkpointer=saver)
        approval = mod._approval.compile(checkpointer=saver)
        research = mod._research.compile(checkpointer=saver)

        def tid(name):
            threads[name] = str(uuid.uuid5(NAMESPACE, name))
            return {"configurable": {"thread_id": threads[name]}}

        chat.invoke({"messages": [("human", "what is the weather in Paris")]}, tid("chat-tools"))
        approval.invoke({"request": "a refund", "log": []}, tid("approval-waiting"))
        c = tid("approval-resumed")
        approval.invoke({"request": "a discount", "log": []}, c)
        approval.invoke(Command(resume="approved"), c)
        research.invoke({"topics": ["rust", "pickle"], "notes": []}, tid("research"))
        graphs = {"chat-tools": chat, "approval-waiting": approval, "approval-resumed": approval, "research": research}
        expected = {"versions": {"langgraph": "0.2.60", "langgraph-checkpoint": "2.0.9"}, "threads": {}}
        for name, t in threads.items():
            hist = []
            for s in graphs[name].get_state_history({"configurable": {"thread_id": t}}):
                hist.append({
                    "checkpoint_id": s.config["configurable"]["checkpoint_id"],
                    "parent_checkpoint_id": (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                    "metadata": jsonable(s.metadata),
                    "next": list(s.next),
                    "values": jsonable(s.values),
                    "tasks": [{"name": x.name, "interrupts": [jsonable(i.value) for i in x.interrupts]} for x in s.tasks],
                })
            expected["threads"][name] = {"thread_id": t, "history": hist}
    # leaving the `with` closed (synced) both PersistentDicts
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print({p.name: p.stat().st_size for p in sorted(state.iterdir())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
