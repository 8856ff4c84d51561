// The thread list's filter bar: threads found on the backend by their checkpoints' metadata
// (the fixture's `chat-tools` ran with metadata tenant=acme, user_id=alice) and a time range,
// the keys suggested from the newest checkpoints, and the URL keeping the filter.

import { expect, tid } from "./harness.mjs";

const listed = (page) => page.locator(tid("thread-row")).evaluateAll((rs) => rs.map((r) => r.dataset.thread).join(" "));

export const metadataFilter = {
  name: "the filter bar finds threads by metadata and time, suggests keys, and the URL keeps it",
  run: async ({ page }) => {
    await page.waitForSelector(tid("thread-row"));
    // Suggestions: the keys the newest checkpoints carry.
    await page.waitForFunction(() => [...document.querySelectorAll("#thread-filter-keys option")].some((o) => o.value === "tenant="));
    await page.locator(tid("meta-input")).fill("tenant=acme");
    await page.locator(tid("meta-input")).press("Enter");
    await page.locator(tid("meta-chip")).waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="thread-row"]')].map((r) => r.dataset.thread).join() === "chat-tools");
    await page.waitForFunction(() => location.hash.includes("where=tenant%3Dacme"));
    // A reload keeps the filter.
    await page.reload();
    await page.locator(tid("meta-chip")).waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="thread-row"]')].map((r) => r.dataset.thread).join() === "chat-tools");
    // A bad chip is said in one line; nothing matching is said too.
    await page.locator(tid("meta-input")).fill("no key");
    await page.locator(tid("meta-input")).press("Enter");
    expect((await page.locator(tid("meta-problem")).textContent()).includes("key=value"), "a bad chip is said");
    await page.locator(tid("meta-input")).fill("user_id=nobody");
    await page.locator(tid("meta-input")).press("Enter");
    await page.locator(tid("no-threads-found")).waitFor();
    // A time range far in the future finds nothing; cleared, every thread is back.
    await page.locator(tid("find-clear")).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length > 1);
    await page.locator(tid("find-since")).fill("2099-01-01T00:00");
    await page.locator(tid("find-since")).dispatchEvent("change");
    await page.locator(tid("no-threads-found")).waitFor();
    expect((await page.evaluate(() => location.hash)).includes("since=2099"), "the URL keeps the time");
    await page.locator(tid("find-clear")).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length > 1 && !location.hash.includes("since="));
    expect((await listed(page)).includes("chat-tools"), "every thread again");
  },
};
