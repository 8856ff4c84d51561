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

    // The panel and the table below it agree: the thread whose values hold the text is listed
    // (its id, nodes and error do not mention it).
    await page.locator(tid("crumb-db")).click();
    await box.fill("weather");
    await box.press("Enter");
    await summary.waitFor();
    const found = await results.evaluateAll((rs) => rs.map((r) => r.dataset.thread));
    expect(found.includes("parallel-failure"), `the value search finds parallel-failure: ${found}`);
    const rows = await page.locator(tid("thread-row")).evaluateAll((rs) => rs.map((r) => r.dataset.thread));
    expect(JSON.stringify([...rows].sort()) === JSON.stringify([...found].sort()), `the table lists what the panel found: ${rows} / ${found}`);
    expect(!(await page.locator(tid("threads-table")).textContent()).includes("No thread matches"), "no 'No thread matches' under the results");
    await shot("value-search-table.png");
    // Another text in the box: the old results go.
    await box.fill("weathe");
    await page.locator(tid("value-search")).waitFor({ state: "detached" });
    await box.fill("");

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
