#!/usr/bin/env node
// Browser end-to-end test: the real backend (`flashback serve` on a copy of the fixture
// database written by the real LangGraph) driven through Debian's Chromium by playwright-core
// (which never downloads a browser of its own).
//
//   node ui/e2e/browser.mjs [--bin target/debug/flashback] [--out .artifacts/screenshots] [--docs]
//                           [--big DB] [--python PY] [--pg URL] [--agents DB]
//
// Besides the fixture, fixtures.mjs makes copies with undecodable writes, 3,000 threads, a
// checkpoint forked 5,000 times, and one for retention to delete from.
// --big: a database with a 10,000-checkpoint thread `bench` (scripts/test builds it with the
// real LangGraph, tests/fixtures/bench_long_thread.py) for the virtualised DAG.
// --python: a Python with the pinned LangGraph, for a re-run that really resumes the graph
// (examples/counter_agent.py). With CI=true both are required; otherwise their checks are
// skipped with a line saying so.
// --pg: an empty Postgres database (postgres://…) to load the Postgres fixture into and browse.
//
// Each check prints `ok - name` or `not ok - name: why`; the last line is
// `browser: N passed, M failed`. Screenshots go to --out (and, with --docs, the ones the README
// shows are copied to docs/screenshots/).
//
// This file runs the checks in order; they live in browser/ by screen (open, thread-list,
// thread-detail, topology, thread-actions, optional, repair, retention, langgraphjs, devserver, agentserver, layout, …), with the runner and page helpers in
// browser/harness.mjs and the test databases in browser/fixtures.mjs.

import { chromium } from "playwright-core";
import { mkdirSync, rmSync } from "node:fs";
import { readOptions } from "./browser/options.mjs";
import { makeFixtures } from "./browser/fixtures.mjs";
import { startServer } from "./browser/server.mjs";
import { createHarness, expect } from "./browser/harness.mjs";
import * as open from "./browser/open.mjs";
import * as threadList from "./browser/thread-list.mjs";
import * as threadFilter from "./browser/thread-filter.mjs";
import * as threadDetail from "./browser/thread-detail.mjs";
import * as threadActions from "./browser/thread-actions.mjs";
import * as optional from "./browser/optional.mjs";
import * as routes from "./browser/routes.mjs";
import * as valueSearch from "./browser/value-search.mjs";
import * as storage from "./browser/storage.mjs";
import * as indexes from "./browser/indexes.mjs";
import * as stateView from "./browser/state-view.mjs";
import * as bigCheckpoint from "./browser/bigcheckpoint.mjs";
import * as watch from "./browser/watch.mjs";
import * as interrupts from "./browser/interrupts.mjs";
import * as repair from "./browser/repair.mjs";
import * as retention from "./browser/retention.mjs";
import * as langgraphjs from "./browser/langgraphjs.mjs";
import * as devserver from "./browser/devserver.mjs";
import * as agentserver from "./browser/agentserver.mjs";
import * as agents from "./browser/agents.mjs";
import * as topology from "./browser/topology.mjs";
import * as layout from "./browser/layout.mjs";

const options = readOptions();
mkdirSync(options.out, { recursive: true });
const fixtures = makeFixtures(options.repo);
const t = Object.assign(createHarness(options), fixtures);

// In this order: each check starts where the one before it left the page (and the database:
// forks add checkpoints, delete and prune remove some).
const checks = [
  open.withoutToken,
  threadList.listsEveryThread,
  open.tokenInCookie,
  threadList.inbox,
  threadFilter.metadataFilter,
  valueSearch.valueSearch,
  storage.storage,
  storage.payloads,
  indexes.indexes,
  threadDetail.lanes,
  threadDetail.keyboardStepping,
  threadDetail.dialogFocus,
  threadDetail.chatBubble,
  topology.chatFollows,
  threadDetail.writeTrace,
  threadDetail.diffWithParent,
  threadDetail.diffAcrossBranches,
  threadDetail.errorText,
  threadActions.forkHere,
  threadActions.editAndFork,
  threadActions.badEdits,
  threadActions.merge,
  threadActions.rerun,
  threadActions.exportReport,
  stateView.searchAndUnfold,
  watch.watchKey,
  layout.playAndPick,
  layout.moreMenu,
  layout.fitsSmallScreens,
  threadDetail.longThreads,
  threadDetail.wideThread,
  optional.bigThread,
  optional.realRerun,
  bigCheckpoint.bigCheckpoint,
  optional.deltaChannels,
  optional.encrypted,
  optional.memory,
  optional.stepActivity,
  interrupts.resumeWith,
  repair.repairFromWrites,
  optional.postgres,
  threadDetail.subgraphs,
  topology.topology,
  routes.routes,
  threadDetail.sendFanout,
  threadActions.deleteThread,
  threadList.prune,
  retention.retention,
  open.notADatabase,
  open.missingFile,
  open.unreachable,
  open.stalledServer,
  threadDetail.undecodable,
  threadList.manyThreads,
  threadList.slowFirstPage,
  threadList.sortAndGroup,
  // A group of its own: a copy of the LangGraph.js fixture, opened and forked into, then the
  // served copy opened again.
  langgraphjs.threadList,
  langgraphjs.chat,
  langgraphjs.interrupt,
  langgraphjs.fork,
  // A group of its own: `flashback serve` on a copy of a `langgraph dev` folder, then the
  // served database again.
  devserver.threads,
  devserver.runs,
  devserver.memory,
  devserver.stale,
  // A database of today's agents (--agents), opened, then the served database again.
  agents.approval,
  agents.deepAgent,
  topology.deepAgent,
  open.demoAndTheme,
  // Last: the real `langgraph dev` running (tests/devserver/serve_live.py) and `flashback serve
  // http://…` on it; Resume with… runs on the server.
  agentserver.resume,
];

let browser;
try {
  t.server = await startServer(options.bin, fixtures.work, fixtures.db);
  browser = await chromium.launch({
    executablePath: options.chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true, permissions: ["clipboard-read", "clipboard-write"] });
  t.page = await context.newPage();
  const pageErrors = [];
  t.page.on("pageerror", (e) => pageErrors.push(e.message));
  // Console errors fail the run too. Failed HTTP answers are the one kind expected (the checks
  // without a token, of a missing file, …): the app shows those itself.
  t.page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) pageErrors.push(`console: ${m.text()}`);
  });
  t.page.setDefaultTimeout(10_000);

  // --only TEXT: the first three checks (they open the page) and the checks whose name holds TEXT, for
  // working on one screen (the full run is what counts).
  const only = options.only;
  for (const [i, c] of checks.entries()) if (!only || i < 3 || c.name.includes(only)) await t.runCheck(c);

  await t.check("no uncaught errors or console errors in the page", async () => {
    expect(pageErrors.length === 0, pageErrors.join(" | "));
  });
} catch (e) {
  t.results.push(false);
  console.log(`not ok - setup: ${e.message}`);
} finally {
  await browser?.close().catch(() => {});
  t.server?.child.kill("SIGTERM");
  t.devServe?.child.kill("SIGTERM");
  agentserver.stopLive(t);
  rmSync(fixtures.work, { recursive: true, force: true });
}

const { line, ok } = t.summary();
console.log(line);
process.exit(ok ? 0 : 1);
