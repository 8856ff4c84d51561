#!/usr/bin/env node
// Generates LangGraph.js checkpoint fixtures for Flashback (issue 16).
//
//   npm ci --prefix tests/js-fixtures && node tests/js-fixtures/generate.mjs
//
// Runs the scenarios of graphs.mjs against SqliteSaver (langgraphjs.sqlite, recreated) and
// PostgresSaver (database flashback_js_fixture_gen, dropped and re-created), dumps Postgres to
// langgraphjs-postgres.sql (replayable as one multi-statement script into an empty database,
// checked here), and writes expected-sqlite.json / expected-postgres.json: what
// graph.getStateHistory() returns for every thread and namespace, read back with a fresh saver.
//
// Env: FLASHBACK_GEN_PG (server URL, default postgresql://postgres@127.0.0.1:5432),
//      FLASHBACK_GEN_PG_DB (database name, default flashback_js_fixture_gen).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SCENARIOS, cfg } from "./graphs.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SQLITE_PATH = path.join(HERE, "langgraphjs.sqlite");
const PG_SQL_PATH = path.join(HERE, "langgraphjs-postgres.sql");
const PG_SERVER = (process.env.FLASHBACK_GEN_PG ?? "postgresql://postgres@127.0.0.1:5432").replace(/\/$/, "");
const PG_DB = process.env.FLASHBACK_GEN_PG_DB ?? "flashback_js_fixture_gen";
const pgUrl = (db) => `${PG_SERVER}/${db}`;
const skip = new Set(process.argv.slice(2).filter((a) => a.startsWith("--skip-")).map((a) => a.slice(7)));

function versions() {
  const v = (name) => {
    // package.json may not be in "exports": read it from node_modules directly.
    const p = path.join(HERE, "node_modules", name, "package.json");
    return JSON.parse(fs.readFileSync(p, "utf8")).version;
  };
  return {
    node: process.version,
    "@langchain/langgraph": v("@langchain/langgraph"),
    "@langchain/langgraph-checkpoint": v("@langchain/langgraph-checkpoint"),
    "@langchain/langgraph-checkpoint-sqlite": v("@langchain/langgraph-checkpoint-sqlite"),
    "@langchain/langgraph-checkpoint-postgres": v("@langchain/langgraph-checkpoint-postgres"),
    "@langchain/core": v("@langchain/core"),
    "better-sqlite3": v("better-sqlite3"),
    pg: v("pg"),
  };
}

// ---- running ----------------------------------------------------------------------------
async function runAll(saver) {
  for (const [tid, [build, run]] of Object.entries(SCENARIOS)) {
    await run(build(saver), tid);
  }
}

// Every thread: checkpoint count per namespace (saver.list over all namespaces) and the
// getStateHistory() of every namespace, as JSON.stringify renders the JS objects.
async function readBack(saver) {
  const threads = {};
  for (const [tid, [build]] of Object.entries(SCENARIOS)) {
    const graph = build(saver);
    const counts = {};
    for await (const t of saver.list({ configurable: { thread_id: tid } })) {
      const ns = t.config.configurable.checkpoint_ns ?? "";
      counts[ns] = (counts[ns] ?? 0) + 1;
    }
    const namespaces = Object.keys(counts).sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1));
    const history = {};
    for (const ns of namespaces) {
      const snaps = [];
      for await (const snap of graph.getStateHistory(cfg(tid, { checkpoint_ns: ns }))) snaps.push(snap);
      history[ns] = JSON.parse(JSON.stringify(snaps));
    }
    threads[tid] = { checkpoints_per_namespace: counts, history };
  }
  return threads;
}

function writeExpected(file, backend, threads) {
  const doc = {
    generator: { ...versions(), backend, script: "tests/js-fixtures/generate.mjs" },
    note:
      "history[ns] is JSON.stringify(await Array.fromAsync(graph.getStateHistory({configurable:{thread_id, checkpoint_ns: ns}}))) " +
      "read back with a fresh saver; messages appear as lc constructor envelopes; values show an Annotation's default " +
      "where the channel holds nothing yet.",
    threads,
  };
  fs.writeFileSync(path.join(HERE, file), JSON.stringify(doc, null, 1) + "\n");
}

function summary(backend, threads) {
  console.log(`== ${backend}`);
  let total = 0;
  for (const [tid, t] of Object.entries(threads)) {
    const parts = Object.entries(t.checkpoints_per_namespace).map(([ns, n]) => `${ns === "" ? "root" : ns}: ${n}`);
    total += Object.values(t.checkpoints_per_namespace).reduce((a, b) => a + b, 0);
    console.log(`  ${tid.padEnd(18)} ${parts.join(", ")}`);
  }
  console.log(`  total checkpoints: ${total}`);
}

// ---- SQLite -----------------------------------------------------------------------------
async function sqlite() {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) fs.rmSync(SQLITE_PATH + suffix, { force: true });
  const saver = SqliteSaver.fromConnString(SQLITE_PATH);
  await runAll(saver);
  // The saver switches to WAL; fold the WAL back and leave a self-contained DELETE-mode file.
  saver.db.pragma("wal_checkpoint(TRUNCATE)");
  saver.db.pragma("journal_mode=DELETE");
  saver.db.close();

  const fresh = SqliteSaver.fromConnString(SQLITE_PATH);
  const threads = await readBack(fresh);
  fresh.db.pragma("journal_mode=DELETE"); // setup() set WAL again
  fresh.db.close();
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(SQLITE_PATH + suffix, { force: true });
  writeExpected("expected-sqlite.json", "sqlite", threads);
  summary("sqlite", threads);
}

// ---- Postgres ---------------------------------------------------------------------------
async function adminQuery(sql) {
  const client = new pg.Client({ connectionString: pgUrl("postgres") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
const recreateDb = async (db) => {
  await adminQuery(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${db}"`);
};

function findPgDump() {
  const dirs = (process.env.PATH ?? "").split(path.delimiter);
  const pgLib = "/usr/lib/postgresql";
  if (fs.existsSync(pgLib)) {
    for (const v of fs.readdirSync(pgLib).sort((a, b) => Number(b) - Number(a))) dirs.push(path.join(pgLib, v, "bin"));
  }
  for (const d of dirs) {
    const p = path.join(d, "pg_dump");
    if (d && fs.existsSync(p)) return p;
  }
  throw new Error("pg_dump not found on PATH or under /usr/lib/postgresql/*/bin");
}

// Same post-processing as tests/fixtures/generate.py's dump_postgres().
function dumpPostgres(db, out) {
  const args = ["--inserts", "--no-owner", "--no-privileges", "--no-comments", "--dbname", pgUrl(db)];
  const text = execFileSync(findPgDump(), args, { encoding: "utf8", maxBuffer: 1 << 28 });
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const kept = lines.filter(
    (line) =>
      // psql meta-commands (\restrict / \unrestrict in recent pg_dump) are not SQL
      !line.startsWith("\\") &&
      // pg_dump empties search_path; names are "public."-qualified and an empty search_path
      // would break the replaying connection
      !line.startsWith("SELECT pg_catalog.set_config('search_path', '', false);") &&
      // version banner: keep regenerations diffable
      !line.startsWith("-- Dumped from database version") &&
      !line.startsWith("-- Dumped by pg_dump version")
  );
  fs.writeFileSync(out, kept.join("\n") + "\n");
}

async function postgres() {
  await recreateDb(PG_DB);
  const saver = PostgresSaver.fromConnString(pgUrl(PG_DB));
  await saver.setup();
  await runAll(saver);
  await saver.end();

  const fresh = PostgresSaver.fromConnString(pgUrl(PG_DB));
  const threads = await readBack(fresh);
  await fresh.end();
  dumpPostgres(PG_DB, PG_SQL_PATH);

  // The dump must replay as ONE multi-statement script (simple query protocol) into an
  // empty database and read back identically.
  const replayDb = `${PG_DB}_replay`;
  await recreateDb(replayDb);
  try {
    const client = new pg.Client({ connectionString: pgUrl(replayDb) });
    await client.connect();
    await client.query(fs.readFileSync(PG_SQL_PATH, "utf8"));
    await client.end();
    const replaySaver = PostgresSaver.fromConnString(pgUrl(replayDb));
    const replayed = await readBack(replaySaver);
    await replaySaver.end();
    if (JSON.stringify(replayed) !== JSON.stringify(threads)) {
      throw new Error("langgraphjs-postgres.sql replay does not read back identically");
    }
    console.log("langgraphjs-postgres.sql replays into an empty database and reads back identically");
  } finally {
    await adminQuery(`DROP DATABASE IF EXISTS "${replayDb}" WITH (FORCE)`);
  }
  writeExpected("expected-postgres.json", "postgres", threads);
  summary("postgres", threads);
}

if (!skip.has("sqlite")) await sqlite();
if (!skip.has("postgres")) await postgres();
for (const f of ["langgraphjs.sqlite", "langgraphjs-postgres.sql", "expected-sqlite.json", "expected-postgres.json"]) {
  const p = path.join(HERE, f);
  if (fs.existsSync(p)) console.log(`${f}: ${fs.statSync(p).size} bytes`);
}
