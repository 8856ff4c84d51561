// The storage report in the app (issue 15 item 2): the Storage screen measures the whole
// database (the backend's job, one read snapshot) and charts it; a thread's bar opens the
// thread; the thread's Storage tab charts each checkpoint's size, and a bar opens that
// checkpoint.

import { expect, tid } from "./harness.mjs";

/** Click bar `i` of the chart `testid` (its canvas says where its plot area is). */
async function clickBar(page, testid, i, { horizontal }) {
  const canvas = page.locator(tid(`${testid}-canvas`));
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.area, tid(`${testid}-canvas`));
  const [left, top, right, bottom] = (await canvas.getAttribute("data-area")).split(",").map(Number);
  const n = Number(await canvas.getAttribute("data-bars"));
  expect(i >= 0 && i < n, `bar ${i} of ${n}`);
  const position = horizontal
    ? { x: (left + right) / 2, y: top + ((i + 0.5) * (bottom - top)) / n }
    : { x: left + ((i + 0.5) * (right - left)) / n, y: (top + bottom) / 2 };
  await canvas.click({ position });
}

export const storage = {
  name: "storage: the database's report with charts; a thread's bar opens it; its Storage tab's growth bars open checkpoints",
  run: async ({ page, shot }) => {
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    await page.locator(tid("storage-open")).click();
    const totals = page.locator(tid("storage-totals"));
    await totals.waitFor({ timeout: 20_000 });
    const text = await totals.textContent();
    // The fixture: 12 threads, 381 checkpoints, 601,559 bytes in all (flashback storage --json).
    expect(text.includes("587.5 KB") && text.includes("12") && text.includes("381"), `the totals: ${text}`);
    const hash = await page.evaluate(() => location.hash);
    expect(hash.startsWith("#/storage?db="), `the URL: ${hash}`);
    for (const chart of ["storage-by-thread", "storage-by-channel", "storage-by-node"]) {
      await page.waitForFunction((sel) => Number(document.querySelector(sel)?.dataset.bars) > 0, tid(`${chart}-canvas`));
    }
    const flags = await page.locator(tid("storage-quadratic")).textContent();
    expect(flags.includes("messages") && flags.includes("chat-tools"), `the quadratic flag: ${flags}`);
    expect((await page.locator(tid("storage-checkpoint-row")).count()) > 0, "the largest checkpoints are listed");
    await shot("storage.png");

    // The bars are ranked as the report lists the threads; chat-tools' bar opens chat-tools.
    const labels = await page.locator(`${tid("storage-by-thread")} li button`).allTextContents();
    const i = labels.findIndex((l) => l.startsWith("chat-tools:"));
    await clickBar(page, "storage-by-thread", i, { horizontal: true });
    await page.waitForSelector(tid("dag-row"));
    expect((await page.locator(tid("crumb-thread")).textContent()).trim() === "chat-tools", "the bar opened chat-tools");

    // Its Storage tab: one bar per checkpoint; the last opens the newest checkpoint.
    await page.locator(tid("tab-storage")).click();
    const report = page.locator(`${tid("storage-report")}[data-scope="thread"]`);
    await report.waitFor({ timeout: 20_000 });
    await page.waitForFunction((sel) => Number(document.querySelector(sel)?.dataset.bars) > 0, tid("storage-growth-canvas"));
    const n = Number(await page.locator(tid("storage-growth-canvas")).getAttribute("data-bars"));
    expect(n === 10, `one bar per root checkpoint of chat-tools (${n})`);
    const total = await page.locator(tid("storage-thread-total")).textContent();
    expect(total.includes("21.6 KB") && total.includes("10 checkpoints"), `the thread's total: ${total}`);
    expect((await page.locator(tid("storage-quadratic")).textContent()).includes("stored whole 9 times"), "the thread's quadratic flag");
    expect((await page.evaluate(() => location.hash)).includes("tab=storage"), "the URL keeps the tab");
    await shot("storage-thread.png");

    const last = await report.getAttribute("data-last-checkpoint");
    // Select another checkpoint first, so that the click visibly moves the selection.
    await page.locator(tid("dag-row")).last().click();
    await page.locator(tid("tab-storage")).click();
    await page.locator(tid("storage-growth-canvas")).waitFor();
    await clickBar(page, "storage-growth", n - 1, { horizontal: false });
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${last}"]`).waitFor();
    expect((await page.locator(tid("tab-state")).getAttribute("aria-selected")) === "true", "the checkpoint opens on its state");
    await page.locator(tid("crumb-db")).click();
    await page.locator(tid("thread-row")).first().waitFor();
  },
};
