#!/usr/bin/env node
// Real-window smoke test: the built desktop app (flashback-app --demo) in its own Xvfb, driven
// by tauri-driver + WebKitWebDriver over plain W3C WebDriver HTTP (Node 20, no npm packages).
//
//   node ui/e2e/window.mjs --app target/debug/flashback-app [--out .artifacts/screenshots]
//                          [--timeout SECONDS]   (overall limit, default 120)
//                          [--docs]              (copy the screenshots to docs/screenshots/)
//
// tauri-driver and WebKitWebDriver must be on PATH (scripts/window-test installs tauri-driver).
// The app gets a fresh temp dir as FLASHBACK_DATA_DIR (and as XDG_CONFIG_HOME/XDG_DATA_HOME, so
// window-state and WebKit files stay out of the real home). No WEBKIT_* / LIBGL_* variables are
// passed on: they make WebDriver screenshots hang (docs: tauri-on-debian.md).
//
// Each check prints `ok - name` or `not ok - name: why`; the last line is
// `window: N passed, M failed` (exit 1 if any failed). Screenshots: window-threads.png and
// window-thread.png in --out. Everything is torn down at the end, on failure, on a signal and
// after the overall timeout.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { die, freePort, sleep, startXvfb, wd, which } from "./window/proc.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const app = opt("--app", null);
const out = resolve(opt("--out", ".artifacts/screenshots"));
const docs = argv.includes("--docs"); // also copy the pictures the README shows to docs/screenshots
const OVERALL_MS = Number(opt("--timeout", 120)) * 1000;
const THREADS = 12; // threads in the demo database
const FORKED_ROWS = 14; // checkpoints of its thread "forked"
const EDITED = "edited in the real window";

if (!app) die("usage: node ui/e2e/window.mjs --app <flashback-app> [--out <dir>]");
if (!existsSync(app)) die(`no app binary at ${app} (npm --prefix ui run build && cargo build -p flashback-app)`);
const xvfbBin = which("Xvfb") || die("Xvfb not found (apt-get install xvfb xauth)");
const webkitDriver = which("WebKitWebDriver") || die("WebKitWebDriver not found (apt-get install webkit2gtk-driver)");
const tauriDriver = which("tauri-driver") || die("tauri-driver not on PATH (scripts/window-test installs it)");
mkdirSync(out, { recursive: true });

const work = mkdtempSync(join(tmpdir(), "flashback-window-"));
const driverLog = join(work, "tauri-driver.log");
const procs = []; // [{name, child}] started here, killed (whole process group) in cleanup
let sessionUrl = null;
let passed = 0;
let failed = 0;
let timedOut = false; // after the overall timeout, the main flow's late results are not reported

function report(ok, name, why) {
  if (timedOut) return;
  if (ok) passed++;
  else failed++;
  console.log(ok ? `ok - ${name}` : `not ok - ${name}: ${String(why).replace(/\s+/g, " ")}`);
}

// ---- WebDriver over HTTP ----------------------------------------------------------------------

const s = (method, path, body, timeoutMs) => wd(method, sessionUrl + path, body, timeoutMs);
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
const js = (script, ...args) => s("POST", "/execute/sync", { script, args });
const find = async (css) => (await s("POST", "/element", { using: "css selector", value: css }))[ELEMENT];
const tid = (id) => `[data-testid="${id}"]`;

// Polls fn() until it returns a truthy value; throws with the last value seen otherwise.
async function waitFor(what, fn, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last && last.ok !== false) return last;
    } catch (e) {
      last = e.message;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(200);
  }
}

// A snapshot of what the test looks at, read in one script call.
const snapshot = () =>
  js(`const q = (id) => document.querySelector('[data-testid="' + id + '"]');
      const dag = q("dag"), sel = q("selected-id"), fatal = q("fatal");
      return {
        threadListScreen: !!q("thread-list-screen"),
        rows: document.querySelectorAll('[data-testid="thread-row"]').length,
        threadDetailScreen: !!q("thread-detail-screen"),
        dagRows: dag ? dag.getAttribute("data-rows") : null,
        selected: sel ? sel.textContent.trim() : null,
        fatal: fatal ? fatal.textContent.trim() : null,
      };`);

async function screenshot(name) {
  await sleep(1000); // a screenshot right after a DOM change can show the previous frame
  const png = await s("GET", "/screenshot", undefined, 30_000);
  const file = join(out, name);
  writeFileSync(file, Buffer.from(png, "base64"));
  console.log(`# screenshot ${file}`);
  if (docs && name === "window-edit-fork.png") {
    const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/screenshots");
    mkdirSync(docsDir, { recursive: true });
    writeFileSync(join(docsDir, `desktop-${name.replace(/^window-/, "")}`), Buffer.from(png, "base64"));
  }
}

async function check(name, fn) {
  try {
    if (!sessionUrl) throw new Error("not run (no WebDriver session)");
    await fn();
    report(true, name);
  } catch (e) {
    report(false, name, e.message || e);
  }
}

// ---- teardown -----------------------------------------------------------------------------------

let cleaning = null;
const cleanup = () => (cleaning ??= teardown()); // one teardown, however many callers

async function teardown() {
  if (sessionUrl) await wd("DELETE", sessionUrl, undefined, 10_000).catch(() => {}); // closes the app
  for (const { child } of procs.reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, "SIGTERM"); // the process group: tauri-driver, WebKitWebDriver, the app
    } catch {}
    if (!(await Promise.race([gone.then(() => true), sleep(3000)]))) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }
  }
  rmSync(work, { recursive: true, force: true });
}

function finish(code) {
  console.log(`window: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

const overall = setTimeout(async () => {
  report(false, "overall", `timed out after ${OVERALL_MS / 1000} s`);
  timedOut = true;
  showDriverLog();
  await Promise.race([cleanup(), sleep(15_000)]);
  finish(1);
}, OVERALL_MS);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    await Promise.race([cleanup(), sleep(15_000)]);
    process.exit(130);
  });
}

function showDriverLog() {
  try {
    const log = readFileSync(driverLog, "utf8").trim().split("\n").slice(-30);
    if (log.length && log[0]) console.log(log.map((l) => `# tauri-driver: ${l}`).join("\n"));
  } catch {}
}

// ---- the run ------------------------------------------------------------------------------------

let driverBase = null;

/** Start the app (a new WebDriver session) with these arguments. */
async function startApp(args) {
  const started = Date.now();
  const session = await wd(
    "POST",
    `${driverBase}/session`,
    { capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: resolve(app), args } } } },
    60_000,
  );
  sessionUrl = `${driverBase}/session/${session.sessionId}`;
  console.log(`# session ${session.sessionId} in ${Date.now() - started} ms`);
}

try {
  const display = await startXvfb(xvfbBin, procs);
  const [port, nativePort] = [await freePort(), await freePort()];
  const dataDir = join(work, "data");
  const env = { ...process.env, DISPLAY: display, FLASHBACK_DATA_DIR: dataDir };
  env.XDG_CONFIG_HOME = join(work, "config");
  env.XDG_DATA_HOME = join(work, "share");
  for (const k of Object.keys(env)) if (/^(WEBKIT_|LIBGL_)/.test(k)) delete env[k];
  for (const d of [dataDir, env.XDG_CONFIG_HOME, env.XDG_DATA_HOME]) mkdirSync(d, { recursive: true });
  console.log(`# display ${display}, tauri-driver :${port} (native :${nativePort}), data dir ${dataDir}`);

  const logFd = openSync(driverLog, "a");
  const driver = spawn(
    tauriDriver,
    ["--port", String(port), "--native-port", String(nativePort), "--native-driver", webkitDriver],
    { env, stdio: ["ignore", logFd, logFd], detached: true },
  );
  procs.push({ name: "tauri-driver", child: driver });
  const base = `http://127.0.0.1:${port}`;
  await waitFor("tauri-driver /status", async () => (await wd("GET", `${base}/status`, undefined, 2000)).ready, 20_000);

  driverBase = base;
  await startApp(["--demo"]);
} catch (e) {
  report(false, "start the app", e.message || e);
  if (!timedOut) showDriverLog();
}

await check(`threads screen lists the demo's ${THREADS} threads`, async () => {
  const snap = await waitFor(`${THREADS} thread rows`, async () => {
    const v = await snapshot();
    if (v.fatal) throw new Error(`fatal: ${v.fatal}`);
    return { ...v, ok: v.threadListScreen && v.rows === THREADS };
  });
  if (!snap.threadListScreen) throw new Error("no thread-list-screen");
  await screenshot("window-threads.png");
});

let firstSelected = null;
await check(`thread "forked" shows a ${FORKED_ROWS}-row graph with a selection`, async () => {
  // The thread name's button (WebKitWebDriver calls a <tr> itself "not interactable").
  await s("POST", `/element/${await find(`${tid("thread-row")}[data-thread="forked"] button`)}/click`, {});
  const snap = await waitFor(`thread screen with ${FORKED_ROWS} dag rows`, async () => {
    const v = await snapshot();
    return { ...v, ok: v.threadDetailScreen && v.dagRows === String(FORKED_ROWS) && !!v.selected };
  });
  firstSelected = snap.selected;
  console.log(`# selected ${firstSelected}`);
  await screenshot("window-thread.png");
});

await check(`"j" moves the selection to an older checkpoint`, async () => {
  if (!firstSelected) throw new Error("no selection to start from");
  const key = (type) => ({ type, value: "j" });
  await s("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions: [key("keyDown"), key("keyUp")] }] });
  const snap = await waitFor("selected-id to change", async () => {
    const v = await snapshot();
    return { ...v, ok: !!v.selected && v.selected !== firstSelected };
  }, 5_000);
  console.log(`# selected ${snap.selected}`);
});

// The newcomer's path: step to the fork point, fork again with an edited value, see the branch.
await check("edit & fork at the fork point adds a new branch", async () => {
  const forkPoint = await find(`${tid("dag-row")}[data-fork-point="true"] .id`);
  const forkId = await js(`return document.querySelector('[data-testid="dag-row"][data-fork-point="true"]').dataset.id;`);
  await s("POST", `/element/${forkPoint}/click`, {});
  await waitFor("the fork point selected", async () => ({ ok: (await snapshot()).selected === forkId }), 5_000);
  await s("POST", `/element/${await find(tid("edit-fork-open"))}/click`, {});
  await waitFor("the edit dialog", async () => ({ ok: await js(`return !!document.querySelector('[data-testid="edit-json"]');`) }), 5_000);
  // Choose the channel and put a value in the editor (as a paste would).
  await js(
    `const sel = document.querySelector('[data-testid="edit-channel"]');
     sel.value = "log";
     sel.dispatchEvent(new Event("change", { bubbles: true }));`,
  );
  await sleep(300);
  await js(
    `const ed = document.querySelector('[data-testid="edit-json"]');
     ed.value = JSON.stringify(["input", "step1", arguments[0]], null, 2);
     ed.dispatchEvent(new Event("input", { bubbles: true }));`,
    EDITED,
  );
  await waitFor("the value to validate", async () => ({ ok: await js(`return !!document.querySelector('[data-testid="edit-valid"]');`) }), 10_000);
  await s("POST", `/element/${await find(tid("edit-fork-submit"))}/click`, {});
  const snap = await waitFor(`${FORKED_ROWS + 1} dag rows`, async () => {
    const v = await snapshot();
    return { ...v, ok: v.dagRows === String(FORKED_ROWS + 1) };
  });
  const head = await js(
    `const h = document.querySelector('[data-testid="dag-row"][data-head="true"]');
     return { id: h.dataset.id, source: h.dataset.source, lane: h.dataset.lane };`,
  );
  if (head.source !== "update") throw new Error(`the new head is not an update: ${JSON.stringify(head)}`);
  if (snap.selected !== head.id) throw new Error("the new checkpoint is not selected");
  const shown = await js(`return document.querySelector('[data-testid="channel"][data-channel="log"]').textContent;`);
  if (!shown.includes(EDITED)) throw new Error(`the state shows the edited value: ${shown}`);
  await screenshot("window-edit-fork.png");
});

// Places: the URL follows the thread, the checkpoint and the tab, and the app reopens there.
let place = null;
await check("the URL names the thread, the checkpoint and the tab", async () => {
  const forkId = await js(`return document.querySelector('[data-testid="dag-row"][data-fork-point="true"]').dataset.id;`);
  await s("POST", `/element/${await find(`${tid("dag-row")}[data-fork-point="true"] .id`)}/click`, {});
  await waitFor("the fork point selected", async () => ({ ok: (await snapshot()).selected === forkId }), 5_000);
  await s("POST", `/element/${await find(tid("tab-writes"))}/click`, {});
  const hash = await waitFor("the URL to follow", async () => {
    const h = await js("return decodeURIComponent(window.location.hash);");
    return { h, ok: h.startsWith("#/thread/forked") && h.includes(`checkpoint=${forkId}`) && h.includes("tab=writes") };
  }, 5_000);
  place = { forkId, hash: hash.h };
  console.log(`# place ${hash.h}`);
});

await check("after a restart the app opens where it was left", async () => {
  if (!place) throw new Error("no place to return to");
  await sleep(1500); // the place is saved half a second after it changes
  await wd("DELETE", sessionUrl, undefined, 10_000); // closes the app
  sessionUrl = null;
  await startApp([]); // no argument: the last database, at the last place
  const snap = await waitFor("the thread screen at the fork point", async () => {
    const v = await snapshot();
    const tab = await js(`const t = document.querySelector('[data-testid="tab-writes"]'); return t ? t.getAttribute("aria-selected") : null;`);
    return { ...v, tab, ok: v.threadDetailScreen && v.selected === place.forkId && tab === "true" };
  }, 30_000);
  console.log(`# reopened at ${snap.selected}`);
});

if (failed && !timedOut) showDriverLog();
await Promise.race([cleanup(), sleep(20_000)]);
clearTimeout(overall);
finish(failed ? 1 : 0);
