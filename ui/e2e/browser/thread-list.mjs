// The thread list screen: statuses, the inbox filter, search, prune, and a list of 3,000
// threads.

import { expect, tid } from "./harness.mjs";

export const listsEveryThread = {
  name: "opens the served database and lists every thread with its status",
  run: async ({ page, server, shot }) => {
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
  },
};

export const inbox = {
  name: "the inbox shows threads waiting for a human",
  run: async ({ page }) => {
    await page.locator(tid("filter-interrupted")).click();
    expect((await page.locator(tid("thread-row")).count()) === 1, "one interrupted thread");
    const text = await page.locator(tid("interrupt-text")).textContent();
    expect(text.includes("Approve the draft?"), `the question is shown: ${text}`);
    await page.locator(tid("filter-all")).click();
    await page.locator(tid("thread-search")).fill("subgraph");
    expect((await page.locator(tid("thread-row")).count()) === 2, "search narrows the list");
    // A node that ran (only in the threads' histories) and the error text a row shows.
    const listed = () => page.locator(tid("thread-row")).evaluateAll((rs) => rs.map((r) => r.dataset.thread).sort().join(" "));
    await page.locator(tid("thread-search")).fill("tools");
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="thread-row"]')].some((r) => r.dataset.thread === "chat-tools"));
    await page.locator(tid("thread-search")).fill("step2");
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="thread-row"]')].map((r) => r.dataset.thread).join() === "forked");
    await page.locator(tid("thread-search")).fill("HTTP 500");
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="thread-row"]')].map((r) => r.dataset.thread).join() === "parallel-failure");
    expect((await listed()) === "parallel-failure", `the row showing the error: ${await listed()}`);
    await page.locator(tid("thread-search")).fill("");
  },
};

export const prune = {
  name: "prune previews each strategy and keeps the latest checkpoint",
  run: async ({ page }) => {
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
    expect((await page.locator(`${tid("prune-breakdown")} tr[data-thread="long"] td.num`).first().textContent()).trim() === "299", "the per-thread breakdown");
    await page.locator(tid("prune-strategy")).selectOption("delete");
    await removes(300);
    // Deleting whole threads asks for the thread id, as Delete thread does.
    expect(await page.locator(tid("prune-confirm")).isDisabled(), "delete needs the typed confirmation");
    await page.locator(tid("prune-confirm-input")).fill("long");
    expect(!(await page.locator(tid("prune-confirm")).isDisabled()), "typed: enabled");
    await page.locator(tid("prune-strategy")).selectOption("keep_latest");
    await removes(299);
    await page.locator(tid("prune-confirm")).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="thread-row"][data-thread="long"] td.num')?.textContent?.trim() === "1",
    );
  },
};

export const manyThreads = {
  name: "3,000 threads list quickly: only the rows in view are drawn, search finds one",
  run: async ({ page, openDb, dagRows, db, many }) => {
    const t0 = Date.now();
    await openDb(many);
    const firstPage = Date.now() - t0;
    const table = page.locator(tid("threads-table"));
    // The 200 most recently active threads show first, then the whole list replaces them.
    await page.waitForFunction(() => document.querySelector('[data-testid="threads-table"]')?.getAttribute("data-rows") === "3012", null, { timeout: 30_000 });
    const listed = Date.now() - t0;
    expect((await table.getAttribute("data-rows")) === "3012", `3,012 threads (${await table.getAttribute("data-rows")})`);
    expect((await page.locator(tid("threads-partial")).count()) === 0, "the 'loading all threads' note is gone");
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
    console.log(`# 3,012 threads: first rows in ${firstPage} ms, listed in ${listed} ms, search in ${searched} ms, ${drawn} rows drawn`);
    await openDb(db);
  },
};

export const slowFirstPage = {
  name: "a slow first page shows its progress and can be stopped; the list asks for a bounded page, never every thread",
  run: async ({ page, openDb, db, many }) => {
    const asked = [];
    let hold = true;
    await page.route("**/api/list_threads", async (route) => {
      const req = route.request().postDataJSON()?.req ?? {};
      asked.push(req);
      // The first page of a huge database without indexes: seconds.
      if (hold && req.limit === 200) await new Promise((r) => setTimeout(r, 2500));
      await route.continue().catch(() => {});
    });
    try {
      await page.locator(tid("open-another")).click();
      await page.locator(tid("location-input")).fill(many);
      await page.locator(tid("open-button")).click();
      const progress = page.locator(tid("threads-progress"));
      await progress.waitFor();
      expect((await progress.textContent()).includes("Reading the most recently active threads"), "says what it reads");
      await page.waitForFunction(() => /\d+ s$/.test(document.querySelector('[data-testid="threads-progress"]')?.textContent ?? ""));
      const frame = await page.evaluate(() => new Promise((r) => { const t0 = performance.now(); requestAnimationFrame(() => r(performance.now() - t0)); }));
      expect(frame < 500, `the page draws frames while it waits (${Math.round(frame)} ms)`);
      await page.locator(tid("threads-stop")).click();
      await page.locator(tid("threads-read-again")).waitFor();
      // The held answer arrives after the stop: dropped.
      await page.waitForTimeout(2600);
      expect((await page.locator(tid("thread-row")).count()) === 0, "a stopped read shows nothing");
      hold = false;
      await page.locator(tid("threads-read-again")).click();
      await page.waitForFunction(() => document.querySelector('[data-testid="threads-table"]')?.getAttribute("data-rows") === "3012", null, { timeout: 30_000 });
      const limits = asked.map((r) => r.limit ?? "every thread");
      expect(limits.every((l) => l === 200 || l === 100000), `each read is bounded (${limits.join(", ")})`);
      expect(limits.includes(100000), "the rest is read as at most 100,000 threads");
    } finally {
      await page.unroute("**/api/list_threads");
    }
    await openDb(db);
  },
};

export const sortAndGroup = {
  name: "columns sort both ways and many similar threads fold into one group row",
  run: async ({ page, openDb, db, similar }) => {
    await openDb(similar);
    const ids = () => page.locator(tid("thread-row")).evaluateAll((rows) => rows.map((r) => r.dataset.thread));
    // bulk-0000 … bulk-0024 are one row until it is opened.
    const group = page.locator(`${tid("thread-group")}[data-prefix="bulk-"]`);
    await group.waitFor();
    expect((await group.textContent()).includes("25 similar threads"), "the group says how many");
    expect(!(await ids()).some((id) => id.startsWith("bulk-")), "its threads are folded");
    await group.click();
    await page.locator(`${tid("thread-row")}[data-thread="bulk-0024"]`).waitFor();
    await group.click();
    await page.locator(`${tid("thread-row")}[data-thread="bulk-0024"]`).waitFor({ state: "detached" });
    // By id, ascending then descending.
    await page.locator(tid("sort-thread")).click();
    const asc = (await ids()).filter(Boolean);
    expect(JSON.stringify(asc) === JSON.stringify([...asc].sort()), `ascending: ${asc.join(", ")}`);
    await page.locator(tid("sort-thread")).click();
    const desc = (await ids()).filter(Boolean);
    expect(JSON.stringify(desc) === JSON.stringify([...asc].reverse()), `descending: ${desc.join(", ")}`);
    // By checkpoint count, most first: "long" (300 checkpoints) leads.
    await page.locator(tid("sort-checkpoints")).click();
    expect((await ids())[0] === "long", `most checkpoints first: ${(await ids())[0]}`);
    // Column widths are fixed: scrolling and sorting never move them.
    const width = () => page.locator(`${tid("threads-table")} th`).nth(1).evaluate((th) => th.getBoundingClientRect().width);
    const before = await width();
    await page.locator(tid("sort-activity")).click();
    expect(Math.abs((await width()) - before) < 1, "the thread column keeps its width");
    await openDb(db);
  },
};
