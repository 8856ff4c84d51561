// A tiny test runner for the browser e2e test, and the page helpers the checks share.
//
// Each check prints `ok - name` or `not ok - name: why`; a failure leaves a screenshot in `out`
// and starts the next check from a fresh page. A check is `{ name, run(t) }`, with `available(t)`
// and `why` when it needs something the command line may not give (see `runCheck`).

import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export function expect(cond, what) {
  if (!cond) throw new Error(what);
}

export const tid = (id) => `[data-testid="${id}"]`;

/**
 * The test context `t`: the options, `page` and `server` (set by the caller once started),
 * the results, and the helpers. The caller adds the fixtures' paths.
 */
export function createHarness(options) {
  const { out, docs, repo, ci } = options;
  const t = {
    ...options,
    page: undefined,
    server: undefined,
    results: [],

    async check(name, fn) {
      try {
        await fn();
        t.results.push(true);
        console.log(`ok - ${name}`);
      } catch (e) {
        t.results.push(false);
        console.log(`not ok - ${name}: ${(e && e.message ? e.message : String(e)).split("\n")[0]}`);
        try {
          await t.page.screenshot({ path: join(out, `FAILED-${name.replace(/[^a-z0-9]+/gi, "-")}.png`) });
        } catch {
          // no page
        }
        // Start the next check from a fresh page on the served database, so that one failure (a
        // dialog left open, a half-finished action) cannot fail every check after it.
        try {
          await t.page.goto("about:blank");
          await t.page.goto(t.server.url);
          await t.page.waitForSelector(tid("thread-row"));
        } catch (e2) {
          console.log(`# could not reset the page after that failure: ${(e2 && e2.message) || e2}`);
        }
      }
    },

    async checkIf(available, why, name, fn) {
      if (available) return t.check(name, fn);
      if (ci) return t.check(name, async () => expect(false, `${why} (required on CI)`));
      console.log(`skip - ${name}: ${why}`);
    },

    /** Runs one check object (skipped, or failed on CI, when it is not available). */
    async runCheck(c) {
      if (c.available) return t.checkIf(c.available(t), c.why, c.name, () => c.run(t));
      return t.check(c.name, () => c.run(t));
    },

    /** `browser: N passed, M failed`, and whether all passed. */
    summary() {
      const passed = t.results.filter(Boolean).length;
      const failed = t.results.length - passed;
      return { line: `browser: ${passed} passed, ${failed} failed`, ok: failed === 0 };
    },

    async shot(name) {
      // Toasts would cover the picture.
      for (const close of await t.page.locator('[data-testid^="toast-"] button').all()) await close.click().catch(() => {});
      await t.page.waitForTimeout(250);
      await t.page.screenshot({ path: join(out, name) });
      if (docs) {
        mkdirSync(join(repo, "docs", "screenshots"), { recursive: true });
        copyFileSync(join(out, name), join(repo, "docs", "screenshots", name));
      }
    },

    async openThread(threadId) {
      await t.page.locator(tid("crumb-db")).click();
      await t.page.locator(`${tid("thread-row")}[data-thread="${threadId}"]`).click();
      await t.page.waitForSelector(tid("dag-row"));
      await t.page.waitForSelector(tid("selected-id"));
    },

    async openDb(location) {
      await t.page.locator(tid("open-another")).click();
      await t.page.locator(tid("location-input")).fill(location);
      await t.page.locator(tid("open-button")).click();
      await t.page.waitForSelector(tid("thread-row"));
    },

    /** Presses an action of a state card's ⋯ menu (copy-json, copy-python, watch-channel). */
    async channelAction(channel, item) {
      const card = `${tid("channel")}[data-channel="${channel}"]`;
      await t.page.locator(`${card} ${tid("channel-more")}`).click();
      await t.page.locator(`${card} ${tid("channel-more-menu")} ${tid(item)}`).click();
    },

    async dagRows() {
      return Number(await t.page.locator(tid("dag")).getAttribute("data-rows"));
    },

    async selectedId() {
      return (await t.page.locator(tid("selected-id")).textContent()).trim();
    },

    async openScreenError(location) {
      await t.page.locator(tid("open-another")).click();
      await t.page.locator(tid("location-input")).fill(location);
      await t.page.locator(tid("open-button")).click();
      const box = t.page.locator(tid("open-error"));
      await box.waitFor({ timeout: 15_000 });
      return (await box.textContent()).trim();
    },
  };
  return t;
}
