#!/usr/bin/env node
// The app's thread-list first paint: for each run, a fresh `flashback serve DB` and a fresh
// browser context (no HTTP cache), then the time from navigating to the served URL until the
// first thread row (`[data-testid="thread-row"]`, ThreadListScreen.svelte) is visible.
//
//   node bench/first_paint.mjs --bin FLASHBACK --db LOCATION [--runs 5] [--timeout 600] [--budget S]
// (--timeout: the longest wait for the first row; --budget: no more runs after a first run
// longer than S seconds)
//
// Prints one JSON line: {"runs": [seconds…], "min", "median", "max", "rows": rows in the DOM,
// "serve_start": [seconds from spawning serve to its URL]}; a run that times out ends the
// measurement with {"error": …} and the runs so far.
// Chromium: $CHROMIUM or /usr/bin/chromium (Debian's `chromium`). playwright-core: from ui/'s
// or the repository's node_modules, else $PLAYWRIGHT_CORE (a path to the package's directory).

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const bin = resolve(opt("--bin", join(process.env.CARGO_TARGET_DIR || join(here, "..", "target"), "release", "flashback")));
const db = opt("--db", null);
const runs = Number(opt("--runs", "5"));
const timeoutMs = Number(opt("--timeout", "600")) * 1000;
const budget = Number(opt("--budget", "0"));
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!db) {
  console.error("first_paint: --db LOCATION is required");
  process.exit(2);
}
for (const [what, path] of [["flashback binary", bin], ["Chromium", chromiumPath]]) {
  if (!existsSync(path)) {
    console.error(`first_paint: no ${what} at ${path}`);
    process.exit(2);
  }
}

async function loadPlaywright() {
  const candidates = [process.env.PLAYWRIGHT_CORE, join(here, "..", "ui", "node_modules", "playwright-core"), join(here, "..", "node_modules", "playwright-core")];
  for (const dir of candidates) {
    if (dir && existsSync(join(dir, "package.json"))) {
      const main = createRequire(join(dir, "package.json")).resolve(dir);
      return (await import(pathToFileURL(main).href)).default;
    }
  }
  console.error("first_paint: playwright-core not found (npm ci, or set PLAYWRIGHT_CORE)");
  process.exit(2);
}

function startServer(dataDir) {
  const t0 = performance.now();
  const child = spawn(bin, ["serve", db, "--port", "0"], {
    env: { ...process.env, FLASHBACK_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolveUrl, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 60_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolveUrl({ url: m[1], child, started: (performance.now() - t0) / 1000, stderr: () => stderr });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${stderr}`));
    });
  });
}

const { chromium } = await loadPlaywright();
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const result = { runs: [], serve_start: [] };
const dataDir = mkdtempSync(join(tmpdir(), "flashback-first-paint-"));
try {
  for (let i = 0; i < runs; i++) {
    let server, context, page;
    try {
      server = await startServer(dataDir);
      context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      page = await context.newPage();
      const t0 = performance.now();
      await page.goto(server.url);
      await page.locator('[data-testid="thread-row"]').first().waitFor({ state: "visible", timeout: timeoutMs });
      result.runs.push((performance.now() - t0) / 1000);
      result.serve_start.push(server.started);
      result.rows = await page.locator('[data-testid="thread-row"]').count();
      result.listed = Number(await page.locator('[data-testid="threads-table"]').getAttribute("data-rows"));
    } catch (e) {
      const shown = page && (await page.locator('[data-testid="threads-error"]').textContent({ timeout: 1000 }).catch(() => null));
      result.error = `${(e && e.message ? e.message : String(e)).split("\n")[0]}${shown ? ` (the app shows: ${shown})` : ""}`;
      break;
    } finally {
      await context?.close();
      if (server) {
        server.child.kill("SIGTERM");
        await new Promise((r) => (server.child.exitCode !== null ? r() : server.child.once("exit", r)));
      }
    }
    if (i === 0 && budget && result.runs[0] > budget) {
      result.skipped = `first run took ${Math.round(result.runs[0])} s > budget ${budget} s: no more runs`;
      break;
    }
  }
} finally {
  await browser.close();
  rmSync(dataDir, { recursive: true, force: true });
}
if (result.runs.length) {
  const sorted = [...result.runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  result.min = sorted[0];
  result.max = sorted[sorted.length - 1];
  result.median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
for (const k of ["runs", "serve_start"]) result[k] = result[k].map((s) => Math.round(s * 10000) / 10000);
console.log(JSON.stringify(result));
process.exit(result.error ? 1 : 0);
