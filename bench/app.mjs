// What the app benchmarks share (first_paint.mjs, thread_open.mjs): their options, playwright-core,
// headless Chromium, a fresh `flashback serve DB` per run, and min/median/max.
// Chromium: $CHROMIUM or /usr/bin/chromium (Debian's `chromium`). playwright-core: from ui/'s
// or the repository's node_modules, else $PLAYWRIGHT_CORE (a path to the package's directory).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** `--name value` options of this process, and the ones every app benchmark takes. */
export function options(script) {
  const argv = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : dflt;
  };
  const common = {
    bin: resolve(opt("--bin", join(process.env.CARGO_TARGET_DIR || join(here, "..", "target"), "release", "flashback"))),
    db: opt("--db", null),
    runs: Number(opt("--runs", "5")),
    timeoutMs: Number(opt("--timeout", "600")) * 1000,
    budget: Number(opt("--budget", "0")),
    chromiumPath: process.env.CHROMIUM || "/usr/bin/chromium",
  };
  if (!common.db) {
    console.error(`${script}: --db LOCATION is required`);
    process.exit(2);
  }
  for (const [what, path] of [["flashback binary", common.bin], ["Chromium", common.chromiumPath]]) {
    if (!existsSync(path)) {
      console.error(`${script}: no ${what} at ${path}`);
      process.exit(2);
    }
  }
  return { ...common, opt };
}

/** Headless Chromium through playwright-core. */
export async function launch(chromiumPath) {
  const candidates = [process.env.PLAYWRIGHT_CORE, join(here, "..", "ui", "node_modules", "playwright-core"), join(here, "..", "node_modules", "playwright-core")];
  const dir = candidates.find((d) => d && existsSync(join(d, "package.json")));
  if (!dir) {
    console.error("playwright-core not found (npm ci, or set PLAYWRIGHT_CORE)");
    process.exit(2);
  }
  const main = createRequire(join(dir, "package.json")).resolve(dir);
  const { chromium } = (await import(pathToFileURL(main).href)).default;
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** `flashback serve DB` on a free port: its URL (with the token), the child, and how long it took to start. */
export function startServer(bin, db, dataDir) {
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
        resolveUrl({ url: m[1], child, started: (performance.now() - t0) / 1000 });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${stderr}`));
    });
  });
}

/** Stop a server started by startServer. */
export async function stopServer(server) {
  server.child.kill("SIGTERM");
  await new Promise((r) => (server.child.exitCode !== null ? r() : server.child.once("exit", r)));
}

/** `{min, median, max}` of seconds, and the seconds rounded to 0.1 ms. */
export function summary(seconds) {
  if (!seconds.length) return { runs: [] };
  const sorted = [...seconds].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const round = (s) => Math.round(s * 10000) / 10000;
  return {
    runs: seconds.map(round),
    min: round(sorted[0]),
    median: round(sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2),
    max: round(sorted[sorted.length - 1]),
  };
}
