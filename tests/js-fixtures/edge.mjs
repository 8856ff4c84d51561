#!/usr/bin/env node
// What JS reads and Rust's types cannot hold (issue 28), written by the real LangGraph.js
// savers: a string sliced inside an emoji ("great job 👍".slice(0, 11): JSON.stringify writes
// the lone surrogate as `\ud83d`), a value nested 200 levels, 2 ** 65 (JS writes
// 36893488147419103000, an integer beyond 64 bits), and two numbers only another writer puts in
// JSON (1e400 and 123456789012345678901234567890: the saver is given a serializer that writes
// them raw, as Python's json.dumps writes a big int; JS's own reader reads them back as
// Infinity and 1.2345678901234568e+29).
//
//   node tests/js-fixtures/edge.mjs --generate
//       writes langgraphjs-edge.sqlite (thread `edge`, journal mode DELETE) and expected-edge.json:
//       getStateHistory's values, JSON-safe: a string holding a lone surrogate as
//       {"lone_surrogate": s.toWellFormed()}, a number JSON has no form for as {"json_cannot": String(n)}.
//   FLASHBACK_BIN=target/debug/flashback node tests/js-fixtures/edge.mjs [--no-postgres]
//       the interop check, on a fresh SQLite file and a fresh Postgres database: the graph runs,
//       `flashback state` reads the head (exit 0), a copy fork and an edit fork (another channel)
//       are read back by JS with the untouched values exactly as before (the lone surrogate and
//       the numbers as stored), and the program resumes from the fork.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { HERE, check, flashback, fork, postgresBackend, requirePg, tally } from "./interop-lib.mjs";

const cfg = (checkpoint_id) => ({ configurable: { thread_id: "edge", ...(checkpoint_id ? { checkpoint_id } : {}) } });
const RAW = "\u0000raw:"; // a string the serializer below writes as the raw number after it

/** JS's serializer, except that RAW-marked strings are written as the number text they carry. */
class RawNumbers extends JsonPlusSerializer {
  _dumps(obj) {
    const text = new TextDecoder().decode(super._dumps(obj));
    return new TextEncoder().encode(text.replace(/"\\u0000raw:([-+.0-9eE]+)"/g, "$1"));
  }
}

const State = Annotation.Root({
  said: Annotation(),
  deep: Annotation(),
  big: Annotation(),
  huge: Annotation(),
  exact: Annotation(),
  log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function build(checkpointer) {
  let deep = ["core"];
  for (let i = 1; i < 200; i++) deep = [deep];
  return new StateGraph(State)
    .addNode("write", () => ({
      said: "great job 👍".slice(0, 11),
      deep,
      big: 2 ** 65,
      huge: `${RAW}1e400`,
      exact: `${RAW}123456789012345678901234567890`,
      log: ["written"],
    }))
    .addNode("next", (s) => ({ log: [`next after ${s.log.length}`] }))
    .addEdge(START, "write")
    .addEdge("write", "next")
    .addEdge("next", END)
    .compile({ checkpointer });
}

/** A value as JSON can hold it (see the header). */
function jsonSafe(v) {
  if (typeof v === "string") return v.isWellFormed() ? v : { lone_surrogate: v.toWellFormed() };
  if (typeof v === "number") return Number.isFinite(v) ? v : { json_cannot: String(v) };
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}

async function generate() {
  const file = path.join(HERE, "langgraphjs-edge.sqlite");
  fs.rmSync(file, { force: true });
  const saver = new SqliteSaver(new Database(file), new RawNumbers());
  await build(saver).invoke({ log: [] }, cfg());
  saver.db.pragma("journal_mode = DELETE");
  saver.db.close();
  const fresh = SqliteSaver.fromConnString(file); // JS's own serializer reads it back
  const history = [];
  for await (const s of build(fresh).getStateHistory(cfg())) {
    history.push({ checkpoint_id: s.config.configurable.checkpoint_id, values: jsonSafe(s.values) });
  }
  fresh.db.close();
  const said = history[0].values.said;
  assert.deepEqual(said, { lone_surrogate: "great job \ufffd" }, "the lone surrogate is stored");
  fs.writeFileSync(
    path.join(HERE, "expected-edge.json"),
    `${JSON.stringify({ note: "node tests/js-fixtures/edge.mjs --generate", history })}\n`
  );
  console.log(`langgraphjs-edge.sqlite: ${history.length} checkpoints`);
}

// ---- the interop check ------------------------------------------------------------------------
/** Strict equality of JS values: strings code unit for code unit, numbers by Object.is. */
const exactly = (a, b, what) => assert.deepStrictEqual(a, b, what);

async function run(label, open, close, db) {
  let saver = open(new RawNumbers());
  await build(saver).invoke({ log: [] }, cfg());
  await close(saver);
  saver = open();
  const g = build(saver);
  const head = await g.getState(cfg());
  const src = head.config.configurable.checkpoint_id;
  await close(saver);
  await check(`${label}: flashback reads the state`, () => {
    const r = flashback("state", db, "edge", "--json");
    assert.equal(r.status, 0, r.stderr);
    const values = JSON.parse(r.stdout).values;
    assert.equal(values.said, "great job \ufffd");
    assert.deepEqual(values.huge, { $type: "json.number", $value: "1e400" });
  });
  for (const [kind, sets] of [["copy", {}], ["edit", { log: ["edited"] }]]) {
    await check(`${label}: the ${kind} fork keeps what JS reads exactly`, async () => {
      const id = fork(db, "edge", src, sets);
      saver = open();
      const snap = await build(saver).getState(cfg(id));
      for (const ch of ["said", "deep", "big", "huge", "exact"]) exactly(snap.values[ch], head.values[ch], ch);
      exactly(snap.values.log, sets.log ?? head.values.log, "log");
      await close(saver);
    });
  }
  await check(`${label}: the program resumes from the fork`, async () => {
    saver = open();
    const out = await build(saver).invoke(null, cfg());
    await close(saver);
    exactly(out.said, head.values.said, "said");
    exactly(out.huge, Infinity, "huge");
  });
}

async function interop() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flashback-jsedge-"));
  try {
    const file = path.join(tmp, "edge.sqlite");
    await run(
      "sqlite",
      (serde) => new SqliteSaver(new Database(file), serde),
      async (s) => s.db.close(),
      file
    );
    if (!process.argv.includes("--no-postgres")) {
      const why = await postgresBackend.unavailable();
      if (why && requirePg) await check("postgres", () => assert.fail(`${why} (required)`));
      else if (why) console.log(`skip postgres: ${why}`);
      else {
        const url = await postgresBackend.empty();
        const setup = PostgresSaver.fromConnString(url);
        await setup.setup();
        await setup.end();
        await run(
          "postgres",
          (serde) => {
            const pool = new pg.Pool({ connectionString: url });
            // The database is dropped WITH (FORCE) at the end: a connection the pool has not
            // closed yet is terminated then, which is expected, not a failure of the check.
            pool.on("error", () => {});
            return new PostgresSaver(pool, serde);
          },
          async (s) => s.end(),
          url
        );
      }
    }
  } finally {
    await postgresBackend.finish();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed ? 1 : 0);
}

if (process.argv.includes("--generate")) await generate();
else await interop();
