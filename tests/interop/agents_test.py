"""Issue 32: the threads of today's agents (tests/interop/agents_fixture.py: langchain
`create_agent` with middleware, deepagents, langgraph-supervisor, langgraph-swarm; scripted fake
models) as the `flashback` CLI shows them, against what Python's LangGraph returns, on SQLite
and on PostgreSQL.

For every thread:

* every checkpoint of every namespace: `flashback state DB T --ns NS --checkpoint C --json`
  (the step record, `live: false`) == `get_state` of a config with that id (the entries of
  `get_state_history`): values (Flashback's minus its control channels, against Python's in the
  JSON view of tests/fixtures/jsonview.py), next (as multisets), tasks (ids, names), interrupts
  (the whole Interrupt: id, value, response_schema), `approvals` (HumanInTheLoopMiddleware
  interrupts: mode, actions, allowed decisions, per-call response_schema), and the channels
  marked `default` (Python's empty default of a channel the checkpoint does not store);
* the live state of every namespace: `flashback state DB T --ns NS --json` (no checkpoint,
  `live: true`) == `get_state` without an id: the same, plus `status` (root) and `applied` (the
  finished tasks whose writes are folded in). The per-call HITL thread with one of two
  interrupts answered shows 3 messages, next `tools`, one open interrupt;
* tokens: `graph --json`'s `tokens` (and `threads --json`'s) == the sum of `usage_metadata` over
  the distinct AI message ids of `get_state_history` of every namespace; a row whose step ran no
  model (`model` / `agent` node) has none, a model row has those of the messages it added; the
  thread's `models` are the `response_metadata.model_name`s of those messages;
* names: each row's `ran` == the names of its parent's tasks (a Send task by its target, so
  `tools` twice); no `Send` in any row's `ran` or in `activity --json`;
* statuses in `threads --json`.

Then the waiting HITL threads are resumed in Python with the payload built from Flashback's
`approvals` as the contract documents it (batched `{"decisions": [...]}`, a per-call
decision, and `{interrupt_id: answer}` for the deep agent waiting inside its sub-agent), and
must finish.

A channel Python shows as its empty default that never holds a value anywhere in the thread may
be absent in Flashback: counted and printed, not a failure.

Usage: FLASHBACK_BIN=... python tests/interop/agents_test.py [--pg URL] [--no-sqlite] [--verbose]
(tests/interop/agents.sh makes the venv and the Postgres database). Ends with `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))

import agents_fixture as af  # noqa: E402
from jsonview import view  # noqa: E402
from results import Results  # noqa: E402

BIN = os.environ.get("FLASHBACK_BIN") or str(
    pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug" / "flashback"
)
MODEL_NODES = {"model", "agent"}  # create_agent / deepagents, create_react_agent (the supervisor)


class _Unregistered(logging.Filter):
    """LangGraph warns on every read of the structured-output model (agents_fixture.Weather)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "unregistered type" not in record.getMessage()


logging.getLogger("langgraph.checkpoint.serde.jsonplus").addFilter(_Unregistered())


def flashback(*args: str) -> tuple[int, Any, str]:
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    out = None
    if p.returncode == 0 and p.stdout.strip().startswith(("{", "[")):
        out = json.loads(p.stdout)
    return p.returncode, out, p.stderr.strip()


def jv(obj: Any) -> Any:
    """Python's value in Flashback's JSON view."""
    return json.loads(json.dumps(view(obj)))


def short(x: Any, n: int = 1500) -> str:
    s = x if isinstance(x, str) else json.dumps(x, sort_keys=True, default=str)
    return s if len(s) <= n else s[:n] + f"... ({len(s)} chars)"


def diff(got: dict, want: dict) -> str:
    """Channel by channel (a list: its lengths and first differing item)."""
    parts = []
    for k in sorted(set(got) | set(want)):
        a, b = got.get(k, "<absent>"), want.get(k, "<absent>")
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            i = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            parts.append(f"{k}: got {len(a)} items, want {len(b)}; first difference at [{i}]: "
                         f"got {short(a[i] if i < len(a) else '<none>', 500)}\n         want {short(b[i] if i < len(b) else '<none>', 500)}")
        else:
            parts.append(f"{k}: got {short(a, 600)}\n         want {short(b, 600)}")
    return "\n       ".join(parts)


def empty(v: Any) -> bool:
    return v in ([], {}, None, "")


def cid_of(snap) -> str:
    return snap.config["configurable"]["checkpoint_id"]


# ---------------------------------------------------------------------------
# HumanInTheLoopMiddleware interrupts, as the contract's `approvals`
# ---------------------------------------------------------------------------


def decisions_of(schema: Any) -> list:
    """The decision types a per-call `response_schema` allows, in order."""
    if not isinstance(schema, dict):
        return []
    if isinstance(schema.get("discriminator"), dict):
        return list(schema["discriminator"].get("mapping", {}))
    const = schema.get("properties", {}).get("type", {}).get("const")
    return [const] if const else []


def expected_approvals(snap) -> list:
    out = []
    for task in snap.tasks:
        for i in task.interrupts:
            v = i.value
            if isinstance(v, dict) and isinstance(v.get("action_requests"), list) and isinstance(v.get("review_configs"), list):
                allowed = {c["action_name"]: list(c["allowed_decisions"]) for c in v["review_configs"]}
                actions = [{"name": a["name"], "args": jv(a["args"]), "description": a.get("description"),
                            "allowed_decisions": allowed.get(a["name"], [])} for a in v["action_requests"]]
                out.append({"interrupt_id": i.id, "task_id": task.id, "node": task.name, "mode": "batched",
                            "actions": actions, "response_schema": None})
            elif isinstance(v, dict) and v.get("type") == "tool_approval":
                schema = json.loads(json.dumps(i.response_schema)) if i.response_schema is not None else None
                actions = [{"name": v["name"], "args": jv(v["args"]), "description": v.get("description"),
                            "allowed_decisions": decisions_of(schema), "tool_call_id": v.get("tool_call_id")}]
                out.append({"interrupt_id": i.id, "task_id": task.id, "node": task.name, "mode": "per_call",
                            "actions": actions, "response_schema": schema})
    return sorted(out, key=lambda a: a["interrupt_id"])


def approvals_view(approvals: Any) -> Any:
    """Flashback's approvals with the contract's fields (a batched action's tool_call_id is not
    in the interrupt, so it is not compared)."""
    if not isinstance(approvals, list):
        return approvals
    out = []
    for a in approvals:
        keys = ("name", "args", "description", "allowed_decisions") + (("tool_call_id",) if a.get("mode") == "per_call" else ())
        out.append({"interrupt_id": a.get("interrupt_id"), "task_id": a.get("task_id"), "node": a.get("node"),
                    "mode": a.get("mode"), "response_schema": a.get("response_schema"),
                    "actions": [{k: x.get(k) for k in keys} for x in a.get("actions", [])]})
    return sorted(out, key=lambda a: str(a["interrupt_id"]))


# ---------------------------------------------------------------------------
# One snapshot
# ---------------------------------------------------------------------------


class Tally:
    def __init__(self) -> None:
        self.absent: Counter = Counter()  # (backend, channel) -> how many snapshots


def check_snapshot(r: Results, at: str, db: str, t: af.Thread, ns: str, snap, live: bool, valued: set,
                   tally: Tally, label: str) -> Optional[dict]:
    cid = cid_of(snap)
    args = ["state", db, t.thread_id, "--ns", ns, "--json"] + ([] if live else ["--checkpoint", cid])
    code, st, err = flashback(*args)
    if not r.check(at, f"state{'' if live else ' --checkpoint'} --json exits 0", code == 0 and isinstance(st, dict), err[-800:]):
        return None
    if live:
        r.check(at, "live: the namespace's latest checkpoint", st.get("checkpoint_id") == cid, f"{st.get('checkpoint_id')} vs {cid}")
    r.check(at, f"live is {live}", st.get("live") is live, str(st.get("live")))

    # values
    channels = {c["channel"]: c for c in st.get("channels", [])}
    control = {k for k, c in channels.items() if c.get("control")}
    got = {k: v for k, v in st.get("values", {}).items() if k not in control}
    want = jv(snap.values)
    stored = t.saver.get_tuple(t.config(ns, cid)).checkpoint
    absent = [k for k in want if k not in got and empty(want[k]) and k not in valued]
    for k in absent:
        tally.absent[(label, k)] += 1
    want = {k: v for k, v in want.items() if k not in absent}
    r.check(at, "values == get_state values", got == want, diff(got, want))
    versions = stored.get("channel_versions", {})
    want_default = sorted(k for k, v in want.items() if k not in versions and empty(v) and k in got)
    got_default = sorted(k for k in got if channels.get(k, {}).get("default") is True)
    r.check(at, "channels marked default == Python's empty defaults", got_default == want_default,
            f"{got_default} vs {want_default}")

    tasks = st.get("tasks", {})
    r.check(at, "next == get_state next (multiset)", sorted(tasks.get("next", [])) == sorted(snap.next),
            f"{sorted(tasks.get('next', []))} vs {sorted(snap.next)}")
    fb_tasks = tasks.get("tasks", [])
    r.check(at, "tasks (id, name) == get_state tasks", sorted((x.get("id"), x.get("name")) for x in fb_tasks)
            == sorted((x.id, x.name) for x in snap.tasks),
            f"{sorted((x.get('id'), x.get('name')) for x in fb_tasks)}\n       vs {sorted((x.id, x.name) for x in snap.tasks)}")
    got_i = sorted((i for x in fb_tasks for i in x.get("interrupts", [])), key=lambda i: str(i.get("id")))
    want_i = sorted(jv(list(snap.interrupts)), key=lambda i: str(i.get("id")))
    r.check(at, "interrupts (id, value, response_schema) == get_state interrupts", got_i == want_i,
            f"{short(got_i)}\n       vs {short(want_i)}")
    got_a = approvals_view(st.get("approvals"))
    want_a = expected_approvals(snap)
    r.check(at, "approvals == the HITL interrupts", got_a == want_a, f"{short(got_a)}\n       vs {short(want_a)}")
    if live and any(a["mode"] == "per_call" for a in want_a):
        # The JSON view of a `$`-keyed dict (a JSON schema) is the plain object, whatever
        # tests/fixtures/jsonview.py says.
        schemas = [i.get("response_schema") for i in got_i] + [a.get("response_schema") for a in st.get("approvals") or []]
        r.check(at, "per-call response_schema is plain JSON ($defs, no builtins.dict) in interrupts and approvals",
                len(schemas) == 2 * len(want_a) and all(isinstance(s, dict) and "$defs" in s for s in schemas)
                and "builtins.dict" not in json.dumps(schemas), short(schemas, 400))
    if live:
        finished = {x.id: x.name for x in snap.tasks if x.result is not None}
        got_ap = sorted((a.get("task_id"), a.get("node")) for a in st.get("applied", []) or [] if a.get("node") is not None)
        r.check(at, "applied == the finished tasks (their writes folded in)",
                "applied" in st and got_ap == sorted(finished.items()), f"{st.get('applied')} vs {finished}")
        if ns == "":
            want_s = "interrupted" if snap.interrupts else ("pending" if snap.next else "finished")
            r.check(at, f"status {want_s}", st.get("status") == want_s, str(st.get("status")))
    return st


# ---------------------------------------------------------------------------
# One thread
# ---------------------------------------------------------------------------


def usage_of(messages: list) -> dict:
    """{id: (usage_metadata, model_name)} of the AI messages carrying usage."""
    out = {}
    for m in messages or []:
        if getattr(m, "type", None) == "ai" and getattr(m, "usage_metadata", None) and m.id:
            out[m.id] = (m.usage_metadata, (m.response_metadata or {}).get("model_name"))
    return out


def total(usages: list) -> dict:
    s = {"input": 0, "output": 0, "total": 0, "cached": 0, "reasoning": 0, "messages": len(usages)}
    for u in usages:
        s["input"] += u.get("input_tokens", 0)
        s["output"] += u.get("output_tokens", 0)
        s["total"] += u.get("total_tokens", 0)
        s["cached"] += (u.get("input_token_details") or {}).get("cache_read", 0)
        s["reasoning"] += (u.get("output_token_details") or {}).get("reasoning", 0)
    return s


def tokens_view(tok: Any, keys=("input", "output", "total", "cached", "reasoning", "messages")) -> Any:
    return None if tok is None else {k: tok.get(k) for k in keys}


def check_thread(r: Results, label: str, db: str, t: af.Thread, listed: Optional[dict], tally: Tally) -> None:
    where = f"{label} {t.thread_id}"
    nss = t.namespaces()
    hists = {ns: t.history(ns) for ns in nss}
    valued = {k for h in hists.values() for s in h for k, v in s.values.items() if not empty(v)}
    short_ns = lambda ns: ns.split(":")[0] if ns else "root"  # noqa: E731

    for ns in nss:
        at_ns = f"{where} [{short_ns(ns)}]"
        code, fh, err = flashback("history", db, t.thread_id, "--ns", ns, "--json")
        if r.check(at_ns, "history --json exits 0", code == 0, err[-500:]):
            r.check(at_ns, f"history ids in order == get_state_history ({len(hists[ns])})",
                    [h["checkpoint_id"] for h in fh] == [cid_of(s) for s in hists[ns]],
                    f"{[h['checkpoint_id'] for h in fh]}\n       vs {[cid_of(s) for s in hists[ns]]}")
        for snap in hists[ns]:
            at = f"{at_ns} step {snap.metadata.get('step')} {cid_of(snap)[-8:]}"
            check_snapshot(r, at, db, t, ns, snap, False, valued, tally, label)
        check_snapshot(r, f"{at_ns} LIVE", db, t, ns, t.get_state(ns), True, valued, tally, label)

    # tokens, models, names
    produced: dict = {}
    for h in hists.values():
        for s in h:
            produced.update(usage_of(s.values.get("messages")))
    want_total = total([u for u, _ in produced.values()])
    want_models = sorted({m for _, m in produced.values() if m})
    code, graph, err = flashback("graph", db, t.thread_id, "--json")
    if not r.check(where, "graph --json exits 0", code == 0, err[-500:]):
        return
    r.check(where, f"graph tokens == usage of the {len(produced)} distinct AI messages", tokens_view(graph.get("tokens")) == want_total,
            f"{graph.get('tokens')} vs {want_total}")
    r.check(where, "graph models == their model names", sorted(graph.get("models") or []) == want_models,
            f"{graph.get('models')} vs {want_models}")
    if listed is not None:
        r.check(where, "threads --json tokens == the same", tokens_view(listed.get("tokens")) == want_total,
                f"{listed.get('tokens')} vs {want_total}")

    by_id = {(ns, cid_of(s)): s for ns, h in hists.items() for s in h}
    no_model, model_rows, ran_wrong, sends = [], [], [], []
    row_sum = total([])
    for row in graph.get("rows", []):
        snap = by_id.get((row["ns"], row["id"]))
        parent = by_id.get((row["ns"], row.get("parent_id")))
        tok = row.get("tokens")
        if tok:
            for k in ("input", "output", "total"):
                row_sum[k] += tok.get(k, 0)
        if "Send" in " ".join(row.get("ran", [])):
            sends.append((short_ns(row["ns"]), row.get("step"), row.get("ran")))
        if snap is None or parent is None or snap.metadata.get("source") != "loop":
            continue
        names = sorted(x.name for x in parent.tasks)
        if sorted(row.get("ran", [])) != names:
            ran_wrong.append(f"{short_ns(row['ns'])} step {row.get('step')}: ran {row.get('ran')} vs {names}")
        if not set(names) & MODEL_NODES:
            if tok:
                no_model.append(f"{short_ns(row['ns'])} step {row.get('step')} ({', '.join(names)}): {tok}")
            continue
        before = {m.id for m in parent.values.get("messages") or []}
        new = [u for i, (u, _) in usage_of(snap.values.get("messages")).items() if i not in before]
        want_row = {k: v for k, v in total(new).items() if k in ("input", "output", "total")} if new else None
        if tokens_view(tok, ("input", "output", "total")) != want_row:
            model_rows.append(f"{short_ns(row['ns'])} step {row.get('step')}: {tokens_view(tok, ('input', 'output', 'total'))} vs {want_row}")
    r.check(where, "no row whose step ran no model has tokens", not no_model, "\n       ".join(no_model))
    r.check(where, "a model row's tokens are those of the AI messages it added", not model_rows, "\n       ".join(model_rows))
    r.check(where, "the rows' tokens add up to the thread's", {k: row_sum[k] for k in ("input", "output", "total")}
            == {k: want_total[k] for k in ("input", "output", "total")},
            f"{ {k: row_sum[k] for k in ('input', 'output', 'total')} } vs {want_total}")
    r.check(where, "each row's ran == its parent's task names (Send tasks by target)", not ran_wrong, "\n       ".join(ran_wrong[:12]))
    r.check(where, "no Send in any row's ran", not sends, str(sends[:12]))


# ---------------------------------------------------------------------------
# Resume with the contract's payload
# ---------------------------------------------------------------------------


def payload(approvals: list, answer, keyed: bool) -> Any:
    per = {}
    for a in approvals:
        if a["mode"] == "batched":
            per[a["interrupt_id"]] = {"decisions": [answer(x) for x in a["actions"]]}
        else:
            per[a["interrupt_id"]] = answer(a["actions"][0])
    if keyed or len(per) != 1:
        return per
    return next(iter(per.values()))


def check_resume(r: Results, label: str, db: str, t: af.Thread, keyed: bool, tally: Tally) -> None:
    from langgraph.types import Command

    where = f"{label} {t.thread_id} resume"
    code, st, err = flashback("state", db, t.thread_id, "--json")
    want = expected_approvals(t.get_state())
    got = approvals_view((st or {}).get("approvals"))
    if got == want and got:
        source = "Flashback's approvals"
        approvals = [a for a in (st or {}).get("approvals", [])]
    else:
        source = "Python's interrupts (Flashback's approvals differ)"
        approvals = want
    body = payload(approvals, t.answers, keyed)
    r.note(f"info: {where}: payload from {source}: {short(body, 400)}")
    try:
        t.invoke(Command(resume=body))
        err = ""
    except Exception as e:  # noqa: BLE001 - any refusal is the finding
        err = f"{type(e).__name__}: {e}"
    s = t.get_state()
    r.check(where, "Python accepts the payload; the thread finishes", not err and not s.next and not s.interrupts
            and all(m.left == 0 for m in t.models), err or f"next {s.next}, interrupts {s.interrupts}, "
            f"script left {[m.left for m in t.models]}")
    check_snapshot(r, f"{where} LIVE after", db, t, "", s, True, set(), tally, label)


# ---------------------------------------------------------------------------
# A backend
# ---------------------------------------------------------------------------


def check_backend(r: Results, label: str, db: str, saver, tally: Tally) -> None:
    t0 = time.monotonic()
    threads = af.write_threads(saver)
    r.note(f"info: {label}: {len(threads)} threads written in {time.monotonic() - t0:.1f}s")
    code, listed, err = flashback("threads", db, "--json")
    listed_by = {x["thread_id"]: x for x in listed} if r.check(label, "threads --json exits 0", code == 0, err) else {}
    r.check(label, "threads --json lists every thread", set(listed_by) == set(threads), f"{sorted(listed_by)} vs {sorted(threads)}")
    for tid, t in threads.items():
        s = t.get_state()
        want = "interrupted" if s.interrupts else ("pending" if s.next else "finished")
        r.check(f"{label} {tid}", f"threads --json status {want}", (listed_by.get(tid) or {}).get("status") == want,
                str((listed_by.get(tid) or {}).get("status")))
        check_thread(r, label, db, t, listed_by.get(tid), tally)
    code, act, err = flashback("activity", db, "--json")
    if r.check(label, "activity --json exits 0", code == 0, err):
        r.check(label, "no Send in activity's recovered", "Send" not in json.dumps([a.get("recovered") for a in act]), short(act))
    check_resume(r, label, db, threads["hitl-batched"], False, tally)
    check_resume(r, label, db, threads["hitl-per-call"], False, tally)
    check_resume(r, label, db, threads["deep-waiting"], True, tally)
    r.note(f"info: {label}: checked in {time.monotonic() - t0:.1f}s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="an empty Postgres database")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="one line per check")
    args = ap.parse_args()
    r = Results(verbose=args.verbose)
    tally = Tally()
    t0 = time.monotonic()
    if not os.access(BIN, os.X_OK):
        r.check("flashback", f"binary at {BIN}", False, "build it: cargo build -p flashback-cli")
    else:
        if not args.no_sqlite:
            with tempfile.TemporaryDirectory(prefix="flashback-agents-") as d:
                db = str(pathlib.Path(d) / "agents.sqlite")
                check_backend(r, "sqlite", db, af.sqlite_saver(db), tally)
        if args.pg:
            from langgraph.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(args.pg) as saver:
                saver.setup()
                check_backend(r, "postgres", args.pg, saver, tally)
    if tally.absent:
        per = Counter()
        for (label, k), n in tally.absent.items():
            per[label] += n
        r.note("info: channels Python shows as an empty default, never valued in their thread, absent in Flashback "
               "(not failures): " + "; ".join(f"{label} {n}" for label, n in per.items()) + " ("
               + ", ".join(sorted({k for _, k in tally.absent})) + ")")
    print(f"info: {time.monotonic() - t0:.1f}s", flush=True)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
