// Helpers for interop.mjs: the flashback binary, fresh copies of the fixture databases
// (SQLite files, Postgres databases loaded from the dump), the stored fork rows, comparisons.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SCENARIOS } from "./graphs.mjs";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const SQLITE_FIXTURE = path.join(HERE, "langgraphjs.sqlite");
const PG_DUMP = path.join(HERE, "langgraphjs-postgres.sql");

// ---- the CLI --------------------------------------------------------------------------------
export const FLASHBACK =
  process.env.FLASHBACK_BIN ??
  path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug", "flashback");

/** Runs `flashback ARGS`; returns {status, stdout, stderr}. */
export function flashback(...args) {
  const r = spawnSync(FLASHBACK, args, { encoding: "utf8" });
  if (r.error) throw new Error(`cannot run ${FLASHBACK}: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `flashback fork DB THREAD --checkpoint ID [--set C=JSON ...] --json`; returns the new id. */
export function fork(db, thread, checkpointId, sets = {}) {
  const args = ["fork", db, thread, "--checkpoint", checkpointId, "--json"];
  for (const [ch, v] of Object.entries(sets)) args.push("--set", `${ch}=${JSON.stringify(v)}`);
  const r = flashback(...args);
  if (r.status !== 0) throw new Error(`flashback fork exited ${r.status}: ${r.stderr.trim()}`);
  const out = JSON.parse(r.stdout);
  assert.equal(out.parent_checkpoint_id, checkpointId, "fork's parent");
  return out.checkpoint_id;
}

// ---- checks ---------------------------------------------------------------------------------
const truthy = (v) => ["1", "true", "TRUE", "True"].includes(v ?? "");
/** No PostgreSQL is a failure (CI=true or FLASHBACK_REQUIRE_PG=1, unless that is 0/false). */
export const requirePg = ["0", "false", "FALSE", "False"].includes(process.env.FLASHBACK_REQUIRE_PG ?? "")
  ? false
  : truthy(process.env.FLASHBACK_REQUIRE_PG) || truthy(process.env.CI);

/** Counts of the checks run so far. */
export const tally = { passed: 0, failed: 0 };

/** Runs one named check: `ok NAME` or `FAIL NAME: reason` (one line); true when it passed. */
export async function check(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
    tally.passed += 1;
    return true;
  } catch (e) {
    console.log(`FAIL ${name}: ${String(e?.message ?? e).split("\n")[0]}`);
    tally.failed += 1;
    return false;
  }
}

// ---- comparisons ----------------------------------------------------------------------------
/** Plain JSON of a value, as JSON.stringify renders JS objects (messages: lc envelopes). */
export const plain = (v) => JSON.parse(JSON.stringify(v ?? null));
const short = (v) => {
  const s = JSON.stringify(v);
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

/** Deep equality of plain JSON (key order ignored); throws a one-line error. */
export function same(actual, expected, what) {
  try {
    assert.deepStrictEqual(plain(actual), plain(expected));
  } catch {
    throw new Error(`${what}: got ${short(plain(actual))}, expected ${short(plain(expected))}`);
  }
}

/** {values, next} of a StateSnapshot, as plain JSON. */
export const outcome = (snap) => ({ values: plain(snap.values), next: [...snap.next] });

// ---- backends -------------------------------------------------------------------------------
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), "flashback-jsinterop-"));
let serial = 0;

/** A fresh copy of the fixture database plus ways to open it with JS. */
class Copy {
  constructor(backend, db) {
    this.backend = backend;
    this.db = db; // what flashback is given: a file path or a postgres:// URL
    this.saver = null;
  }
  /** The scenario's graph on a saver of this copy (opened on first use). */
  graph(tid) {
    this.saver ??=
      this.backend.name === "sqlite" ? SqliteSaver.fromConnString(this.db) : PostgresSaver.fromConnString(this.db);
    return SCENARIOS[tid][0](this.saver);
  }
  /** Closes the JS saver (SQLite: so that nothing else holds the file while flashback writes). */
  async close() {
    if (!this.saver) return;
    if (this.backend.name === "sqlite") this.saver.db.close();
    else await this.saver.end();
    this.saver = null;
  }
  /** Rows per table. */
  async counts() {
    const tables =
      this.backend.name === "sqlite"
        ? ["checkpoints", "writes"]
        : ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];
    const out = {};
    for (const t of tables) out[t] = Number((await this.query(`SELECT count(*) AS n FROM ${t}`))[0].n);
    return out;
  }
  /** Rows of a read-only query (? / $1 placeholders per backend). */
  async query(sql, params = []) {
    if (this.backend.name === "sqlite") {
      const db = new Database(this.db, { readonly: true });
      try {
        return db.prepare(sql).all(...params);
      } finally {
        db.close();
      }
    }
    const client = new pg.Client({ connectionString: this.db });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  }
  /** Checks that the checkpoint row flashback wrote is in JS's stored format. */
  async checkForkRow(tid, id) {
    const sqlite = this.backend.name === "sqlite";
    const where = sqlite ? "thread_id = ? AND checkpoint_id = ?" : "thread_id = $1 AND checkpoint_id = $2";
    const rows = await this.query(
      `SELECT type, checkpoint, metadata FROM checkpoints WHERE ${where} AND checkpoint_ns = ''`,
      [tid, id]
    );
    assert.equal(rows.length, 1, `one checkpoint row ${id}`);
    const row = rows[0];
    const doc = sqlite ? JSON.parse(Buffer.from(row.checkpoint).toString("utf8")) : row.checkpoint;
    if (sqlite) {
      assert.equal(row.type, "json", "checkpoints.type");
      assert.ok(doc.channel_values && typeof doc.channel_values === "object", "channel_values inline");
    } else {
      assert.equal(row.type, null, "checkpoints.type (JS PostgresSaver leaves it NULL)");
      assert.ok(!("channel_values" in doc), "no channel_values in the jsonb (values are blobs)");
    }
    assert.equal(typeof doc.ts, "string", "ts");
    assert.match(doc.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, "ts is JS's toISOString() form");
    for (const [ch, v] of Object.entries(doc.channel_versions)) {
      assert.ok(Number.isInteger(v), `channel_versions.${ch} is an integer, got ${JSON.stringify(v)}`);
    }
    for (const [node, seen] of Object.entries(doc.versions_seen)) {
      for (const [ch, v] of Object.entries(seen)) assert.ok(Number.isInteger(v), `versions_seen.${node}.${ch} = ${v}`);
    }
    if (!sqlite) {
      const blobs = await this.query(
        "SELECT channel, version, type FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = ''",
        [tid]
      );
      const have = new Map(blobs.map((b) => [`${b.channel}@${b.version}`, b.type]));
      for (const [ch, v] of Object.entries(doc.channel_versions)) {
        const t = have.get(`${ch}@${v}`);
        assert.ok(t === "json" || t === "empty", `blob ${ch}@${v} of type json/empty (got ${t})`);
      }
    }
    return doc;
  }
}

export const sqliteBackend = {
  name: "sqlite",
  async fresh() {
    const file = path.join(tmpRoot, `copy-${++serial}.sqlite`);
    fs.copyFileSync(SQLITE_FIXTURE, file);
    return new Copy(this, file);
  },
  async finish() {},
};

// Postgres: FLASHBACK_TEST_PG is a server URL (its database part is replaced), as in
// tests/interop/run.sh. Databases flashback_jsinterop_<pid>_<random>_<n> are dropped at the end.
const PG_URL = process.env.FLASHBACK_TEST_PG || "postgresql://postgres@127.0.0.1:5432/postgres";
const withDb = (url, db) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
};
async function admin(sql) {
  const client = new pg.Client({ connectionString: withDb(PG_URL, "postgres"), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export const postgresBackend = {
  name: "postgres",
  tag: `flashback_jsinterop_${process.pid}_${crypto.randomBytes(4).toString("hex")}`,
  created: [],
  /** Why Postgres cannot be used, or null. */
  async unavailable() {
    if (PG_URL === "throwaway") return "FLASHBACK_TEST_PG=throwaway (run through tests/interop/run.sh)";
    try {
      await admin("SELECT 1");
      return null;
    } catch (e) {
      return `no PostgreSQL at ${PG_URL.replace(/\/\/[^@/]*@/, "//…@")} (${e.message})`;
    }
  },
  /** A new empty database (dropped by finish()); its URL. */
  async empty() {
    const name = `${this.tag}_${++serial}`;
    await admin(`CREATE DATABASE "${name}"`);
    this.created.push(name);
    return withDb(PG_URL, name);
  },
  async fresh() {
    const url = await this.empty();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(fs.readFileSync(PG_DUMP, "utf8")); // one multi-statement script
    } finally {
      await client.end();
    }
    return new Copy(this, url);
  },
  async finish() {
    for (const name of this.created) await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
    this.created = [];
  },
};

export function cleanupTmp() {
  fs.rmSync(tmpRoot, { recursive: true, force: true });
}
