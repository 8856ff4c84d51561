// A `langgraph dev` project folder (issue 30): `flashback serve <folder>` on a copy of the
// folder the real server wrote (tests/devserver-fixtures/py), its threads with the server's
// status and runs as Studio lists them, a thread's runs, the memory Store read only, and the
// banner of a stale folder (hostile/stale: one thread its saved checkpoints lack).

import { cpSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "./server.mjs";
import { expect, tid } from "./harness.mjs";

// The threads of tests/devserver-fixtures/py (its README).
const CHAT_FAILED = "e783c7a8-a31c-51ff-b8a0-fd493fabadba";
const CHAT_TOOLS = "dc444e0b-c533-5adb-9655-f71515d20469";
const WAITING = "0bef1a79-9960-5461-a6ca-5205f585d9db";

const row = (id) => `${tid("thread-row")}[data-thread="${id}"]`;

/** Copies of the fixture folders in the run's work directory (never the repository's). */
function folders(t) {
  if (!t.devserver) {
    const py = join(t.work, "devserver-py");
    const stale = join(t.work, "devserver-stale");
    cpSync(join(t.repo, "tests", "devserver-fixtures", "py"), py, { recursive: true, preserveTimestamps: true });
    cpSync(join(t.repo, "tests", "devserver-fixtures", "hostile", "stale"), stale, { recursive: true, preserveTimestamps: true });
    t.devserver = { py, stale };
  }
  return t.devserver;
}

export const threads = {
  name: "langgraph dev: `flashback serve <folder>` lists its 6 threads with the server's status, graph and runs",
  run: async (t) => {
    const { page, bin, work, shot } = t;
    const { py } = folders(t);
    t.devServe = await startServer(bin, work, py);
    await page.goto("about:blank");
    await page.goto(t.devServe.url);
    await page.waitForSelector(tid("thread-row"));
    expect((await page.locator(tid("thread-row")).count()) === 6, `6 threads (${await page.locator(tid("thread-row")).count()})`);
    const label = (await page.locator(tid("server-label")).textContent()).trim();
    expect(/^langgraph dev · saved \d+[smhd] ago$/.test(label), `the header's label: ${label}`);
    expect((await page.locator(tid("server-banner")).count()) === 0, "no banner for a cleanly stopped server");
    const failed = page.locator(row(CHAT_FAILED));
    expect((await failed.locator(tid("server-status")).textContent()).trim() === "error", "chat-failed: the server says error");
    expect((await failed.locator(tid("server-runs")).getAttribute("data-failed")) === "1", "its failed run is marked");
    expect((await failed.locator(tid("server-runs")).textContent()).includes("1 failed"), "…in words");
    const waiting = page.locator(row(WAITING));
    expect((await waiting.locator(tid("server-status")).textContent()).trim() === "interrupted", "approval-waiting is interrupted");
    expect((await waiting.locator(tid("server-graph")).textContent()).trim() === "approval", "its graph");
    const tools = page.locator(row(CHAT_TOOLS));
    expect((await tools.locator(tid("server-status")).textContent()).trim() === "idle", "chat-tools is idle");
    expect((await tools.locator(tid("server-runs")).getAttribute("data-runs")) === "2", "chat-tools has 2 runs");
    // Cells line up under their headers with the server's columns too.
    const misaligned = await page.evaluate(() => {
      const heads = [...document.querySelectorAll('[data-testid="threads-table"] thead th')].map((th) => th.getBoundingClientRect().left);
      const cells = [...document.querySelector('[data-testid="thread-row"]').children].map((td) => td.getBoundingClientRect().left);
      return heads.length !== cells.length || heads.some((x, i) => Math.abs(x - cells[i]) > 1);
    });
    expect(!misaligned, "the table's cells line up under its headers");
    await shot("devserver-threads.png");
    // The server's metadata is searchable: user u-2 has chat-failed and approval-resumed.
    await page.locator(tid("thread-search")).fill("user_id:u-2");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length === 2);
    await page.locator(tid("thread-search")).fill("");
  },
};

export const runs = {
  name: "langgraph dev: a thread shows its runs (status, times) above its checkpoints",
  available: (t) => !!t.devServe,
  why: "the folder is not served",
  run: async ({ page }) => {
    await page.locator(row(CHAT_FAILED)).click();
    await page.waitForSelector(tid("dag-row"));
    await page.locator(tid("server-thread")).waitFor();
    expect((await page.locator(tid("server-thread-status")).textContent()).trim() === "error", "the thread's server status");
    const statuses = await page.locator(tid("server-run")).evaluateAll((rows) => rows.map((r) => r.dataset.status));
    expect(statuses.join(",") === "error", `its one run failed: ${statuses}`);
    await page.locator(tid("crumb-db")).click();
    await page.locator(row(CHAT_TOOLS)).click();
    await page.locator(tid("server-thread")).waitFor();
    const two = await page.locator(tid("server-run")).evaluateAll((rows) => rows.map((r) => r.dataset.status));
    expect(two.join(",") === "success,success", `chat-tools: two successful runs: ${two}`);
    expect((await page.locator(tid("server-thread")).textContent()).includes("user_id"), "its metadata is shown");
    await page.locator(tid("crumb-db")).click();
  },
};

export const memory = {
  name: "langgraph dev: the Memory screen reads the folder's store.pckl, read only",
  available: (t) => !!t.devServe,
  why: "the folder is not served",
  run: async ({ page }) => {
    await page.locator(tid("nav-memory")).click();
    await page.locator(tid("memory-screen")).waitFor();
    await page.locator(`${tid("memory-ns")}[data-namespace="users/u-1"]`).click();
    await page.locator(tid("memory-item-prefs")).first().click();
    await page.locator(tid("memory-value")).getByText("dark").waitFor();
    expect((await page.locator(tid("memory-readonly")).count()) === 1, "says it is read only");
    expect((await page.locator(tid("memory-edit")).count()) === 0, "no Edit");
    expect((await page.locator(tid("memory-new")).count()) === 0, "no New item");
    await page.locator(tid("nav-threads")).click();
    await page.waitForSelector(tid("thread-row"));
  },
};

export const stale = {
  name: "langgraph dev: a stale folder (a thread without checkpoints) opens from the text field with the server's note as a banner",
  available: (t) => !!t.devServe,
  why: "the folder is not served",
  run: async (t) => {
    const { page, openDb, shot, server } = t;
    const { stale: folder } = folders(t);
    await page.locator(tid("open-another")).click();
    const hint = (await page.locator(tid("open-hint")).textContent()).trim();
    expect(hint.includes("langgraph dev project folder"), `the hint names the folder: ${hint}`);
    await openDb(folder);
    expect((await page.locator(tid("thread-row")).count()) === 5, "5 threads have checkpoints");
    const notes = await page.locator(tid("server-note")).allTextContents();
    expect(notes.length >= 1 && notes.some((n) => n.includes("1 thread")), `the note: ${notes.join(" | ")}`);
    await shot("devserver-stale.png");
    // Recent connections list the folders with their own label.
    await page.locator(tid("open-another")).click();
    await page.locator(`${tid("recent-kind")}[data-kind="devserver"]`).first().waitFor(); // the list loads after the screen
    const kinds = await page.locator(tid("recent-kind")).evaluateAll((els) => els.map((e) => e.dataset.kind));
    expect(kinds.includes("devserver"), `a devserver entry among ${kinds}`);
    expect((await page.locator(`${tid("recent-kind")}[data-kind="devserver"]`).first().textContent()).includes("langgraph dev"), "labelled langgraph dev");
    // Back to the database the other checks use.
    t.devServe.child.kill("SIGTERM");
    t.devServe = null;
    await page.goto("about:blank");
    await page.goto(server.url);
    await page.waitForSelector(tid("thread-row"));
  },
};
