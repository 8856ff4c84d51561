// The state view (issue 13 item 9): one type badge per node, search inside the state with
// next/previous, long strings unfolding in place.

import { expect, tid } from "./harness.mjs";

const channel = (name) => `${tid("channel")}[data-channel="${name}"]`;

export const searchAndUnfold = {
  name: "the state view: one badge per node, search with next/previous, long strings unfold in place",
  run: async ({ page, shot, openThread }) => {
    await openThread("rich-types");
    await page.locator(channel("big_text")).waitFor();
    // One concise badge per node: on the channel header, none repeated on its root.
    const badge = async (name) => (await page.locator(`${channel(name)} ${tid("channel-badge")}`).textContent()).trim();
    expect((await badge("uid")) === "UUID", `uid: ${await badge("uid")}`);
    expect((await badge("tags")) === "set{4}", `tags: ${await badge("tags")}`);
    expect((await badge("raw")) === "bytes 10 B", `raw: ${await badge("raw")}`);
    expect((await page.locator(`${channel("uid")} ${tid("type-badge")}`).count()) === 0, "the uid value has no second badge");
    const uid = await page.locator(`${channel("uid")} ${tid("value-tree")} .val`).textContent();
    expect(uid.trim() === "00000000-0000-4000-8000-000000000001", `the UUID alone: ${uid}`);
    const perLine = await page.locator(`${tid("value-tree")} .line`).evaluateAll((lines) => Math.max(...lines.map((l) => l.querySelectorAll('[data-testid="type-badge"]').length)));
    expect(perLine === 1, `at most one badge per row (${perLine})`);

    // A long string: a clipped preview, its toggle beside it and in view without scrolling sideways.
    const big = page.locator(channel("big_text"));
    const unfold = big.locator(tid("unfold"));
    const label = await unfold.textContent();
    expect(/show all \(\d+ chars\)/.test(label), `the toggle says how much: ${label}`);
    const pane = await page.locator(tid("state-panel")).boundingBox();
    const box = await unfold.boundingBox();
    expect(box && box.x + box.width <= pane.x + pane.width, `the toggle is in view (${box?.x}+${box?.width} within ${pane.x}+${pane.width})`);
    await unfold.click();
    const text = await big.locator(tid("string-value")).textContent();
    expect(text.length > 90_000 && text.includes("flashback-7850"), `the whole text (${text.length} chars)`);
    const wide = await page.locator(`${channel("big_text")} ${tid("value-tree")}`).evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(wide, "the unfolded text wraps: no sideways scrolling");
    await big.locator(tid("fold")).click();
    await unfold.waitFor();

    // Search: k of n, Enter / Shift+Enter and the buttons step, the current match is marked.
    const input = page.locator(tid("state-search-input"));
    const count = page.locator(tid("state-search-count"));
    const at = async () => (await count.textContent()).trim();
    await input.fill("paris");
    await count.getByText(/^1 of \d+$/).waitFor();
    const n = Number((await at()).split(" of ")[1]);
    expect(n >= 2, `several matches for "paris" (${n})`);
    const current = page.locator("[data-search-current]");
    expect((await current.count()) === 1 && /paris/i.test(await current.textContent()), "the current match is marked");
    expect((await page.locator(`${tid("state-panel")} .hit`).count()) >= n, "every match is marked");
    await input.press("Enter");
    await count.getByText(`2 of ${n}`).waitFor();
    await page.locator(tid("state-search-prev")).click();
    await count.getByText(`1 of ${n}`).waitFor();
    await input.press("Shift+Enter");
    await count.getByText(`${n} of ${n}`).waitFor();
    await page.locator(tid("state-search-next")).click();
    await count.getByText(`1 of ${n}`).waitFor();
    // A key deep in a closed container: the tree opens to show it.
    await input.fill("deep");
    await count.getByText("1 of 1").waitFor();
    expect((await current.textContent()).trim() === "deep", "the nested key is shown and marked");
    await shot("state-search.png");
    // A word in the hidden part of a long string: the string unfolds and the match is scrolled to.
    await input.fill("FLASHBACK-7850");
    await count.getByText("1 of 1").waitFor();
    await big.locator(tid("fold")).waitFor();
    await page.waitForFunction(() => {
      const m = document.querySelector("[data-search-current] mark");
      const r = m?.getBoundingClientRect();
      return r && r.top >= 0 && r.bottom <= window.innerHeight;
    });
    await input.fill("no such thing anywhere");
    await count.getByText("no match").waitFor();
    await input.press("Escape");
    await count.waitFor({ state: "detached" });
    expect((await input.inputValue()) === "", "Escape clears the search");
  },
};
