#!/usr/bin/env node
// `flashback mcp` driven by the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package.json) over stdio, the server being the built `flashback` binary: the tools listed,
// the writes absent without --allow-writes; on the LangGraph fixture (tests/fixtures/
// langgraph.sqlite) `threads`, `history`, `state` (whole and one path), `graph`, `diff` and
// `search` answer what `flashback … --json` prints for the same request; bad arguments are tool
// errors (isError) of one line.
//
//   FLASHBACK_BIN=target/debug/flashback node tests/js-fixtures/mcp.mjs
//
// Prints `ok NAME` / `FAIL NAME: why` per check and finally `N passed, M failed`.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const FLASHBACK =
  process.env.FLASHBACK_BIN ??
  path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug", "flashback");

const tally = { passed: 0, failed: 0 };
async function check(name, fn) {
  try {
    await fn();
    if (process.env.FLASHBACK_MCP_VERBOSE === "1") console.log(`ok ${name}`);
    tally.passed += 1;
  } catch (e) {
    console.log(`FAIL ${name}: ${String(e?.message ?? e).split("\n")[0].slice(0, 400)}`);
    tally.failed += 1;
  }
}

function cli(...args) {
  const r = spawnSync(FLASHBACK, [...args, "--json"], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`flashback ${args.join(" ")}: exit ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}
const cliJson = (...args) => JSON.parse(cli(...args));
const cliLines = (...args) => cli(...args).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

async function connect(db, ...flags) {
  const client = new Client({ name: "flashback-mcp-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: FLASHBACK, args: ["mcp", db, ...flags] }));
  return client;
}

const textOf = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
// The comparisons ask for whole answers (the fixture's largest, the 300-step graph, is ~165k
// characters); by default an answer is bounded to ~8k tokens and paged.
async function answer(client, name, args) {
  const r = await client.callTool({ name, arguments: { max_tokens: 100000, ...args } });
  if (r.isError) throw new Error(`${name}: ${textOf(r)}`);
  return r.structuredContent.result;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "flashback-mcp-"));
const db = path.join(tmp, "langgraph.sqlite");
fs.copyFileSync(path.join(ROOT, "tests", "fixtures", "langgraph.sqlite"), db);

const client = await connect(db);
try {
  const tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
  for (const name of ["threads", "history", "state", "graph", "diff", "search", "watch", "replay", "store_ls"]) {
    await check(`tool ${name} listed`, () => assert.ok(tools.has(name), [...tools.keys()].join(",")));
  }
  for (const name of ["fork", "merge", "delete_branch", "prune", "store_put", "rerun"]) {
    await check(`write ${name} absent without --allow-writes`, () => assert.ok(!tools.has(name)));
  }
  await check("state's input schema names the app's fields, not db", () => {
    const props = tools.get("state").inputSchema.properties;
    for (const f of ["thread_id", "checkpoint_id", "checkpoint_ns", "path"]) assert.ok(f in props, f);
    assert.ok(!("db" in props));
  });

  const threads = cliJson("threads", db);
  await check("threads == flashback threads --json", async () =>
    assert.deepStrictEqual(await answer(client, "threads", {}), threads));
  for (const { thread_id: tid } of threads) {
    const hist = cliJson("history", db, tid);
    await check(`${tid}: history`, async () =>
      assert.deepStrictEqual(await answer(client, "history", { thread_id: tid, checkpoint_ns: "" }), hist));
    await check(`${tid}: graph`, async () =>
      assert.deepStrictEqual(await answer(client, "graph", { thread_id: tid }), cliJson("graph", db, tid)));
    const state = cliJson("state", db, tid);
    await check(`${tid}: state`, async () =>
      assert.deepStrictEqual(await answer(client, "state", { thread_id: tid }), state));
    const channel = Object.keys(state.values)[0];
    if (channel !== undefined) {
      await check(`${tid}: state path=${channel}`, async () =>
        assert.deepStrictEqual((await answer(client, "state", { thread_id: tid, path: channel })).value, state.values[channel]));
    }
    if (hist.length >= 2) {
      const a = hist.at(-1).checkpoint_id;
      const b = hist[0].checkpoint_id;
      await check(`${tid}: diff`, async () =>
        assert.deepStrictEqual(
          await answer(client, "diff", { thread_id: tid, a: { checkpoint_id: a }, b: { checkpoint_id: b } }),
          cliJson("diff", db, tid, a, b),
        ));
    }
  }
  for (const query of ["hello", "weather"]) {
    const lines = cliLines("search", db, query);
    const expected = { hits: lines.filter((l) => l.type === "search_hit"), summary: lines.at(-1).result };
    await check(`search ${query}`, async () =>
      assert.deepStrictEqual(await answer(client, "search", { query, limit: 200, max_tokens: 100000 }), expected));
  }
  await check("the default answer is one page of ~8k tokens, with the cursor of the next", async () => {
    const r = await client.callTool({ name: "history", arguments: { thread_id: "long", checkpoint_ns: "" } });
    const size = JSON.stringify(r.structuredContent).length + textOf(r).length;
    assert.ok(size <= 34000, `${size} characters`);
    assert.ok(r.structuredContent.page.next_cursor, JSON.stringify(r.structuredContent.page));
  });
  const tid = threads[0].thread_id;
  for (const [name, args, says] of [
    ["state", {}, "thread_id"],
    ["state", { thread_id: "no-such-thread" }, "no-such-thread"],
    ["state", { thread_id: tid, path: "messages[[" }, "bad path"],
    ["history", { thread_id: tid, limt: 3 }, "unknown argument"],
    ["fork", { thread_id: tid, checkpoint_id: "x" }, "--allow-writes"],
  ]) {
    await check(`${name} ${JSON.stringify(args)}: a one-line tool error`, async () => {
      const r = await client.callTool({ name, arguments: args });
      const t = textOf(r).trim();
      assert.ok(r.isError, "isError");
      assert.ok(t.includes(says), t);
      assert.equal(t.split("\n").length, 1, t);
    });
  }
} finally {
  await client.close();
}

const writer = await connect(db, "--allow-writes");
try {
  const tools = (await writer.listTools()).tools.map((t) => t.name);
  await check("writes listed with --allow-writes, rerun only with --allow-run", () => {
    assert.ok(tools.includes("fork") && tools.includes("delete_branch"));
    assert.ok(!tools.includes("rerun"));
  });
} finally {
  await writer.close();
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed ? 1 : 0);
