// Retention in the app (issue 15 item 3): the thread list's Retention dialog previews what an
// age and status choose, per thread, as `flashback prune DB --older-than … --status … --json`
// (a dry run) lists it; deleting whole threads asks for the typed confirmation; the run with
// VACUUM says what it returned, and the threads leave the list. On a copy of its own of the
// fixture (fixtures.mjs `retentionDb`), never the served one nor the committed file.

import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

/** `flashback prune DB --older-than AGE [--status S]… [--strategy delete] --json`: a dry run's report. */
function cliPreview(bin, db, age, statuses, strategy = "keep_latest") {
  const args = ["prune", db, "--older-than", age, ...statuses.flatMap((s) => ["--status", s]), "--strategy", strategy, "--json"];
  const run = spawnSync(bin, args, { encoding: "utf8", timeout: 60_000 });
  expect(run.status === 0, `flashback ${args.join(" ")}: ${run.stderr}`);
  const r = JSON.parse(run.stdout);
  expect(r.dry_run === true, "the CLI's expectation is a dry run");
  return r;
}

/** Wait until the dialog shows a preview of the form as it is, choosing `n` threads. */
async function previewOf(page, n) {
  await page.waitForFunction(
    (want) => {
      const p = document.querySelector('[data-testid="retention-preview"]');
      return p?.dataset.fresh === "true" && p.dataset.threads === String(want) && !document.querySelector('[data-testid="retention-loading"]');
    },
    n,
    { timeout: 20_000 },
  );
}

export const retention = {
  name: "retention: the dialog previews what the CLI's dry run lists, deletes the failed threads after the typed confirmation, VACUUMs",
  run: async ({ page, shot, openDb, db, retentionDb, repo, work, bin }) => {
    // Its own copy, in the run's temporary directory.
    const committed = realpathSync(join(repo, "tests", "fixtures", "langgraph.sqlite"));
    expect(realpathSync(retentionDb) !== committed && realpathSync(retentionDb).startsWith(realpathSync(work)), `a copy: ${retentionDb}`);
    const all = cliPreview(bin, retentionDb, "1s", []);
    const failed = cliPreview(bin, retentionDb, "1s", ["failed"]);
    const ids = failed.threads.map((t) => t.thread_id).sort();
    expect(ids.length > 0 && all.threads.length > ids.length, `the fixture has failed threads among others (${ids.join(", ")})`);

    await openDb(retentionDb);
    const listed = await page.locator(tid("thread-row")).count();
    await page.locator(tid("retention-open")).click();
    const dialog = page.locator(tid("retention-dialog"));
    await dialog.waitFor();
    // It previews at once (the default: older than 30 days, any status).
    await page.waitForFunction(() => document.querySelector('[data-testid="retention-preview"]')?.dataset.fresh === "true" || document.querySelector('[data-testid="retention-error"]'));
    expect((await page.locator(tid("retention-error")).count()) === 0, "the default preview works");

    // A bad age: a hint, no run.
    await page.locator(tid("retention-age")).fill("30x");
    await page.locator(tid("retention-problem")).waitFor();
    expect((await page.locator(tid("retention-problem")).textContent()).includes("whole number and a unit"), "the hint says what an age is");
    expect(await page.locator(tid("retention-run")).isDisabled(), "no run on a bad age");

    // Every thread is older than a second: all of them, keeping the latest checkpoint.
    await page.locator(tid("retention-age")).fill("1s");
    await previewOf(page, all.threads.length);
    expect((await page.locator(tid("retention-problem")).count()) === 0, "the hint is gone");
    expect((await page.locator(tid("retention-row")).count()) === all.threads.length, "a row per thread");
    await shot("retention.png");

    // Only the failed ones: exactly the threads the CLI's dry run lists, with its figures.
    await page.locator(tid("retention-status-failed")).check();
    await previewOf(page, ids.length);
    const rows = await page.locator(tid("retention-row")).evaluateAll((els) => els.map((e) => e.dataset.thread).sort());
    expect(JSON.stringify(rows) === JSON.stringify(ids), `the preview lists ${rows.join(", ")}; the CLI ${ids.join(", ")}`);
    const totals = await page.locator(tid("retention-totals")).textContent();
    const tt = failed.totals;
    expect(totals.includes(`${tt.checkpoints} checkpoint`) && totals.includes(`${tt.writes} write`) && totals.includes(`${tt.kept} kept`), `the totals: ${totals}`);
    for (const t of failed.threads) {
      const cells = await page.locator(`${tid("retention-row")}[data-thread="${t.thread_id}"] td.num`).allTextContents();
      expect(cells[0] === String(t.checkpoints) && cells[1] === String(t.kept), `${t.thread_id}: ${cells.join(" ")} (${t.checkpoints} removed, ${t.kept} kept)`);
    }

    // Whole threads: the typed confirmation, as Delete thread asks.
    const deleted = cliPreview(bin, retentionDb, "1s", ["failed"], "delete");
    await page.locator(tid("retention-strategy")).selectOption("delete");
    expect((await page.locator(tid("retention-keep-last")).count()) === 0, "no keep-last count for delete");
    await previewOf(page, ids.length);
    const gone = await page.locator(tid("retention-totals")).textContent();
    expect(gone.includes(`${deleted.totals.checkpoints} checkpoint`) && gone.includes("0 kept"), `the totals for delete: ${gone}`);
    const phrase = (await page.locator(tid("retention-phrase")).textContent()).trim();
    expect(phrase === (ids.length === 1 ? ids[0] : `delete ${ids.length} threads`), `the phrase: ${phrase}`);
    const run = page.locator(tid("retention-run"));
    expect(await run.isDisabled(), "delete needs the typed confirmation");
    await page.locator(tid("retention-confirm-input")).fill(phrase);
    await page.locator(tid("retention-vacuum")).check();
    // VACUUM is previewed too (how long it stops writers): the run waits for it.
    await previewOf(page, ids.length);
    expect(!(await run.isDisabled()), "typed: enabled");
    await run.click();

    const toast = page.locator(tid("toast-ok")).filter({ hasText: "VACUUM returned" });
    await toast.waitFor({ timeout: 30_000 });
    const said = await toast.textContent();
    expect(said.includes(`Deleted ${ids.length} thread`) && said.includes(`${deleted.totals.checkpoints} checkpoint`), `the toast: ${said}`);
    await dialog.waitFor({ state: "detached" });
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="thread-row"]').length === n, listed - ids.length);
    for (const id of ids) expect((await page.locator(`${tid("thread-row")}[data-thread="${id}"]`).count()) === 0, `${id} left the list`);
    expect(cliPreview(bin, retentionDb, "1s", ["failed"]).threads.length === 0, "the CLI finds no failed thread left");

    await openDb(db);
  },
};
