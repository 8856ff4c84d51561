#!/usr/bin/env node
// Browser end-to-end test: the real backend (`flashback serve` on a copy of the fixture
// database written by the real LangGraph) driven through Debian's Chromium by playwright-core
// (which never downloads a browser of its own).
//
//   node ui/e2e/browser.mjs [--bin target/debug/flashback] [--out .artifacts/screenshots] [--docs]
//                           [--big DB] [--python PY] [--pg URL]
//
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

import { chromium } from "playwright-core";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const target = process.env.CARGO_TARGET_DIR || join(repo, "target");
const bin = resolve(opt("--bin", join(target, "debug", "flashback")));
const out = resolve(opt("--out", join(repo, ".artifacts", "screenshots")));
const docs = args.includes("--docs");
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const bigDb = opt("--big", null);
const python = opt("--python", null);
const pgUrl = opt("--pg", null);
const ci = ["1", "true"].includes((process.env.CI || "").toLowerCase());

if (!existsSync(bin)) {
  console.error(`browser e2e: no flashback binary at ${bin} (cargo build -p flashback-cli)`);
  process.exit(2);
}
if (!existsSync(chromiumPath)) {
  console.error(`browser e2e: no Chromium at ${chromiumPath} (apt-get install chromium)`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const work = mkdtempSync(join(tmpdir(), "flashback-e2e-"));
const fixture = join(repo, "tests", "fixtures", "langgraph.sqlite");
const db = join(work, "agents.sqlite");
copyFileSync(fixture, db);

// A copy with undecodable pending writes (bad msgpack) in one thread.
const broken = join(work, "broken.sqlite");
copyFileSync(fixture, broken);
const py = spawnSync(
  "python3",
  [
    "-c",
    "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); n=c.execute(\"UPDATE writes SET value=x'c1c1c1' WHERE thread_id='chat-tools' AND channel='messages'\").rowcount; c.commit(); print(n)",
    broken,
  ],
  { encoding: "utf8" },
);
if (py.status !== 0 || !(Number(py.stdout) > 0)) {
  console.error(`browser e2e: cannot corrupt the test copy: ${py.stderr}`);
  process.exit(2);
}
// A copy where the thread "forked" is repeated 3,000 times (t0000-forked …): the threads list
// must stay quick (only the rows in view are in the DOM) and searchable.
const many = join(work, "many.sqlite");
copyFileSync(fixture, many);
const copies = spawnSync(
  "python3",
  [
    "-c",
    `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for t in ("checkpoints", "writes"):
    cols = [r[1] for r in c.execute(f"PRAGMA table_info({t})")]
    sel = ",".join("? || thread_id" if x == "thread_id" else x for x in cols)
    for i in range(3000):
        c.execute(f"INSERT INTO {t} ({','.join(cols)}) SELECT {sel} FROM {t} WHERE thread_id = 'forked'", (f"t{i:04d}-",))
c.commit()
print(c.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0])`,
    many,
  ],
  { encoding: "utf8" },
);
if (copies.status !== 0 || Number(copies.stdout) !== 3012) {
  console.error(`browser e2e: cannot make the 3,000-thread copy: ${copies.stdout}${copies.stderr}`);
  process.exit(2);
}
const notes = join(work, "notes.txt");
writeFileSync(notes, "these are notes, not a database\n".repeat(100));

// ---- the server -------------------------------------------------------------------------------

function startServer(location) {
  const child = spawn(bin, ["serve", location, "--port", "0"], {
    env: { ...process.env, FLASHBACK_DATA_DIR: join(work, "data") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolveUrl, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolveUrl({ url: m[1], child });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${stderr}`));
    });
  });
}

// ---- a tiny test runner -------------------------------------------------------------------------

const results = [];
let page;
let browser;
let server;

async function checkIf(available, why, name, fn) {
  if (available) return check(name, fn);
  if (ci) return check(name, async () => expect(false, `${why} (required on CI)`));
  console.log(`skip - ${name}: ${why}`);
}

async function check(name, fn) {
  try {
    await fn();
    results.push(true);
    console.log(`ok - ${name}`);
  } catch (e) {
    results.push(false);
    console.log(`not ok - ${name}: ${(e && e.message ? e.message : String(e)).split("\n")[0]}`);
    try {
      await page.screenshot({ path: join(out, `FAILED-${name.replace(/[^a-z0-9]+/gi, "-")}.png`) });
    } catch {
      // no page
    }
    // Start the next check from a fresh page on the served database, so that one failure (a
    // dialog left open, a half-finished action) cannot fail every check after it.
    try {
      await page.goto("about:blank");
      await page.goto(server.url);
      await page.waitForSelector(tid("thread-row"));
    } catch (e2) {
      console.log(`# could not reset the page after that failure: ${(e2 && e2.message) || e2}`);
    }
  }
}

function expect(cond, what) {
  if (!cond) throw new Error(what);
}

const tid = (id) => `[data-testid="${id}"]`;
const shot = async (name) => {
  // Toasts would cover the picture.
  for (const close of await page.locator('[data-testid^="toast-"] button').all()) await close.click().catch(() => {});
  await page.waitForTimeout(250);
  await page.screenshot({ path: join(out, name) });
  if (docs) {
    mkdirSync(join(repo, "docs", "screenshots"), { recursive: true });
    copyFileSync(join(out, name), join(repo, "docs", "screenshots", name));
  }
};

async function openThread(threadId) {
  await page.locator(tid("crumb-db")).click();
  await page.locator(`${tid("thread-row")}[data-thread="${threadId}"]`).click();
  await page.waitForSelector(tid("dag-row"));
  await page.waitForSelector(tid("selected-id"));
}

async function openDb(location) {
  await page.locator(tid("open-another")).click();
  await page.locator(tid("location-input")).fill(location);
  await page.locator(tid("open-button")).click();
  await page.waitForSelector(tid("thread-row"));
}

async function dagRows() {
  return Number(await page.locator(tid("dag")).getAttribute("data-rows"));
}

async function selectedId() {
  return (await page.locator(tid("selected-id")).textContent()).trim();
}

async function openScreenError(location) {
  await page.locator(tid("open-another")).click();
  await page.locator(tid("location-input")).fill(location);
  await page.locator(tid("open-button")).click();
  const box = page.locator(tid("open-error"));
  await box.waitFor({ timeout: 15_000 });
  return (await box.textContent()).trim();
}

// ---- the checks -----------------------------------------------------------------------------------

try {
  server = await startServer(db);
  browser = await chromium.launch({
    executablePath: chromiumPath,
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
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.setDefaultTimeout(10_000);

  await check("without the token the page says how to get in", async () => {
    await page.goto(server.url.replace(/#token=.*/, ""));
    await page.locator(tid("fatal")).waitFor();
    expect((await page.locator(tid("fatal")).textContent()).includes("token"), "mentions the token");
  });

  await check("opens the served database and lists every thread with its status", async () => {
    await page.goto("about:blank"); // a hash change alone would not reload the page
    await page.goto(server.url);
    await page.waitForSelector(tid("thread-row"));
    expect((await page.locator(tid("thread-row")).count()) === 12, "12 threads");
    expect(!(await page.evaluate(() => location.hash.includes("token"))), "the token is removed from the address bar");
    // Cells line up under their headers (a stray layout rule once broke the table's columns).
    const misaligned = await page.evaluate(() => {
      const heads = [...document.querySelectorAll('[data-testid="threads-table"] thead th')].map((th) => th.getBoundingClientRect().left);
      const cells = [...document.querySelector('[data-testid="thread-row"]').children].map((td) => td.getBoundingClientRect().left);
      return heads.length !== cells.length || heads.some((x, i) => Math.abs(x - cells[i]) > 1);
    });
    expect(!misaligned, "the table's cells line up under its headers");
    const failed = page.locator(`${tid("thread-row")}[data-thread="parallel-failure"] .badge.failed`);
    expect((await failed.count()) === 1, "parallel-failure is failed");
    await shot("threads.png");
  });

  await check("the inbox shows threads waiting for a human", async () => {
    await page.locator(tid("filter-interrupted")).click();
    expect((await page.locator(tid("thread-row")).count()) === 1, "one interrupted thread");
    const text = await page.locator(tid("interrupt-text")).textContent();
    expect(text.includes("Approve the draft?"), `the question is shown: ${text}`);
    await page.locator(tid("filter-all")).click();
    await page.locator(tid("thread-search")).fill("subgraph");
    expect((await page.locator(tid("thread-row")).count()) === 2, "search narrows the list");
    await page.locator(tid("thread-search")).fill("");
  });

  await check("a thread's checkpoints are drawn as branch lanes", async () => {
    await page.locator(`${tid("thread-row")}[data-thread="forked"]`).click();
    await page.waitForSelector(tid("dag-row"));
    expect((await dagRows()) === 14, "14 checkpoints");
    const lanes = await page.locator(tid("dag-row")).evaluateAll((rows) => new Set(rows.map((r) => r.dataset.lane)).size);
    expect(lanes >= 3, `several lanes (${lanes})`);
    expect((await page.locator(`${tid("dag-row")}[data-head="true"]`).count()) === 1, "one head");
    await shot("thread-dag.png");
  });

  await check("keyboard stepping walks the branch and the scrubber follows", async () => {
    const start = await selectedId();
    const seen = [start];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("j");
      await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() !== prev, seen[seen.length - 1]);
      seen.push(await selectedId());
    }
    expect(new Set(seen).size === 4, "four different checkpoints");
    const pos = await page.locator(tid("scrub-position")).textContent();
    expect(pos.trim().startsWith("4 /"), `position on the branch: ${pos}`);
    await page.keyboard.press("k");
    await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === prev, seen[2]);
    await page.keyboard.press("End");
    await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === prev, start);
  });

  await check("a decoded message shows as a chat bubble with its tool calls", async () => {
    await openThread("chat-tools");
    await page.locator(tid("chat")).first().waitFor();
    const texts = await page.locator(tid("chat-text")).allTextContents();
    expect(texts.some((t) => t.includes("What is 2+3 and 4*5?")), "the human message");
    const calls = await page.locator(tid("tool-call")).allTextContents();
    expect(calls.some((t) => t.includes("add(") && t.includes('"a":2')), `the tool call: ${calls}`);
    await shot("state-view.png");
  });

  await check("the write trace groups writes per task", async () => {
    await page.keyboard.press("j");
    await page.locator(tid("tab-writes")).click();
    await page.locator(tid("write-group")).first().waitFor();
    expect((await page.locator(tid("write")).count()) > 0, "writes listed");
    await page.locator(tid("tab-state")).click();
  });

  await check("diff with the parent shows the new message", async () => {
    await page.locator(tid("diff-parent")).click();
    await page.locator(tid("diff-view")).waitFor();
    const messages = page.locator(`${tid("diff-channel")}[data-channel="messages"]`);
    expect((await messages.count()) === 1, "messages changed");
    expect((await messages.locator(`${tid("diff-item")}[data-change="added"]`).count()) >= 1, "an added message");
    await shot("diff.png");
    await page.locator(tid("diff-close")).click();
  });

  await check("fork here makes a new branch that becomes the head", async () => {
    await openThread("forked");
    const before = await dagRows();
    // The fork point of the thread.
    const forkRow = page.locator(tid("dag-row")).filter({ hasText: "fork point" }).first();
    const forkId = await forkRow.getAttribute("data-id");
    await forkRow.click();
    await page.waitForFunction((id) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === id, forkId);
    await page.locator(tid("fork-here")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    expect((await head.textContent()).includes("copy fork"), "the new head is Flashback's copy fork");
    expect((await selectedId()) === (await head.getAttribute("data-id")), "the fork is selected");
  });

  await check("edit & fork writes an edited value on a new branch", async () => {
    const before = await dagRows();
    await page.keyboard.press("j"); // back to the fork point
    await page.locator(tid("edit-fork-open")).click();
    await page.locator(tid("edit-channel")).selectOption("log");
    await page.locator(tid("edit-json")).fill('["input", "step1", "edited in the browser"]');
    await page.locator(tid("edit-valid")).waitFor();
    await page.locator(tid("edit-fork-submit")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    expect((await head.getAttribute("data-source")) === "update", "source update");
    await page.locator(`${tid("channel")}[data-channel="log"]`).getByText("edited in the browser").waitFor();
    await shot("edit-fork.png");
  });

  await check("bad edits are explained and nothing is written", async () => {
    const before = await dagRows();
    await page.locator(tid("edit-fork-open")).click();
    await page.locator(tid("edit-channel")).selectOption("log");
    await page.locator(tid("edit-json")).fill('["input",\n  oops]');
    const status = await page.locator(tid("edit-status")).textContent();
    expect(status.includes("line 2"), `syntax error with its line: ${status}`);
    await page.locator(tid("edit-json")).fill('{"$type": "builtins.bytes", "base64": "%%%"}');
    await page.locator(tid("edit-invalid")).waitFor();
    await page.locator(tid("edit-fork-submit")).click();
    const err = await page.locator(tid("edit-error")).textContent();
    expect(err.includes("values.log"), `the engine's rejection names the path: ${err}`);
    await page.locator(tid("modal-close")).click();
    expect((await dagRows()) === before, "no checkpoint written");
  });

  await check("merge takes a channel from another branch", async () => {
    const before = await dagRows();
    await page.locator(tid("merge-open")).click();
    await page.locator(`${tid("merge-channel")}[data-channel="log"] ${tid("merge-mode")}`).selectOption("take_b");
    await page.locator(tid("merge-submit")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    expect((await page.locator(`${tid("dag-row")}[data-head="true"]`).textContent()).includes("merge"), "a merge head");
  });

  await check("re-run forks, runs the command and tails the new checkpoints", async () => {
    const before = await dagRows();
    await page.locator(tid("rerun-open")).click();
    await page.locator(tid("rerun-command")).fill('echo "resuming $FLASHBACK_THREAD_ID from $FLASHBACK_CHECKPOINT_ID"');
    await page.locator(tid("rerun-start")).click();
    await page.locator(tid("rerun-log")).getByText("resuming forked").waitFor();
    await page.locator(tid("rerun-log")).getByText("+ checkpoint").first().waitFor();
    await page.locator(tid("modal-close")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
  });

  await check("export downloads an HTML report that verifies", async () => {
    await page.locator(tid("export-open")).click();
    await page.locator(tid("export-format")).selectOption("html");
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator(tid("export-start")).click()]);
    const file = join(out, "..", "forked-export.html");
    await download.saveAs(file);
    await page.locator(tid("export-done")).waitFor();
    await page.locator(tid("export-verify")).click();
    expect((await page.locator(tid("verify-report")).textContent()).includes("Verified"), "verified in the UI");
    const v = spawnSync(bin, ["verify", file], { encoding: "utf8" });
    expect(v.status === 0, `flashback verify exits 0: ${v.stdout}${v.stderr}`);
    writeFileSync(file + ".tampered.html", readFileSync(file, "utf8").replace("edited in the browser", "edited by someone else"));
    const t = spawnSync(bin, ["verify", file + ".tampered.html"], { encoding: "utf8" });
    expect(t.status === 5, "a tampered copy fails verification");
    await page.locator(tid("modal-close")).click();
  });

  await check("long threads are virtualised", async () => {
    await openThread("long");
    expect((await dagRows()) === 300, "300 checkpoints");
    const drawn = await page.locator(tid("dag-row")).count();
    expect(drawn < 100, `only visible rows are drawn (${drawn})`);
    await page.keyboard.press("Home");
    await page.waitForFunction(() => document.querySelector('[data-testid="scrub-position"]')?.textContent?.trim().startsWith("1 /"));
  });

  await checkIf(bigDb && existsSync(bigDb), "no --big database", "a 10,000-checkpoint thread opens and scrolls", async () => {
    const t0 = Date.now();
    await openDb(bigDb);
    await page.locator(`${tid("thread-row")}[data-thread="bench"]`).click();
    await page.waitForSelector(tid("selected-id"));
    const opened = Date.now() - t0;
    expect((await dagRows()) === 10_000, `10,000 checkpoints (${await dagRows()})`);
    const drawn = await page.locator(tid("dag-row")).count();
    expect(drawn < 100, `only visible rows are drawn (${drawn})`);
    const slider = page.locator(tid("scrubber"));
    await slider.fill("5000");
    await page.waitForFunction(() => document.querySelector('[data-testid="scrub-position"]')?.textContent?.trim().startsWith("5001 /"));
    const mid = await selectedId();
    expect((await page.locator(`${tid("dag-row")}[data-id="${mid}"]`).count()) === 1, "the selected row is scrolled into view");
    await page.keyboard.press("Home");
    await page.waitForFunction(() => document.querySelector('[data-testid="scrub-position"]')?.textContent?.trim().startsWith("1 /"));
    console.log(`# 10k thread: open to first detail ${opened} ms`);
    await openDb(db);
  });

  await checkIf(python, "no --python with LangGraph", "re-run resumes the real LangGraph program and the DAG grows live", async () => {
    const counter = join(work, "counter.sqlite");
    const init = spawnSync(python, [join(repo, "examples", "counter_agent.py"), "--init", counter, "demo"], { encoding: "utf8" });
    expect(init.status === 0, `counter_agent --init: ${init.stderr}`);
    await openDb(counter);
    await page.locator(`${tid("thread-row")}[data-thread="demo"]`).click();
    await page.waitForSelector(tid("dag-row"));
    const before = await dagRows();
    // Back to the checkpoint after the second bump: the program has three bumps left.
    for (let i = 0; i < 3; i++) await page.keyboard.press("j");
    await page.locator(tid("rerun-open")).click();
    await page.locator(tid("rerun-command")).fill(`${python} ${join(repo, "examples", "counter_agent.py")} --delay 1`);
    await page.locator(tid("rerun-start")).click();
    await page.locator(tid("rerun-log")).waitFor();
    // Each step takes a second, well above the tail's poll (200 ms) and the UI's (250 ms), so a
    // live DAG shows the row count at least three times over while the program runs.
    const grew = [];
    for (let i = 0; i < 600 && (await page.locator(tid("rerun-stop")).count()); i++) {
      grew.push(await dagRows());
      await page.waitForTimeout(100);
    }
    const log = await page.locator(tid("rerun-log")).textContent();
    expect((log.match(/\+ checkpoint/g) || []).length >= 4, `the fork and the resumed steps: ${log}`);
    console.log(`# re-run: DAG row counts seen while the program ran: ${[...new Set(grew)].join(", ")}`);
    expect(new Set(grew).size >= 3, `the DAG grew while the program ran: ${[...new Set(grew)]}`);
    await page.locator(tid("modal-close")).click();
    expect((await dagRows()) >= before + 4, "new checkpoints on the DAG");
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    await head.click();
    await page.locator(`${tid("channel")}[data-channel="count"]`).getByText("5").waitFor();
    await shot("rerun.png");
    await openDb(db);
  });

  await checkIf(pgUrl, "no --pg database", "a Postgres database browses and forks like a file", async () => {
    const load = spawnSync("psql", ["-q", "-v", "ON_ERROR_STOP=1", "-d", pgUrl, "-f", join(repo, "tests", "fixtures", "postgres.sql")], {
      encoding: "utf8",
    });
    expect(load.status === 0, `loading the dump: ${load.stderr}`);
    await openDb(pgUrl);
    expect((await page.locator(tid("thread-row")).count()) === 12, "12 threads");
    expect((await page.locator(tid("crumb-db")).textContent()).includes("@"), "named database @ host");
    await page.locator(`${tid("thread-row")}[data-thread="chat-tools"]`).click();
    await page.locator(tid("chat")).first().waitFor();
    const before = await dagRows();
    await page.keyboard.press("j");
    await page.locator(tid("fork-here")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    await openDb(db);
  });

  await check("subgraph namespaces expand and collapse", async () => {
    await openThread("subgraph");
    const full = await dagRows();
    await page.locator(tid("toggle-subgraph")).first().click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) < n, full);
    await page.locator(tid("toggle-subgraph")).first().click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, full);
  });

  await check("delete thread asks for confirmation and removes it", async () => {
    await openThread("durability-exit");
    await page.locator(tid("delete-open")).click();
    const preview = await page.locator(tid("delete-preview")).textContent();
    expect(preview.includes("2"), `the preview counts checkpoints: ${preview}`);
    expect(await page.locator(tid("delete-confirm")).isDisabled(), "disabled until confirmed");
    await page.locator(tid("delete-confirm-input")).fill("durability-exit");
    await page.locator(tid("delete-confirm")).click();
    await page.waitForSelector(tid("thread-list-screen"));
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length === 11);
  });

  await check("prune previews each strategy and keeps the latest checkpoint", async () => {
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    const row = page.locator(`${tid("thread-row")}[data-thread="long"]`);
    await row.locator('input[type="checkbox"]').check();
    await page.locator(tid("prune-open")).click();
    const removes = async (n) =>
      page.waitForFunction(
        (want) => document.querySelector('[data-testid="prune-preview"] strong')?.textContent?.trim() === want,
        String(n),
      );
    await removes(299);
    await page.locator(tid("prune-strategy")).selectOption("delete");
    await removes(300);
    await page.locator(tid("prune-strategy")).selectOption("keep_latest");
    await removes(299);
    await page.locator(tid("prune-confirm")).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="thread-row"][data-thread="long"] td.num')?.textContent?.trim() === "1",
    );
  });

  await check("a file that is not a database gives a clear error", async () => {
    const text = await openScreenError(notes);
    expect(text.includes("Not a database"), text);
  });

  await check("a missing file gives a clear error and is not created", async () => {
    const missing = join(work, "nope.sqlite");
    const text = await openScreenError(missing);
    expect(text.includes("Not found"), text);
    expect(!existsSync(missing), "not created");
  });

  await check("an unreachable server gives a clear error", async () => {
    const text = await openScreenError("postgres://nobody@127.0.0.1:1/agents?connect_timeout=3");
    expect(text.includes("Cannot connect"), text);
  });

  await check("undecodable blobs show the error in place and the rest stays usable", async () => {
    await page.locator(tid("location-input")).fill(broken);
    await page.locator(tid("open-button")).click();
    await page.locator(`${tid("thread-row")}[data-thread="chat-tools"]`).click();
    await page.waitForSelector(tid("dag-row"));
    // An older checkpoint whose writes include a message.
    await page.keyboard.press("j");
    await page.locator(tid("tab-writes")).click();
    await page.locator(tid("write")).first().waitFor();
    const rowsText = await page.locator(tid("writes-panel")).textContent();
    expect(rowsText.includes("⚠"), "the undecodable write is marked");
    await page.locator(tid("write")).filter({ hasText: "⚠" }).first().click();
    await page.locator(tid("decode-error")).first().waitFor();
    await shot("decode-error.png");
    await page.locator(tid("tab-state")).click();
    await page.locator(tid("chat")).first().waitFor();
  });

  await check("3,000 threads list quickly: only the rows in view are drawn, search finds one", async () => {
    const t0 = Date.now();
    await openDb(many);
    const listed = Date.now() - t0;
    const table = page.locator(tid("threads-table"));
    expect((await table.getAttribute("data-rows")) === "3012", `3,012 threads (${await table.getAttribute("data-rows")})`);
    const drawn = await page.locator(tid("thread-row")).count();
    expect(drawn < 100, `only visible rows are drawn (${drawn})`);
    // Scroll to the bottom: the last rows are drawn in place of the first.
    const first = await page.locator(tid("thread-row")).first().getAttribute("data-thread");
    await page.locator(".table-wrap").evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page.waitForFunction((id) => !document.querySelector(`[data-testid="thread-row"][data-thread="${id}"]`), first);
    expect((await page.locator(tid("thread-row")).count()) < 100, "still only the rows in view");
    const t1 = Date.now();
    await page.locator(tid("thread-search")).fill("t2999-");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length === 1);
    const searched = Date.now() - t1;
    await page.locator(`${tid("thread-row")}[data-thread="t2999-forked"]`).click();
    await page.waitForSelector(tid("selected-id"));
    expect((await dagRows()) === 14, "the copy has the 14 checkpoints of forked");
    // Back to the list: the last list shows while a fresh one loads.
    await page.locator(tid("crumb-db")).click();
    await page.locator(tid("thread-row")).first().waitFor();
    expect((await table.getAttribute("data-rows")) === "3012", "the whole list again");
    console.log(`# 3,012 threads: listed in ${listed} ms, search in ${searched} ms, ${drawn} rows drawn`);
    await openDb(db);
  });

  await check("the demo database opens from the open screen, and the theme switches", async () => {
    await page.locator(tid("open-another")).click();
    await page.locator(tid("open-demo")).click();
    await page.waitForSelector(tid("thread-row"));
    await page.locator(tid("theme-toggle")).click(); // system → light
    await page.locator(tid("theme-toggle")).click(); // light → dark
    expect((await page.evaluate(() => document.documentElement.dataset.theme)) === "dark", "dark theme");
    await openThread("chat-tools");
    await page.locator(tid("chat")).first().waitFor();
    await shot("state-view-dark.png");
  });

  await check("no uncaught errors in the page", async () => {
    expect(pageErrors.length === 0, pageErrors.join(" | "));
  });
} catch (e) {
  results.push(false);
  console.log(`not ok - setup: ${e.message}`);
} finally {
  await browser?.close().catch(() => {});
  server?.child.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
}

const passed = results.filter(Boolean).length;
const failed = results.length - passed;
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
