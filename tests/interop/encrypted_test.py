#!/usr/bin/env python3
"""Interop test: databases written with LangGraph's EncryptedSerializer (AES-EAX, `msgpack+aes`).

Real graphs run on the official savers with `EncryptedSerializer.from_pycryptodome_aes(key=…)`
(SQLite always; Postgres with --pg URL of an empty database). Then:
  * with LANGGRAPH_AES_KEY, `flashback state --json` shows at every checkpoint the values and
    next tasks Python's `graph.get_state` shows, and `threads` the statuses;
  * without a key, `threads` still lists every thread, and `state` fails with one line naming
    LANGGRAPH_AES_KEY;
  * with a wrong key, or on a tampered value, only the values it cannot open fail;
  * Flashback's copy and edit forks are written encrypted and Python reads and resumes them;
  * a plaintext row inside the encrypted database is flagged;
  * `export` holds ciphertext sizes and hashes, and decrypted values only with --decrypt;
  * a database sealed with a custom `CipherProtocol` (`kms`), and one `msgpack+des` row among
    AES ones: `state` names the cipher, fork / fork --set / merge / copy are refused in one line
    and Python reads the database as before; the AES checkpoints still fork, sealed with `aes`,
    and Python resumes the fork.

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/encrypted_test.py [--pg URL]
       python tests/interop/encrypted_test.py --make PATH   (the `wait` thread only, for ui/e2e)
Prints failures and `N passed, M failed`; exits 1 on failure.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
from typing import Any

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

from jsonview import view  # noqa: E402
from results import Results  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.types import Command  # noqa: E402
# The graph, the key and the toy ciphers `kms` and `des` (custom CipherProtocols).
from sealed_fixture import KEY, SECRET, aes_serde, build, cfg, des_serde, kms_serde, run  # noqa: E402

BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))


def flashback(*args: str, key: str | None = KEY) -> tuple[int, Any, str]:
    env = {k: v for k, v in os.environ.items() if k != "LANGGRAPH_AES_KEY"}
    if key is not None:
        env["LANGGRAPH_AES_KEY"] = key
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, env=env)
    out: Any = None
    if p.returncode == 0 and p.stdout.strip().startswith(("{", "[")):
        out = json.loads(p.stdout)
    return p.returncode, out, p.stderr.strip()


def norm(values: Any) -> Any:
    out = json.loads(json.dumps(view(values)))
    if isinstance(out, dict):
        for i in out.get("__interrupt__", []):
            i.pop("id", None)  # derived from the checkpoint it was raised at
    return out


def scenarios(r: Results, where: str, db: str, saver, plain_saver, raw_sql) -> None:
    g = build(saver)
    g.invoke({"messages": [HumanMessage(content="hi", id="h-1")], "notes": [], "n": 0}, cfg("wait"))
    g.invoke({"messages": [HumanMessage(content="hi", id="h-1")], "notes": [], "n": 0}, cfg("done"))
    g.invoke(Command(resume="yes"), cfg("done"))
    g.update_state(cfg("done"), {"notes": ["by hand"]}, as_node="think")

    # 1. With the key: every checkpoint as Python sees it.
    n = 0
    for tid in ("wait", "done"):
        for snap in g.get_state_history(cfg(tid)):
            c = snap.config["configurable"]
            code, fb, err = flashback("state", db, tid, "--ns", c["checkpoint_ns"], "--checkpoint", c["checkpoint_id"], "--json")
            if not r.check(where, f"state {tid} {c['checkpoint_id']}", code == 0, err):
                continue
            py = norm(snap.values)
            # Python shows an aggregate channel that holds nothing yet as its empty default.
            want = {k: v for k, v in py.items() if k in fb["values"] or v not in ([], {})}
            got = {k: fb["values"].get(k) for k in want}
            r.check(where, f"{tid} step {snap.metadata.get('step')}: values as Python",
                    got == want, f"{got}\n       vs {want}")
            r.check(where, f"{tid} step {snap.metadata.get('step')}: next as Python",
                    list(fb["tasks"]["next"]) == list(snap.next), f"{fb['tasks']['next']} vs {snap.next}")
            n += 1
    r.check(where, "compared checkpoints", n >= 10, str(n))
    code, threads, err = flashback("threads", db, "--json")
    if r.check(where, "threads with the key", code == 0, err):
        status = {t["thread_id"]: t["status"] for t in threads}
        # "done" was updated by hand as `think`, so `ask` is due again.
        r.check(where, "statuses with the key", status == {"wait": "interrupted", "done": "pending"}, str(status))
    code, info, err = flashback("info", db, "--json")
    if code == 0 and isinstance(info, dict) and "encryption" in info:
        r.check(where, "info says encrypted and unlocked",
                (info["encryption"] or {}).get("unlocked") is True, str(info.get("encryption")))

    # Every read that needs the values works with the key (and shows no locked value).
    hist = list(g.get_state_history(cfg("done")))
    first, last = hist[-1].config["configurable"]["checkpoint_id"], hist[0].config["configurable"]["checkpoint_id"]
    for args in (("diff", db, "done", first, last), ("replay", db, "done"), ("graph", db, "done"), ("history", db, "done"),
                 ("rebuild", db, "done")):
        code, out, err = flashback(*args, "--json")
        text = json.dumps(out)
        r.check(where, f"{args[0]} with the key", code == 0 and '"$locked"' not in text and SECRET in text
                if args[0] in ("diff", "replay") else code == 0, (err or text)[:300])

    # 2. Without a key: threads list, state fails with one line naming the variable.
    code, threads, err = flashback("threads", db, "--json", key=None)
    if r.check(where, "threads without a key", code == 0, err):
        r.check(where, "every thread listed without a key", sorted(t["thread_id"] for t in threads) == ["done", "wait"])
        if where == "sqlite":
            r.check(where, "status unknown and locked without a key",
                    all(t["status"] is None and t["locked"] for t in threads), str(threads))
    code, _, err = flashback("state", db, "wait", "--json", key=None)
    r.check(where, "state without a key fails in one line naming LANGGRAPH_AES_KEY",
            code != 0 and "LANGGRAPH_AES_KEY" in err and "\n" not in err and len(err) < 300, err)

    # 3. A wrong key: the values it cannot open fail, the command does not.
    code, fb, err = flashback("state", db, "wait", "--json", key="X" * 32)
    if r.check(where, "state with a wrong key answers", code == 0, err):
        text = json.dumps(fb)
        r.check(where, "a wrong key shows values that do not decrypt", "does not decrypt" in text, text[:300])
        r.check(where, "a wrong key never shows the plaintext", SECRET not in text)

    # 4. A tampered value fails alone.
    head = g.get_state(cfg("wait"))
    hid = head.config["configurable"]["checkpoint_id"]
    before = flashback("state", db, "wait", "--checkpoint", hid, "--json")[1]
    raw_sql("tamper", hid)
    code, fb, err = flashback("state", db, "wait", "--checkpoint", hid, "--json")
    if r.check(where, "state of a checkpoint with a tampered write", code == 0, err):
        bad = [w for t in fb["writes"] for w in t.get("writes", [])] if isinstance(fb.get("writes"), list) else []
        text = json.dumps(fb["writes"])
        r.check(where, "the tampered write fails to decrypt", "does not decrypt" in text, text[:400])
        r.check(where, "the other values are intact", fb["values"] == before["values"])
        del bad
    raw_sql("untamper", hid)

    # 5. Forks are written encrypted; Python reads and resumes them.
    hist = list(g.get_state_history(cfg("done")))
    src = next(s for s in hist if s.metadata.get("step") == 2)
    sid = src.config["configurable"]["checkpoint_id"]
    code, fork, err = flashback("fork", db, "done", "--checkpoint", sid, "--json")
    if r.check(where, "copy fork of an encrypted thread", code == 0, err):
        r.check(where, "the fork's rows are encrypted", raw_sql("fork_types", fork["checkpoint_id"]) == {"encrypted"},
                str(raw_sql("fork_types", fork["checkpoint_id"])))
        now = g.get_state(cfg("done"))
        r.check(where, "Python reads the fork's values", norm(now.values) == norm(src.values))
        a = g.invoke(None, cfg("done"))
        b = g.invoke(None, src.config)
        r.check(where, "resumed from the fork == LangGraph's time travel", norm(a) == norm(b), f"{norm(a)} vs {norm(b)}")
    # A merge of two branches is written encrypted, and Python reads it.
    hist = list(g.get_state_history(cfg("done")))
    parents = {s.parent_config["configurable"]["checkpoint_id"] for s in hist if s.parent_config}
    tips = [s.config["configurable"]["checkpoint_id"] for s in hist if s.config["configurable"]["checkpoint_id"] not in parents]
    if r.check(where, "two branches to merge", len(tips) >= 2, str(tips)):
        code, merged, err = flashback("merge", db, "done", "--into", tips[0], "--from", tips[1], "--channel", "notes=append", "--json")
        if r.check(where, "merge of an encrypted thread", code == 0, err):
            r.check(where, "the merge's rows are encrypted", raw_sql("fork_types", merged["checkpoint_id"]) == {"encrypted"})
            r.check(where, "Python reads the merge", isinstance(g.get_state(cfg("done")).values.get("notes"), list))
    wid = g.get_state(cfg("wait")).config["configurable"]["checkpoint_id"]
    code, fork, err = flashback("fork", db, "wait", "--checkpoint", wid, "--set", 'notes=["edited"]', "--json")
    if r.check(where, "edit fork of an encrypted thread", code == 0, err):
        r.check(where, "the edit fork's rows are encrypted", raw_sql("fork_types", fork["checkpoint_id"]) == {"encrypted"})
        r.check(where, "Python reads the edited value", g.get_state(cfg("wait")).values["notes"] == ["edited"])
        out = g.invoke(Command(resume="ok"), cfg("wait"))
        r.check(where, "Python resumes the edit fork", out["notes"] == ["edited", "answer ok"], str(out.get("notes")))

    # 6. A plaintext row in the encrypted database (LangGraph reads it silently) is flagged.
    head = g.get_state(cfg("wait")).config
    plain_saver.put_writes(head, [("notes", ["plain"])], task_id="plain-task")
    code, fb, err = flashback("state", db, "wait", "--json")
    if r.check(where, "state after a plaintext write", code == 0, err):
        r.check(where, "the plaintext write is flagged",
                "write plain-task notes" in (fb.get("sealing") or {}).get("plaintext", []), str(fb.get("sealing")))

    # 7. Export: ciphertext sizes and hashes; plaintext only with --decrypt.
    with tempfile.TemporaryDirectory() as d:
        sealed, opened = os.path.join(d, "sealed.json"), os.path.join(d, "open.json")
        code, _, err = flashback("export", db, "done", "-o", sealed)
        if r.check(where, "export without --decrypt", code == 0, err):
            text = pathlib.Path(sealed).read_text()
            r.check(where, "export holds no plaintext by default", SECRET not in text)
            r.check(where, "export names ciphertexts by size and hash", '"sha256"' in text and '"$encrypted"' in text)
        code, _, err = flashback("export", db, "done", "--decrypt", "-o", opened)
        if r.check(where, "export --decrypt", code == 0, err):
            r.check(where, "export --decrypt holds the values", SECRET in pathlib.Path(opened).read_text())
        code, _, err = flashback("export", db, "done", "--decrypt", "-o", opened, key=None)
        r.check(where, "export --decrypt without a key fails in one line", code != 0 and "LANGGRAPH_AES_KEY" in err, err)
    print(f"ok   {where}: encrypted database read, forked and exported", flush=True)


KMS = "sealed with `kms`, a cipher Flashback cannot open"
DES = "sealed with `des`, a cipher Flashback cannot open"


def one_line(code: int, err: str, needle: str) -> bool:
    return code == 1 and needle in err and "\n" not in err and "LANGGRAPH_AES_KEY" not in err


def tips(history: list) -> list:
    parents = {s.parent_config["configurable"]["checkpoint_id"] for s in history if s.parent_config}
    return [s.config["configurable"]["checkpoint_id"] for s in history
            if s.config["configurable"]["checkpoint_id"] not in parents]


def foreign_ciphers(r: Results, where: str, kms_db: str, mixed_db: str, saver_for, snapshot) -> None:
    """Databases sealed with ciphers Flashback cannot open. `saver_for(db, serde)` is a context
    manager giving the official saver of `db`; `snapshot(db)` a digest of every row."""
    with tempfile.TemporaryDirectory() as d:
        target = os.path.join(d, "target.sqlite")
        with sqlite3.connect(target) as conn:
            SqliteSaver(conn).setup()
        with saver_for(kms_db, kms_serde()) as saver:
            saver.setup()
            run(build(saver), "kms")
        with saver_for(kms_db, kms_serde()) as saver:
            g = build(saver)
            kms_values = norm(g.get_state(cfg("kms")).values)
            hist = list(g.get_state_history(cfg("kms")))
        before = snapshot(kms_db)
        code, _, err = flashback("state", kms_db, "kms")
        r.check(where, "kms: state names the cipher instead of asking for the key", one_line(code, err, KMS), err)
        head, oldest, (a, b) = hist[0], hist[-1], tips(hist)[:2]
        for c in (head, oldest):
            cid = c.config["configurable"]["checkpoint_id"]
            for args in (("fork", kms_db, "kms", "--checkpoint", cid),
                         ("fork", kms_db, "kms", "--checkpoint", cid, "--set", 'notes=["x"]')):
                code, _, err = flashback(*args)
                r.check(where, f"kms: {' '.join(args[3:])[:40]} refused", one_line(code, err, KMS), err)
        code, _, err = flashback("merge", kms_db, "kms", "--into", a, "--from", b, "--channel", "notes=append")
        r.check(where, "kms: merge refused", one_line(code, err, KMS), err)
        code, _, err = flashback("copy", kms_db, "kms", "kms", "--to", target)
        r.check(where, "kms: copy to another database refused", one_line(code, err, KMS), err)
        r.check(where, "kms: nothing was written", snapshot(kms_db) == before)
        with saver_for(kms_db, kms_serde()) as saver:
            again = norm(build(saver).get_state(cfg("kms")).values)
        r.check(where, "kms: Python reads the thread as before", again == kms_values, f"{again} vs {kms_values}")

        # One msgpack+des row (the head, written by a program that moved to `des`) among AES.
        with saver_for(mixed_db, aes_serde()) as saver:
            saver.setup()
            run(build(saver), "aes")
        with saver_for(mixed_db, des_serde()) as saver:
            build(saver).update_state(cfg("aes"), {"notes": ["sealed with des"]}, as_node="think")
            hist = list(build(saver).get_state_history(cfg("aes")))
        before = snapshot(mixed_db)
        head = hist[0].config["configurable"]["checkpoint_id"]
        src = next(s for s in hist if s.metadata.get("step") == 2)
        sid = src.config["configurable"]["checkpoint_id"]
        code, _, err = flashback("state", mixed_db, "aes")
        r.check(where, "des: state of the des head names the cipher", one_line(code, err, DES), err)
        for args in (("fork", mixed_db, "aes", "--checkpoint", head),
                     ("fork", mixed_db, "aes", "--checkpoint", head, "--set", 'notes=["x"]'),
                     ("merge", mixed_db, "aes", "--into", head, "--from", sid, "--channel", "notes=append"),
                     ("copy", mixed_db, "aes", "aes", "--to", target)):
            code, _, err = flashback(*args)
            r.check(where, f"des: {args[0]} {'--set' if '--set' in args else ''} refused", one_line(code, err, DES), err)
        r.check(where, "des: nothing was written", snapshot(mixed_db) == before)
        code, fork, err = flashback("fork", mixed_db, "aes", "--checkpoint", sid, "--json")
        if r.check(where, "des: an AES checkpoint still forks", code == 0, err):
            with saver_for(mixed_db, aes_serde()) as saver:
                g = build(saver)
                now = g.get_state(cfg("aes"))
                r.check(where, "des: the program reads the fork (sealed with aes)",
                        now.config["configurable"]["checkpoint_id"] == fork["checkpoint_id"]
                        and norm(now.values) == norm(src.values))
                out_a = g.invoke(None, cfg("aes"))
                out_b = g.invoke(None, src.config)
                r.check(where, "des: resumed from the fork == LangGraph's time travel", norm(out_a) == norm(out_b))
    print(f"ok   {where}: databases sealed with kms and des named and left unwritten", flush=True)


def sqlite_sql(path: str):
    def run(what: str, cid: str) -> Any:
        with sqlite3.connect(path) as c:
            if what in ("tamper", "untamper"):
                row = c.execute("SELECT rowid, value FROM writes WHERE checkpoint_id = ? AND type LIKE '%+aes' "
                                "ORDER BY rowid LIMIT 1", (cid,)).fetchone()
                if row:
                    v = bytearray(row[1])
                    v[-1] ^= 1
                    c.execute("UPDATE writes SET value = ? WHERE rowid = ?", (bytes(v), row[0]))
                return None
            types = [t for (t,) in c.execute("SELECT type FROM checkpoints WHERE checkpoint_id = ?", (cid,))]
            return {"encrypted" if t and t.endswith("+aes") else "plain" for t in types}
    return run


def pg_sql(url: str):
    import psycopg

    def run(what: str, cid: str) -> Any:
        with psycopg.connect(url, autocommit=True) as c:
            if what in ("tamper", "untamper"):
                row = c.execute("SELECT task_id, idx FROM checkpoint_writes WHERE checkpoint_id = %s AND type LIKE '%%+aes' "
                                "ORDER BY task_id, idx LIMIT 1", (cid,)).fetchone()
                if row:
                    c.execute("UPDATE checkpoint_writes SET blob = overlay(blob placing "
                              "set_byte(substring(blob from length(blob) for 1), 0, get_byte(blob, length(blob) - 1) # 1) "
                              "from length(blob) for 1) WHERE checkpoint_id = %s AND task_id = %s AND idx = %s",
                              (cid, row[0], row[1]))
                return None
            rows = c.execute("SELECT b.type FROM checkpoints k JOIN LATERAL jsonb_each_text(k.checkpoint->'channel_versions') v ON true "
                             "JOIN checkpoint_blobs b ON b.thread_id = k.thread_id AND b.checkpoint_ns = k.checkpoint_ns "
                             "AND b.channel = v.key AND b.version = v.value WHERE k.checkpoint_id = %s AND b.type <> 'empty'",
                             (cid,)).fetchall()
            return {"encrypted" if t.endswith("+aes") else "plain" for (t,) in rows}
    return run


@contextlib.contextmanager
def sqlite_saver(path: str, serde):
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn, serde=serde)
    finally:
        conn.commit()
        conn.close()


@contextlib.contextmanager
def pg_saver(url: str, serde):
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(url) as saver:
        saver.serde = serde
        yield saver


def pg_snapshot(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as c:
        rows = [c.execute(f"SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {t} t").fetchone()[0]
                for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")]
    return ",".join(rows)


@contextlib.contextmanager
def pg_databases(url: str, *suffixes: str):
    """Fresh databases `<db>_<suffix>` beside `url`'s, dropped afterwards."""
    import psycopg
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    base = parts.path.lstrip("/")
    names = [f"{base}_{s}" for s in suffixes]
    with psycopg.connect(url, autocommit=True) as admin:
        for n in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{n}"')
    try:
        yield [urlunsplit(parts._replace(path="/" + n)) for n in names]
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            for n in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)')


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", help="an empty Postgres database (its checkpoint tables are created)")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--make", metavar="PATH", help="only write the `wait` thread, encrypted, to a new SQLite file")
    args = ap.parse_args()
    serde = aes_serde()
    if args.make:
        conn = sqlite3.connect(args.make, check_same_thread=False)
        saver = SqliteSaver(conn, serde=serde)
        saver.setup()
        build(saver).invoke({"messages": [HumanMessage(content="hi", id="h-1")], "notes": [], "n": 0}, cfg("wait"))
        conn.close()
        return 0
    r = Results()
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "encrypted.sqlite")
            conn = sqlite3.connect(path, check_same_thread=False)
            saver = SqliteSaver(conn, serde=serde)
            saver.setup()
            plain = SqliteSaver(conn)
            scenarios(r, "sqlite", path, saver, plain, sqlite_sql(path))
            conn.close()
            foreign_ciphers(r, "sqlite", os.path.join(d, "kms.sqlite"), os.path.join(d, "mixed.sqlite"),
                            sqlite_saver, lambda p: hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest())
    if args.pg:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(args.pg) as saver, PostgresSaver.from_conn_string(args.pg) as plain:
            saver.serde = serde
            saver.setup()
            scenarios(r, "postgres", args.pg, saver, plain, pg_sql(args.pg))
        with pg_databases(args.pg, "kms", "mixed") as (kms_url, mixed_url):
            foreign_ciphers(r, "postgres", kms_url, mixed_url, pg_saver, pg_snapshot)
    print(f"{r.passed} passed, {r.failed} failed", flush=True)
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
