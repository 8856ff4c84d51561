// Checks that need something from the command line (--big, --python, --pg); skipped without
// it, failed on CI.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";
import { atSize, clipped, covered, headerHeights, SMALL, wrappedHeaders } from "./layout.mjs";

export const bigThread = {
  name: "a 10,000-checkpoint thread opens and scrolls",
  why: "no --big database",
  available: (t) => t.bigDb && existsSync(t.bigDb),
  run: async ({ page, openDb, dagRows, selectedId, db, bigDb }) => {
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
  },
};

export const realRerun = {
  name: "re-run resumes the real LangGraph program and the DAG grows live",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, dagRows, db, work, repo, python }) => {
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
  },
};

export const deltaChannels = {
  name: "DeltaChannels show as the graph sees them, the stored view on request, a chosen reducer",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, db, work, repo, python }) => {
    const path = join(work, "delta.sqlite");
    const made = spawnSync(python, [join(repo, "tests", "interop", "delta_test.py"), "--make", path], { encoding: "utf8" });
    expect(made.status === 0, `delta_test.py --make: ${made.stderr}`);
    await openDb(path);
    await page.locator(`${tid("thread-row")}[data-thread="chat"]`).click();
    // Step back to a checkpoint between snapshots, where `log` is replayed from writes.
    await page.locator(tid("rebuilt-badge")).first().waitFor();
    const log = page.locator(`${tid("channel")}[data-channel="log"]`);
    const replayed = /rebuilt from (step \d+|empty) \+ [1-9]\d* write/;
    for (let i = 0; i < 8 && !replayed.test((await log.locator(tid("rebuilt-badge")).textContent()) ?? ""); i++) {
      const before = await page.locator(tid("selected-id")).textContent();
      await page.keyboard.press("j");
      await page.waitForFunction((b) => document.querySelector('[data-testid="selected-id"]')?.textContent !== b, before);
      await log.locator(tid("rebuilt-badge")).waitFor();
    }
    await log.locator(tid("rebuilt-badge")).getByText(replayed).waitFor();
    await shot("delta-rebuilt.png");
    // At 1280×720 every state card's header is one line (the rebuilt chip and the reducer
    // picker beside the name, the rest behind ⋯), and the DeltaChannel bar clips nothing.
    await atSize(page, SMALL, async () => {
      await page.waitForTimeout(100);
      const wrapped = await wrappedHeaders(page);
      expect(wrapped.length === 0, `headers on more than one line: ${wrapped.join(" | ")}`);
      const heights = await headerHeights(page);
      expect(Math.max(...heights) - Math.min(...heights) <= 1, `one header height: ${heights.join(", ")}`);
      const bars = [...(await clipped(page, tid("delta-bar"))), ...(await covered(page, tid("delta-bar")))];
      expect(bars.length === 0, `the DeltaChannel bar clips or is covered: ${bars.join(" | ")}`);
      await shot("delta-rebuilt-1280.png");
    });
    await page.locator(tid("delta-raw-toggle")).click();
    await page.locator(tid("delta-bar")).getByText("Stored view").waitFor();
    // The bar changes at once; the detail in the stored view arrives after it.
    await page.locator(tid("rebuilt-badge")).first().waitFor({ state: "detached" });
    expect((await page.locator(tid("rebuilt-badge")).count()) === 0, "no rebuilt badge in the stored view");
    // Between snapshots the channel has no stored value: the view says it is kept as deltas.
    const deltas = page.locator(`${tid("stored-as-deltas")}[data-channel="log"]`);
    await deltas.waitFor();
    const said = await deltas.textContent();
    expect(/log is stored as [1-9]\d* deltas? since its last snapshot/.test(said), `the stored view says: ${said}`);
    expect(!(await page.locator(tid("state-panel")).textContent()).includes("No state channels have values"), "not 'no values'");
    await shot("delta-stored.png");
    await deltas.locator(tid("stored-as-deltas-live")).click();
    await log.locator(tid("rebuilt-badge")).waitFor();
    await page.locator(tid("delta-raw-toggle")).click();
    await page.locator(tid("delta-bar")).getByText("Stored view").waitFor();
    await page.locator(tid("delta-raw-toggle")).click();
    await log.locator(tid("rebuilt-badge")).waitFor();
    // A reducer that contradicts the snapshots: the value is withheld, with the reason.
    await log.locator(tid("reducer-select")).selectOption("merge");
    await log.locator(tid("rebuilt-badge")).getByText("cannot be rebuilt").waitFor();
    await log.locator(tid("reducer-select")).selectOption("");
    await log.locator(tid("rebuilt-badge")).getByText(/rebuilt from/).waitFor();
    await openDb(db);
  },
};

export const encrypted = {
  name: "an encrypted database opens locked and unlocks with its key (a wrong key is refused)",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, db, work, repo, python }) => {
    const path = join(work, "encrypted.sqlite");
    const made = spawnSync(python, [join(repo, "tests", "interop", "encrypted_test.py"), "--make", path], { encoding: "utf8" });
    expect(made.status === 0, `encrypted_test.py --make: ${made.stderr}`);
    await openDb(path);
    await page.locator(tid("sealed-banner")).waitFor();
    await page.locator(tid("thread-locked")).first().waitFor();
    // Locked, no status is known: the chips do not claim "0 waiting, 0 failed", the threads
    // are counted as of unknown status, and the time comes from the checkpoint id (UUIDv6).
    const chip = async (key) => (await page.locator(`${tid(`filter-${key}`)} .count`).textContent()).trim();
    expect((await chip("interrupted")) === "—" && (await chip("failed")) === "—", `locked counts: ${await chip("interrupted")} ${await chip("failed")}`);
    const rows = await page.locator(tid("thread-row")).count();
    expect((await chip("unknown")) === String(rows) && (await chip("all")) === String(rows), `the unknown chip: ${await chip("unknown")} of ${rows}`);
    const when = await page.locator(`${tid("thread-row")}[data-thread="wait"] ${tid("thread-last")}`).getAttribute("title");
    expect(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(when ?? ""), `the locked thread's last activity: ${when}`);
    await page.locator(`${tid("thread-row")}[data-thread="wait"]`).click();
    await page.locator(tid("values-locked")).waitFor();
    // The line says it whole, below the tab strip (not under it), at 1280×720 too.
    await atSize(page, SMALL, async () => {
      await page.waitForTimeout(100);
      const line = await page.locator(tid("values-locked")).boundingBox();
      const tabs = await page.locator('[role="tablist"]').boundingBox();
      expect(line.y >= tabs.y + tabs.height - 0.5, `the locked line (top ${line.y}) is below the tabs (bottom ${tabs.y + tabs.height})`);
      const cut = [...(await clipped(page, tid("values-locked"))), ...(await covered(page, tid("values-locked")))];
      expect(cut.length === 0, `the locked line clips or is covered: ${cut.join(" | ")}`);
      await shot("values-locked-1280.png");
    });
    await page.locator(tid("unlock-open")).click();
    await page.locator(tid("unlock-key")).fill("x".repeat(32));
    await page.locator(tid("unlock-submit")).click();
    await page.locator(tid("unlock-error")).getByText("does not open").waitFor();
    await page.locator(tid("unlock-key")).fill("0123456789abcdef0123456789abcdef");
    await page.locator(tid("unlock-submit")).click();
    await page.locator(tid("sealed-banner")).waitFor({ state: "detached" });
    await page.locator(tid("values-locked")).waitFor({ state: "detached" });
    await page.locator(`${tid("channel")}[data-channel="notes"]`).waitFor();
    await shot("unlocked.png");
    await openDb(db);
  },
};

// A memory store written by the real SqliteStore: nested namespaces and a TTL.
const MAKE_STORE = `
import sys
from langgraph.store.sqlite import SqliteStore
with SqliteStore.from_conn_string(sys.argv[1]) as store:
    store.setup()
    store.put(("users", "u-1"), "prefs", {"theme": "dark", "lang": "en"})
    store.put(("users", "u-1"), "notes", {"text": "likes tea"})
    store.put(("users", "u-2"), "prefs", {"theme": "light"})
    store.put(("docs",), "readme", {"title": "hello"}, ttl=60)
`;

export const memory = {
  name: "a memory store: namespace tree, item value, edit and delete with confirmation",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, db, work, python }) => {
    const path = join(work, "memory.sqlite");
    const made = spawnSync(python, ["-c", MAKE_STORE, path], { encoding: "utf8" });
    expect(made.status === 0, `SqliteStore: ${made.stderr}`);
    await page.locator(tid("open-another")).click();
    await page.locator(tid("location-input")).fill(path);
    await page.locator(tid("open-button")).click();
    await page.locator(tid("memory-screen")).waitFor();
    await page.locator(`${tid("memory-ns")}[data-namespace="users"]`).waitFor();
    await page.locator(`${tid("memory-ns")}[data-namespace="users/u-1"]`).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="memory-table"]')?.dataset.rows === "2");
    // Each item's value on one line, as `flashback store ls` shows it.
    const prefsRow = page.locator(tid("memory-item-prefs")).first();
    const preview = (await prefsRow.locator(tid("memory-preview")).textContent()).trim();
    expect(preview === '{"lang":"en","theme":"dark"}' || preview === '{"theme":"dark","lang":"en"}', `the value preview: ${preview}`);
    await prefsRow.click();
    await page.locator(tid("memory-value")).getByText("dark").waitFor();
    // The selected item is in the URL, and a link to it opens it.
    await page.waitForFunction(() => location.hash.startsWith("#/memory?") && location.hash.includes("ns=users&ns=u-1&key=prefs"));
    const link = await page.evaluate(() => location.hash);
    await page.locator(`${tid("memory-ns")}[data-namespace="users/u-2"]`).click();
    await page.locator(tid("memory-item-prefs")).first().click();
    await page.locator(tid("memory-value")).getByText("light").waitFor();
    await page.waitForFunction(() => location.hash.includes("ns=users&ns=u-2&key=prefs"));
    await page.evaluate((h) => (location.hash = h), link);
    await page.locator(tid("memory-value")).getByText("dark").waitFor();
    await page.reload();
    await page.locator(tid("memory-value")).getByText("dark").waitFor();
    expect((await page.evaluate(() => location.hash)).includes("ns=u-1&key=prefs"), "a reload keeps the item");
    await page.locator(`${tid("memory-ns")}[data-namespace="users/u-1"]`).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="memory-table"]')?.dataset.rows === "2");
    await page.locator(tid("memory-value")).getByText("dark").waitFor();
    await page.locator(tid("memory-edit")).click();
    await page.locator(tid("memory-json")).fill('{"theme": "solarized"}');
    await page.locator(tid("memory-save")).click();
    await page.locator(tid("memory-value")).getByText("solarized").waitFor();
    await shot("memory.png");
    await page.locator(tid("memory-delete")).click();
    await page.locator(tid("memory-delete-preview")).waitFor();
    await page.locator(tid("memory-confirm-delete")).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="memory-table"]')?.dataset.rows === "1");
    const stored = spawnSync(python, ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM store WHERE prefix='users.u-1'\").fetchone()[0])", path], {
      encoding: "utf8",
    });
    expect(stored.stdout.trim() === "1", `one item left in users/u-1, found ${stored.stdout}`);
    await openDb(db);
  },
};

export const postgres = {
  name: "a Postgres database browses and forks like a file",
  why: "no --pg database",
  available: (t) => t.pgUrl,
  run: async ({ page, openDb, dagRows, db, repo, pgUrl }) => {
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
  },
};

export const stepActivity = {
  name: "DAG rows name the nodes that ran and mark a retried step, its failed attempt shown beside the retry",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, openThread, db, work, repo, python }) => {
    const path = join(work, "activity.sqlite");
    const made = spawnSync(python, [join(repo, "tests", "interop", "activity_test.py"), "--make", path], { encoding: "utf8" });
    expect(made.status === 0, `activity_test.py --make: ${made.stderr}`);
    await openDb(path);
    // The list marks the thread that failed on the way and recovered (its whole history).
    const retried = page.locator(`${tid("thread-row")}[data-thread="flaky-1"] ${tid("thread-retried")}`);
    await retried.waitFor();
    expect((await retried.getAttribute("title")).includes("(flaky)"), "the badge names the node that raised");
    expect((await page.locator(tid("thread-retried")).count()) === 1, "only flaky-1 is marked retried");
    await page.locator(`${tid("thread-row")}[data-thread="flaky-1"]`).click();
    await page.waitForSelector(tid("dag-row"));
    const ran = await page.locator(tid("dag-ran")).allTextContents();
    expect(ran.includes("flaky") && ran.includes("first"), `nodes that ran: ${JSON.stringify(ran)}`);
    const mark = page.locator(`${tid("dag-mark")}[data-mark="recovered"]`);
    expect((await mark.count()) === 1, "one row marked as retried");
    expect((await mark.textContent()).includes("flaky"), "on the row flaky made, naming it");
    // The retried task and its failed attempt are on the checkpoint before (its step's start):
    // the next row down in this straight thread.
    const rows = page.locator(tid("dag-row"));
    const ids = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-id")));
    const markedId = await mark.evaluate((e) => e.closest('[data-testid="dag-row"]')?.getAttribute("data-id"));
    await rows.nth(ids.indexOf(markedId) + 1).click();
    await page.locator(tid("tab-tasks")).click();
    await page.locator(tid("failed-attempt")).waitFor();
    expect((await page.locator(tid("task-status")).first().textContent()).includes("recovered on retry"), "the task says it recovered");
    await shot("dag-retried.png");
    // A Send fan-out: three Sends to `work`, named by their target, then the join.
    await openThread("fanout");
    await page.locator(tid("dag-ran")).getByText("work ×3").waitFor();
    await page.locator(tid("tab-state")).click();
    await openDb(db);
  },
};
