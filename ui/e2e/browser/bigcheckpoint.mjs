// One enormous checkpoint (issue 36 item 4): a thread whose head holds 2,000 messages with
// base64 images, and one with a 2,000-message channel, written by the real LangGraph
// (bench/big_checkpoint.py, a smaller run of the benchmark's data). The message list is paged
// (only a page in the DOM), long strings folded (one fetched whole on request), and the state
// search is answered by the server over the whole list, jumping to the page of each hit.
// Needs --python (LangGraph).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

const label = (page) => page.locator(`${tid("paged-list")} ${tid("page-label")}`);
const at = async (page, text) => page.waitForFunction((t) => document.querySelector('[data-testid="page-label"]')?.textContent?.trim() === t, text);

export const bigCheckpoint = {
  name: "an enormous checkpoint opens with its message list paged, and the state search finds any message",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, openThread, db, work, repo, python }) => {
    const path = join(work, "big-checkpoint.sqlite");
    if (!existsSync(path)) {
      const args = ["--sqlite", path, "--messages", "2000", "--mb", "6", "--image-every", "10", "--chat", "2000"];
      const made = spawnSync(python, [join(repo, "bench", "big_checkpoint.py"), ...args], { encoding: "utf8" });
      expect(made.status === 0, `big_checkpoint.py: ${made.stderr}`);
    }
    await openDb(path);
    await openThread("big");
    await label(page).waitFor();
    expect((await label(page).textContent()).trim() === "1–100 of 2,002", `the first page: ${await label(page).textContent()}`);
    const inDom = await page.locator(`${tid("state-panel")} ${tid("paged-item")}`).count();
    expect(inDom === 100, `only the page is in the DOM (${inDom} items)`);
    const bytes = await page.evaluate(() => document.querySelector('[data-testid="state-panel"]')?.innerHTML.length ?? 0);
    expect(bytes < 2_000_000, `no base64 image shipped whole (${bytes} characters of HTML)`);

    // A folded string (a base64 image) fetched whole by its path and shown in place.
    const fold = page.locator(`${tid("paged-item")}:has(${tid("folded-string")})`).first();
    const index = await fold.getAttribute("data-index");
    const item = page.locator(`${tid("paged-item")}[data-index="${index}"]`);
    const folds = await item.locator(tid("folded-string")).count();
    await item.locator(tid("unfold")).first().click();
    await page.waitForFunction(
      ([i, n]) => document.querySelectorAll(`[data-testid="paged-item"][data-index="${i}"] [data-testid="folded-string"]`).length === n - 1,
      [index, folds],
    );
    const whole = await item.locator(`${tid("unfolded-string")} pre`).textContent();
    expect(whole.startsWith("data:image/png;base64,") && whole.length > 100_000, `the image's whole data URL is shown beside item #${Number(index) + 1} (${whole.length} characters)`);

    // Next page, then an item by number.
    await page.locator(tid("page-next")).click();
    await at(page, "101–200 of 2,002");
    await page.locator(tid("page-goto")).fill("1500");
    await page.locator(tid("page-goto")).press("Enter");
    await at(page, "1,401–1,500 of 2,002");
    expect((await page.locator(`${tid("paged-item")}[data-index="1499"]`).count()) === 1, "item #1500 is on its page");

    // The search: answered over all 2,002 messages, the page of the hit shown and marked.
    const input = page.locator(tid("state-search-input"));
    await input.fill("1737:");
    await page.locator(tid("page-hits")).getByText(/^1 of 1 items hold/).waitFor();
    await at(page, "1,701–1,800 of 2,002");
    const current = page.locator(`${tid("paged-item")}[data-search-current]`);
    await current.waitFor();
    expect((await current.getAttribute("data-index")) === "1739", `the message holding it: ${await current.getAttribute("data-index")}`);
    await shot("big-checkpoint.png");
    await input.fill("no such text anywhere");
    await page.locator(tid("page-hits")).getByText(/no item holds/).waitFor();
    await input.fill("");

    // The long messages channel: paged the same way.
    await openThread("big-10k");
    await at(page, "1–100 of 2,002");
    await page.locator(tid("page-goto")).fill("2002");
    await page.locator(tid("page-goto")).press("Enter");
    await at(page, "2,001–2,002 of 2,002");
    await openDb(db);
  },
};
