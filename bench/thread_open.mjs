#!/usr/bin/env node
// The app on a long thread: opening it and stepping through it. For each run, a fresh
// `flashback serve DB` and browser context; from the thread list, a click on the thread's row
// until the thread's checkpoints are drawn and its head's detail is shown ("open"), then
// --steps presses of `j` (one checkpoint back along the branch), each timed until the newly
// selected checkpoint's detail is shown ("step").
//
//   node bench/thread_open.mjs --bin FLASHBACK --db LOCATION --thread ID [--runs 5] [--steps 20]
//        [--timeout 600] [--budget S] [--wait TESTID]
//
// --wait TESTID: "open" also waits until an element with that data-testid is visible (the
// paged message list of an enormous checkpoint: `paged-list`).
//
// Prints one JSON line: {"open": {runs, min, median, max}, "step": {runs (every step of every
// run), min, median, max}, "position": the scrub bar's "K / N" after opening}; an error ends the measurement with
// {"error": …} and what was measured so far. Chromium and playwright-core: see bench/app.mjs.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch, options, startServer, stopServer, summary } from "./app.mjs";

const { bin, db, runs, timeoutMs, budget, chromiumPath, opt } = options("thread_open");
const thread = opt("--thread", null);
const steps = Number(opt("--steps", "20"));
const waitFor = opt("--wait", null);
if (!thread) {
  console.error("thread_open: --thread ID is required");
  process.exit(2);
}
const tid = (id) => `[data-testid="${id}"]`;
const browser = await launch(chromiumPath);
const open = [];
const step = [];
const result = {};
const dataDir = mkdtempSync(join(tmpdir(), "flashback-thread-open-"));
try {
  for (let i = 0; i < runs; i++) {
    let server, context;
    try {
      // A data directory of its own per run: the app reopens where the last run left it.
      server = await startServer(bin, db, mkdtempSync(join(dataDir, "run-")));
      context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(server.url);
      const row = page.locator(`${tid("thread-row")}[data-thread="${thread}"]`);
      await row.waitFor({ state: "visible", timeout: timeoutMs });
      // The detail shown is the selected checkpoint's.
      const shown = () =>
        page.waitForFunction(
          () => {
            const id = document.querySelector('[data-testid="selected-id"]')?.textContent?.trim();
            return !!id && document.querySelector('[data-testid="detail-pane"]')?.dataset.checkpoint === id;
          },
          null,
          { timeout: timeoutMs, polling: "raf" },
        );
      let t0 = performance.now();
      await row.click();
      await page.locator(tid("dag-row")).first().waitFor({ state: "visible", timeout: timeoutMs });
      await shown();
      if (waitFor) await page.locator(tid(waitFor)).first().waitFor({ state: "visible", timeout: timeoutMs });
      open.push((performance.now() - t0) / 1000);
      result.position = (await page.locator(tid("scrub-position")).textContent()).trim();
      for (let s = 0; s < steps; s++) {
        const before = (await page.locator(tid("selected-id")).textContent()).trim();
        t0 = performance.now();
        await page.keyboard.press("j");
        await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() !== prev, before, {
          timeout: timeoutMs,
          polling: "raf",
        });
        await shown();
        step.push((performance.now() - t0) / 1000);
      }
    } catch (e) {
      result.error = (e && e.message ? e.message : String(e)).split("\n")[0];
      break;
    } finally {
      await context?.close();
      if (server) await stopServer(server);
    }
    if (i === 0 && budget && open[0] > budget) {
      result.skipped = `first run took ${Math.round(open[0])} s > budget ${budget} s: no more runs`;
      break;
    }
  }
} finally {
  await browser.close();
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(JSON.stringify({ open: summary(open), step: summary(step), ...result }));
process.exit(result.error ? 1 : 0);
