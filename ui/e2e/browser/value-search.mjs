// Search inside values (issue 13 item 11): from the thread list, the backend searches every
// thread's latest state for a text and lists the threads that hold it, with the path and the
// text around it; a result opens its thread at that checkpoint.

import { expect, tid } from "./harness.mjs";

export const valueSearch = {
  name: "search values: the threads whose state holds a text, with its path; a result opens there",
  run: async ({ page, shot }) => {
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    const box = page.locator(tid("thread-search"));
    await box.waitFor();
    // Only rich-types holds it (its customer's city); no thread id or node mentions it.
    await box.fill("LoveLace");
    expect(!(await page.locator(tid("value-search-start")).isDisabled()), "Search values is enabled for a text");
    await box.press("Enter");
    const summary = page.locator(tid("value-search-summary"));
    await summary.waitFor();
    const results = page.locator(tid("value-search-result"));
    expect((await results.count()) === 1, `one thread holds it (${await results.count()})`);
    const result = results.first();
    expect((await result.getAttribute("data-thread")) === "rich-types", `rich-types: ${await result.getAttribute("data-thread")}`);
    const text = await result.textContent();
    expect(text.includes("customer.address.city"), `the path: ${text}`);
    expect((await result.locator("mark").first().textContent()) === "Lovelace", "the hit is marked in the snippet");
    const said = await summary.textContent();
    expect(said.includes("1 thread found") && said.includes("12 threads searched"), `the summary: ${said}`);
    await shot("value-search.png");

    // A result opens its thread at the checkpoint searched, on the state tab.
    const checkpoint = await result.getAttribute("data-checkpoint");
    await result.click();
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${checkpoint}"]`).waitFor();
    const hash = await page.evaluate(() => location.hash);
    expect(hash.startsWith("#/thread/rich-types") && hash.includes(`checkpoint=${checkpoint}`), `the URL: ${hash}`);

    // Back on the list: the box and the panel start afresh; closing the panel works.
    await page.locator(tid("crumb-db")).click();
    await page.locator(tid("thread-row")).first().waitFor();
    expect((await page.locator(tid("value-search")).count()) === 0, "no search panel on a fresh list");
    await box.fill("no such text zq");
    await page.locator(tid("value-search-start")).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="value-search-summary"]')?.textContent?.includes("No thread"));
    await page.locator(tid("value-search-close")).click();
    await page.locator(tid("value-search")).waitFor({ state: "detached" });
    await box.fill("");
  },
};
