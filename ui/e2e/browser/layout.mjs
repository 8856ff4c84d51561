// Layout at the smallest size the app is made for, 1280×720, in both themes (issue 33): no
// screen scrolls sideways (only the DAG's lane bar does, by design), one-line bars and state
// card headers stay one line and never clip, Play is as wide as Pause, a click on the DAG
// during Play pauses it and a shift-click paints no text selection. The helpers are used by
// the checks of other screens too (the DeltaChannel and encrypted databases, the merge).

import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

export const SMALL = { width: 1280, height: 720 };
export const LARGE = { width: 1440, height: 900 };

/** Runs `fn` with the page at `size`, then back at the harness's 1440×900. */
export async function atSize(page, size, fn) {
  await page.setViewportSize(size);
  try {
    return await fn();
  } finally {
    await page.setViewportSize(LARGE);
  }
}

/** What scrolls sideways: the page, and every scroll container (overflow-x auto or scroll)
 * whose content is wider than its box, except the DAG's lane bar. Each as `what: widths`. */
export function sideways(page) {
  return page.evaluate(() => {
    const name = (el) =>
      el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).filter((c) => !c.startsWith("svelte-")).join(".") : ""}`;
    const where = (el) => {
      const up = [];
      for (let e = el; e && e !== document.body && up.length < 3; e = e.parentElement) up.unshift(name(e));
      return up.join(" > ");
    };
    const out = [];
    const page = document.scrollingElement;
    if (page.scrollWidth > innerWidth) out.push(`the page: ${page.scrollWidth} > ${innerWidth}`);
    for (const el of document.querySelectorAll("body *")) {
      const cs = getComputedStyle(el);
      if (cs.overflowX !== "auto" && cs.overflowX !== "scroll") continue;
      if (el.closest(`[data-testid="lane-scroll"]`)) continue;
      if (el.scrollWidth > el.clientWidth + 1) out.push(`${where(el)}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return out;
  });
}

/** The elements of `selector` whose content is taller than their box (a clipped one-line bar). */
export function clipped(page, selector) {
  return page.evaluate(
    (sel) =>
      [...document.querySelectorAll(sel)]
        .filter((el) => el.scrollHeight > el.clientHeight + 1 || el.clientHeight < 18)
        .map((el) => `${el.dataset.testid ?? el.className}: ${el.scrollHeight} in ${el.clientHeight} px`),
    selector,
  );
}

/** The elements of `selector` that something else covers (a sticky bar, the tab strip): points
 * along their top and bottom edges (3 px in) where another element is hit first. */
export function covered(page, selector) {
  return page.evaluate((sel) => {
    const out = [];
    for (const el of document.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      for (const y of [r.top + 3, r.bottom - 3])
        for (const f of [0.05, 0.25, 0.5]) {
          const hit = document.elementFromPoint(r.left + f * r.width, y);
          if (hit && !el.contains(hit)) out.push(`${el.dataset.testid}: covered at y=${Math.round(y)} by ${hit.dataset?.testid ?? hit.className ?? hit.tagName}`);
        }
    }
    return out;
  }, selector);
}

/** The state cards whose header is more than one line: some child starts below another's
 * bottom (a wrap), or the header is taller than twice its tallest child. */
export function wrappedHeaders(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="channel"] > header')]
      .map((h) => {
        const boxes = [...h.children].map((c) => c.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
        const wraps = Math.max(...boxes.map((r) => r.top)) >= Math.min(...boxes.map((r) => r.bottom));
        const tall = h.getBoundingClientRect().height > 2 * Math.max(...boxes.map((r) => r.height));
        return wraps || tall || h.scrollWidth > h.clientWidth + 1
          ? `${h.parentElement.dataset.channel}: ${Math.round(h.getBoundingClientRect().height)} px high, ${h.scrollWidth} in ${h.clientWidth} px`
          : null;
      })
      .filter(Boolean),
  );
}

/** The state cards' header heights. */
export function headerHeights(page) {
  return page.locator(`${tid("channel")} > header`).evaluateAll((hs) => hs.map((h) => Math.round(h.getBoundingClientRect().height)));
}

/** Switches the theme toggle (system → light → dark → system) to `theme`. */
export async function setTheme(page, theme) {
  const toggle = page.locator(tid("theme-toggle"));
  for (let i = 0; i < 3 && (await toggle.getAttribute("title")) !== `Theme: ${theme}`; i++) await toggle.click();
  expect((await toggle.getAttribute("title")) === `Theme: ${theme}`, `theme ${theme}`);
}

/** The head row of the DAG: its chips' texts, its time as shown, and whether anything is cut. */
export function headRow(page) {
  return page.locator(`${tid("dag-row")}[data-head="true"]`).evaluate((row) => {
    const time = row.querySelector('[data-testid="dag-time"]');
    const dag = row.closest('[data-testid="dag"]');
    const t = time.getBoundingClientRect();
    const box = row.getBoundingClientRect();
    return {
      chips: [...row.querySelectorAll(".chips > .badge")].map((b) => b.textContent.trim()),
      time: time.textContent.trim(),
      timeCut: time.scrollWidth > time.clientWidth + 1 || t.right > box.right + 0.5 || t.width === 0,
      dagSideways: dag.scrollWidth > dag.clientWidth + 1,
    };
  });
}

/** Every screen and the thread's tabs at 1280×720, light and dark: nothing scrolls sideways. */
export const fitsSmallScreens = {
  name: "at 1280×720, light and dark, no screen, tab or pane scrolls sideways",
  run: async (t) => {
    const { page, shot, openDb, openThread, channelAction, db, work, repo } = t;
    const problems = [];
    const look = async (theme, screen) => {
      await page.waitForTimeout(150);
      for (const p of await sideways(page)) problems.push(`${theme} ${screen}: ${p}`);
      await shot(`fit-1280-${theme}-${screen}.png`);
    };
    // The Memory screen: the `langgraph dev` folder's store (read only), a copy.
    const dev = join(work, "layout-devserver");
    if (!existsSync(dev)) cpSync(join(repo, "tests", "devserver-fixtures", "py"), dev, { recursive: true, preserveTimestamps: true });
    const before = await page.locator(tid("theme-toggle")).getAttribute("title");
    await atSize(page, SMALL, async () => {
      for (const theme of ["light", "dark"]) {
        await setTheme(page, theme);
        await page.locator(tid("open-another")).click();
        await page.locator(tid("location-input")).waitFor();
        await look(theme, "open");
        await openDb(db);
        await look(theme, "threads");
        // The thread with a merge, a re-run and forks: every tab.
        await openThread("forked");
        await page.locator(tid("channel")).first().waitFor();
        await look(theme, "state");
        for (const [tab, ready] of [
          ["writes", "detail-pane"],
          ["tasks", "detail-pane"],
          ["meta", "detail-pane"],
          ["topology", "topology-tab"],
          ["storage", "storage-tab"],
        ]) {
          await page.locator(tid(`tab-${tab}`)).click();
          await page.locator(tid(ready)).first().waitFor({ timeout: 20_000 });
          await look(theme, `tab-${tab}`);
        }
        await page.locator(tid("tab-state")).click();
        await page.locator(tid("diff-parent")).click();
        await page.locator(tid("diff-view")).waitFor();
        await look(theme, "compare");
        await page.keyboard.press("Escape");
        await page.locator(tid("diff-view")).waitFor({ state: "detached" });
        await channelAction("log", "watch-channel");
        await page.locator(`${tid("watch-panel")} ${tid("watch-entry")}`).first().waitFor();
        await look(theme, "watch");
        await page.locator(tid("watch-close")).click();
        await openThread("chat-tools");
        await page.locator(tid("chat")).first().waitFor();
        await look(theme, "chat");
        // Nested subgraph namespaces (`mid:<task id>|inner:<task id>`) in the storage tables.
        await openThread("subgraph");
        await page.locator(tid("tab-storage")).click();
        await page.locator(tid("storage-largest-checkpoints")).waitFor({ timeout: 20_000 });
        await look(theme, "subgraph-storage");
        await page.locator(tid("tab-state")).click();
        await page.locator(tid("crumb-db")).click();
        await page.locator(tid("storage-open")).click();
        await page.locator(tid("storage-totals")).waitFor({ timeout: 20_000 });
        await page.waitForFunction((sel) => Number(document.querySelector(sel)?.dataset.bars) > 0, tid("storage-by-thread-canvas"));
        await look(theme, "storage-screen");
        await openDb(dev);
        await page.locator(tid("nav-memory")).click();
        await page.locator(tid("memory-screen")).waitFor();
        await page.locator(`${tid("memory-ns")}[data-namespace="users/u-1"]`).click();
        await page.locator(tid("memory-item-prefs")).first().click();
        await page.locator(tid("memory-value")).waitFor();
        await look(theme, "memory");
        await openDb(db);
      }
    });
    await setTheme(page, (before ?? "Theme: system").replace("Theme: ", ""));
    expect(problems.length === 0, `scrolls sideways: ${problems.join(" | ")}`);
  },
};

/** Play is as wide as Pause; a click on a row pauses Play; a shift-click selects no text. */
export const playAndPick = {
  name: "Play and Pause are one width, a click on a row pauses Play, a shift-click selects no text",
  run: async ({ page, openThread }) => {
    await openThread("forked");
    const play = page.locator(tid("play"));
    const width = async () => (await play.boundingBox()).width;
    const scrubberLeft = async () => (await page.locator(tid("scrubber")).boundingBox()).x;
    const [w0, x0] = [await width(), await scrubberLeft()];
    await play.click();
    await page.locator(`${tid("play")}[data-playing="true"]`).waitFor();
    const [w1, x1] = [await width(), await scrubberLeft()];
    expect(Math.abs(w1 - w0) < 0.5 && Math.abs(x1 - x0) < 0.5, `Play ${w0} px and Pause ${w1} px wide; the scrubber at ${x0} and ${x1}`);
    // A click on a row while it plays: paused there.
    const row = page.locator(tid("dag-row")).nth(2);
    const id = await row.getAttribute("data-id");
    await row.click();
    await page.locator(`${tid("play")}[data-playing="false"]`).waitFor();
    await page.waitForTimeout(1500);
    expect((await page.locator(tid("selected-id")).textContent()).trim() === id, "the clicked row stays selected (Play paused)");
    // Shift-click: compares, and paints no selection across the DAG.
    await page.locator(tid("dag-row")).nth(5).click({ modifiers: ["Shift"] });
    await page.locator(tid("diff-view")).waitFor();
    const selected = await page.evaluate(() => String(window.getSelection() ?? ""));
    expect(selected === "", `no text selected: ${JSON.stringify(selected.slice(0, 60))}`);
    // Text in the detail panes stays selectable.
    const detailSelect = await page.locator(tid("selected-id")).evaluate((el) => getComputedStyle(el).userSelect);
    expect(detailSelect !== "none", `the detail's text is selectable (${detailSelect})`);
    await page.keyboard.press("Escape");
    await page.locator(tid("diff-view")).waitFor({ state: "detached" });
  },
};

/** The ⋯ menu by keyboard and mouse: Enter and Space open it on its first item, the arrows
 * move, Escape closes it and gives the focus back, a click outside closes it. */
export const moreMenu = {
  name: "the ⋯ menu: Enter/Space open it, arrows move, Escape closes it and gives focus back, a click outside closes it",
  run: async ({ page, openThread }) => {
    await openThread("chat-tools");
    const card = `${tid("channel")}[data-channel="messages"]`;
    const trigger = page.locator(`${card} ${tid("channel-more")}`);
    const menu = page.locator(`${card} ${tid("channel-more-menu")}`);
    const focused = () => page.evaluate(() => document.activeElement?.dataset?.testid ?? document.activeElement?.tagName);
    const selectedBefore = (await page.locator(tid("selected-id")).textContent()).trim();
    await trigger.focus();
    await page.keyboard.press("Enter");
    await menu.waitFor();
    expect((await focused()) === "copy-json", `Enter opens on the first item: ${await focused()}`);
    await page.keyboard.press("ArrowDown");
    expect((await focused()) === "copy-python", `ArrowDown: ${await focused()}`);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    expect((await focused()) === "copy-json", `the arrows wrap: ${await focused()}`);
    await page.keyboard.press("ArrowUp");
    expect((await focused()) === "watch-channel", `ArrowUp wraps to the last: ${await focused()}`);
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached" });
    expect((await focused()) === "channel-more", `Escape gives the focus back to ⋯: ${await focused()}`);
    // The arrows inside the menu moved no checkpoint (the screen's j/k/arrows).
    expect((await page.locator(tid("selected-id")).textContent()).trim() === selectedBefore, "the selection did not move");
    await page.keyboard.press(" ");
    await menu.waitFor();
    expect((await page.locator(`${tid("play")}[data-playing="true"]`).count()) === 0, "Space opened the menu, not Play");
    await page.locator(tid("selected-id")).click();
    await menu.waitFor({ state: "detached" });
    // An item runs its action and closes the menu.
    await trigger.click();
    await menu.locator(tid("copy-json")).click();
    await page.locator(tid("toast-info")).getByText("Copied messages as JSON.").waitFor();
    expect((await menu.count()) === 0, "the menu closed");
  },
};
