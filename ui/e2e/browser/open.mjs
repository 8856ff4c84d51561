// Getting in: the token, opening databases (and the errors when that fails), the demo and the
// theme.

import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

export const withoutToken = {
  name: "without the token the page says how to get in",
  run: async ({ page, server }) => {
    await page.goto(server.url.replace(/#token=.*/, ""));
    await page.locator(tid("fatal")).waitFor();
    expect((await page.locator(tid("fatal")).textContent()).includes("token"), "mentions the token");
  },
};

export const tokenInCookie = {
  name: "after the first load the token lives in an HttpOnly cookie: reloads work, no token in the URL or storage",
  run: async ({ page, server }) => {
    const token = server.url.split("#token=")[1];
    const cookies = await page.context().cookies();
    const cookie = cookies.find((c) => c.name.startsWith("flashback_"));
    expect(cookie && cookie.value === token, `a flashback cookie: ${JSON.stringify(cookies.map((c) => c.name))}`);
    expect(cookie.httpOnly && cookie.sameSite === "Strict" && cookie.path === "/", JSON.stringify(cookie));
    expect(!(await page.evaluate(() => document.cookie.includes("flashback_"))), "scripts cannot read it");
    const stored = await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }));
    expect(!stored.includes(token), "the token is in no storage");
    await page.reload();
    await page.waitForSelector(tid("thread-row"));
    expect(!page.url().includes("token"), `reloaded at ${page.url()}`);
  },
};

export const notADatabase = {
  name: "a file that is not a database gives a clear error",
  run: async ({ openScreenError, notes }) => {
    const text = await openScreenError(notes);
    expect(text.includes("Not a database"), text);
  },
};

export const missingFile = {
  name: "a missing file gives a clear error and is not created",
  run: async ({ openScreenError, work }) => {
    const missing = join(work, "nope.sqlite");
    const text = await openScreenError(missing);
    expect(text.includes("Not found"), text);
    expect(!existsSync(missing), "not created");
  },
};

export const unreachable = {
  name: "an unreachable server gives a clear error",
  run: async ({ openScreenError }) => {
    const text = await openScreenError("postgres://nobody@127.0.0.1:1/agents?connect_timeout=3");
    expect(text.includes("Cannot connect"), text);
  },
};

export const stalledServer = {
  name: "a server that accepts and never answers ends in a timeout with Retry, and the app stays usable",
  run: async ({ page, openScreenError }) => {
    // Accepts TCP and never answers (as a hung server or a stalled proxy would).
    const held = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise((ready) => silent.listen(0, "127.0.0.1", ready));
    const { port } = silent.address();
    try {
      const text = await openScreenError(`postgres://nobody@127.0.0.1:${port}/agents?connect_timeout=1`);
      expect(text.includes("The server did not answer."), text);
      expect(text.includes(`Postgres at 127.0.0.1:${port}/agents did not answer within 1 s while connecting`), text);
      // The screen stays usable while the retry waits: the location can be edited.
      await page.locator(tid("open-error-retry")).click();
      await page.locator(tid("location-input")).fill("still typing");
      await page.waitForFunction(() => document.querySelector('[data-testid="open-error-retry"]')?.textContent?.trim() === "Retry");
      expect(held.length >= 2, `Retry connected again (${held.length} connections)`);
      expect((await page.locator(tid("open-error")).getAttribute("data-code")) === "timeout", "still a timeout");
    } finally {
      held.forEach((s) => s.destroy());
      silent.close();
    }
  },
};

export const demoAndTheme = {
  name: "the demo database opens from the open screen, and the theme switches",
  run: async ({ page, shot, openThread }) => {
    await page.locator(tid("open-another")).click();
    await page.locator(tid("open-demo")).click();
    await page.waitForSelector(tid("thread-row"));
    await page.locator(tid("theme-toggle")).click(); // system → light
    await page.locator(tid("theme-toggle")).click(); // light → dark
    expect((await page.evaluate(() => document.documentElement.dataset.theme)) === "dark", "dark theme");
    // The primary button reads in both themes (issue 33: white on light lavender in the dark).
    for (const theme of ["light", "dark"]) {
      const ratio = await page.evaluate((th) => {
        const root = document.documentElement;
        const was = root.dataset.theme;
        root.dataset.theme = th;
        const b = document.createElement("button");
        b.className = "primary";
        b.textContent = "Open";
        document.body.append(b);
        const cs = getComputedStyle(b);
        const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
        const lum = ([r, g, bl]) => [r, g, bl].map((v) => ((v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
        const [a, z] = [lum(rgb(cs.color)), lum(rgb(cs.backgroundColor))].sort((x, y) => y - x);
        b.remove();
        root.dataset.theme = was;
        return (a + 0.05) / (z + 0.05);
      }, theme);
      expect(ratio >= 4.5, `the primary button's text on its colour in the ${theme} theme: ${ratio.toFixed(2)}:1`);
    }
    await openThread("chat-tools");
    await page.locator(tid("chat")).first().waitFor();
    await shot("state-view-dark.png");
  },
};
