#!/usr/bin/env python3
"""Regenerate tests/devserver-fixtures/py/: the `.langgraph_api/` folder the real
`langgraph dev` server leaves after the scenario of drive.py and a clean (SIGINT) shutdown,
byte for byte, plus expected.json (the server's own answers) and README.md.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -r tests/fixtures/requirements.txt
    /tmp/venv/bin/python tests/devserver/generate.py [--out DIR]

expected.json is what the server answered over HTTP (langgraph_sdk), verbatim: for every
thread `thread` (threads.get), `state` (threads.get_state, subgraphs=True), `history`
(threads.get_history, limit 1000, newest first), `subgraph_history` ({checkpoint_ns: history}
for the `researcher` subgraph), `runs` (runs.list); plus `search` (threads.search),
`store` (store.search_items under []) and `scenario` ({name: thread_id}, the fork's ids).
Nothing is normalized: the values are the ones stored in the pickles (timestamps, run ids,
the server's port in `langgraph_api_url` metadata and all). Keys are sorted.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True

import drive  # noqa: E402

OUT = HERE.parent / "devserver-fixtures" / "py"


def readme(rec: dict, files: dict) -> str:
    lines = [
        "# `langgraph dev` state folder (generated)",
        "",
        "Written by the real `langgraph dev` server (langgraph-cli 0.4.40, langgraph-api 0.16.7,",
        "langgraph-runtime-inmem 0.36.7, langgraph 1.2.22, langgraph-checkpoint 4.3.2) running",
        "`tests/devserver/project` and driven by `tests/devserver/drive.py`, then stopped with",
        "SIGINT (clean shutdown). Regenerate with `python tests/devserver/generate.py`; the files",
        "change completely (ids and timestamps are new).",
        "",
        "`.langgraph_api/` is exactly as the server left it:",
        "",
        "| file | bytes | what |",
        "|---|---|---|",
    ]
    what = {
        ".langgraph_checkpoint.1.pckl": "checkpoints: `{thread_id: defaultdict(dict, {checkpoint_ns: {checkpoint_id: ((type, checkpoint bytes), (type, metadata bytes), parent_id or None)}})}`",
        ".langgraph_checkpoint.2.pckl": "pending writes: `{(thread_id, ns, checkpoint_id): {(task_id, idx): (task_id, channel, (type, bytes), task_path)}}`",
        ".langgraph_checkpoint.3.pckl": "channel values: `{(thread_id, ns, channel, version): (type, bytes)}`",
        ".langgraph_ops.pckl": "the API's tables: `{runs, threads, assistants, assistant_versions, crons}` (lists of dicts)",
        ".langgraph_retry_counter.pckl": "`{run_id (UUID): attempts (int)}`",
        "store.pckl": "the memory Store: `{namespace tuple: {key: langgraph.store.base.Item}}`",
        "store.vectors.pckl": "the Store's vectors (no index configured: `{}`)",
    }
    for name, size in files.items():
        lines.append(f"| `{name}` | {size} | {what.get(name, '')} |")
    lines += ["", "`expected.json`: the server's answers (see tests/devserver/generate.py).", "",
              "## Threads", ""]
    for name, t in rec["threads"].items():
        hist = t["history"]
        state = t["state"]
        runs = ", ".join(r["status"] for r in reversed(t["runs"]))
        lines.append(f"* **{name}** `{t['thread_id']}`: status `{t['thread']['status']}`, "
                     f"{len(hist)} checkpoints in the root namespace, next {state['next']}, runs: {runs}; "
                     f"metadata {json.dumps({k: v for k, v in t['thread']['metadata'].items() if k in ('fixture', 'user_id')})}")
        for ns, h in t["subgraph_history"].items():
            lines.append(f"  * subgraph namespace `{ns}`: {len(h)} checkpoints")
        if name == "chat-fork":
            f = rec["scenario"]["fork"]
            lines.append(f"  * update_state fork of `{f['source_checkpoint_id']}` (waiting on `tools`): "
                         f"`{f['update_checkpoint_id']}`, then a run from it; two branches")
    detail = {
        "chat-tools": "two turns (get_weather Paris, add 2+40): model -> tools -> model each",
        "chat-failed": "the model node raised ValueError: a pending `__error__` write on the last checkpoint",
        "approval-waiting": "waiting at interrupt() in `review`: a pending `__interrupt__` write",
        "approval-resumed": "interrupted, then resumed with Command(resume=\"approved\") (`__resume__` write)",
        "research": "Send fan-out (two `work` tasks in one step, `__pregel_tasks` writes), then the `researcher` subgraph",
        "chat-fork": "weather in Oslo; forked before `tools` with the tool call changed to Bergen",
    }
    lines += ["", "What each thread exercises:", ""]
    lines += [f"* {k}: {v}" for k, v in detail.items()]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args()
    srv = drive.start()
    try:
        client = srv.client()
        scenario = drive.run_scenario(client)
        rec = drive.record(client, scenario)
    except BaseException:
        srv.stop()
        print(srv.log_text(), file=sys.stderr)
        raise
    state = srv.stop()
    out: pathlib.Path = args.out
    if (out / ".langgraph_api").exists():
        shutil.rmtree(out / ".langgraph_api")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(state, out / ".langgraph_api")
    leftovers = [p.name for p in (out / ".langgraph_api").iterdir() if p.name not in drive.FILES]
    if leftovers:
        raise SystemExit(f"unexpected files in the state folder: {leftovers}")
    files = {p.name: p.stat().st_size for p in sorted((out / ".langgraph_api").iterdir())}
    (out / "expected.json").write_text(json.dumps(rec, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    (out / "README.md").write_text(readme(rec, files))
    shutil.rmtree(srv.workdir, ignore_errors=True)
    print(f"wrote {out}: {files}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
