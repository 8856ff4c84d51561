// The URL follows the app: Back/Forward move between screens, a reload keeps the place (the
// database, the thread, the selected checkpoint and the tab), and a checkpoint can be linked.

import { expect, tid } from "./harness.mjs";

const selectedIs = (page, id) =>
  page.waitForFunction((want) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === want, id);

export const routes = {
  name: "the URL keeps the place: reload, Back/Forward, and a link to a checkpoint and tab",
  run: async ({ page, openThread, selectedId }) => {
    await openThread("forked");
    // Another checkpoint than the head, and another tab.
    const row = page.locator(tid("dag-row")).nth(3);
    const id = await row.getAttribute("data-id");
    await row.click();
    await selectedIs(page, id);
    await page.locator(tid("tab-writes")).click();
    await page.waitForFunction((want) => location.hash.includes(`checkpoint=${want}`) && location.hash.includes("tab=writes"), id);
    const hash = await page.evaluate(() => location.hash);
    expect(hash.startsWith("#/thread/forked?db="), `the thread's route: ${hash}`);

    // A reload comes back to the same checkpoint and tab.
    await page.reload();
    await page.waitForSelector(tid("dag-row"));
    await selectedIs(page, id);
    await page.locator(`${tid("tab-writes")}[aria-selected="true"]`).waitFor();

    // Back goes to the thread list, Forward to the thread again.
    await page.goBack();
    await page.locator(`${tid("thread-row")}[data-thread="forked"]`).waitFor();
    expect((await page.locator(tid("dag")).count()) === 0, "Back left the thread for its list");
    await page.goForward();
    await page.waitForSelector(tid("dag-row"));
    await selectedIs(page, id);

    // A link to another thread's checkpoint opens there.
    await openThread("chat-tools");
    const linked = await page.locator(tid("dag-row")).nth(2).getAttribute("data-id");
    const link = hash.replace("/thread/forked?", "/thread/chat-tools?").replace(/checkpoint=[^&]+/, `checkpoint=${linked}`).replace(/&?tab=writes/, "");
    await page.goto(page.url().replace(/#.*$/, "") + link);
    await page.waitForSelector(tid("dag-row"));
    await selectedIs(page, linked);
    expect((await page.locator(tid("crumb-thread")).textContent()).trim() === "chat-tools", "the linked thread");
    expect((await selectedId()) === linked, "the linked checkpoint is selected");
  },
};
