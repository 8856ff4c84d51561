#!/usr/bin/env node
// The app's thread-list first paint: for each run, a fresh `flashback serve DB` and a fresh
// browser context (no HTTP cache), then the time from navigating to the served URL until the
// first row of the thread table is visible: a thread (`[data-testid="thread-row"]`) or a group
// of similar threads folded into one row (`thread-group`: the benchmark's copies, `bulk-*`, fold
// so; ThreadTable.svelte).
//
//   node bench/first_paint.mjs --bin FLASHBACK --db LOCATION [--runs 5] [--timeout 600] [--budget S]
// (--timeout: the longest wait for the first row; --budget: no more runs after a first run
// longer than S seconds)
//
// Prints one JSON line: {"runs": [seconds…], "min", "median", "max", "rows": rows in the DOM,
// "serve_start": [seconds from spawning serve to its URL], "page": [seconds from navigating to
// the page's first request to the API, i.e. the UI's own load]}; a run that times out ends
// the measurement with {"error": …} and the runs so far. Chromium and playwright-core: see
// bench/app.mjs.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, options, startServer, stopServer, summary } from "./app.mjs";

const { bin, db, runs, timeoutMs, budget, chromiumPath } = options("first_paint");
const browser = await launch(chromiumPath);
const seconds = [];
const result = { serve_start: [], page: [] };
const dataDir = mkdtempSync(join(tmpdir(), "flashback-first-paint-"));
try {
  for (let i = 0; i < runs; i++) {
    let server, context, page;
    try {
      server = await startServer(bin, db, dataDir);
      context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      page = await context.newPage();
      const t0 = performance.now();
      let firstApi = null;
      page.on("request", (r) => {
        if (firstApi === null && r.url().includes("/api/")) firstApi = performance.now();
      });
      await page.goto(server.url);
      const firstRow = '[data-testid="thread-row"], [data-testid="thread-group"]';
      await page.locator(firstRow).first().waitFor({ state: "visible", timeout: timeoutMs });
      seconds.push((performance.now() - t0) / 1000);
      result.serve_start.push(Math.round(server.started * 10000) / 10000);
      result.page.push(Math.round(((firstApi ?? t0) - t0) / 10) / 100);
      result.rows = await page.locator(firstRow).count();
      result.listed = Number(await page.locator('[data-testid="threads-table"]').getAttribute("data-rows"));
    } catch (e) {
      const shown = page && (await page.locator('[data-testid="threads-error"]').textContent({ timeout: 1000 }).catch(() => null));
      result.error = `${(e && e.message ? e.message : String(e)).split("\n")[0]}${shown ? ` (the app shows: ${shown})` : ""}`;
      break;
    } finally {
      await context?.close();
      if (server) await stopServer(server);
    }
    if (i === 0 && budget && seconds[0] > budget) {
      result.skipped = `first run took ${Math.round(seconds[0])} s > budget ${budget} s: no more runs`;
      break;
    }
  }
} finally {
  await browser.close();
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(JSON.stringify({ ...summary(seconds), ...result }));
process.exit(result.error ? 1 : 0);
