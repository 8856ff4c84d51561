// The index advisor in the app (issue 36 item 2): the Storage screen's Indexes panel lists the
// `flashback_*` indexes the advisor proposes, Create… previews the statements, Create builds
// them as a job (`start_index_apply`) and shows the reads timed before and after, and the
// rows turn present — as `flashback index DB --json` then says. On a copy of the filters
// fixture (the shared database stays as it is).

import { spawnSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

export const indexes = {
  name: "indexes: the Storage screen previews the advisor's indexes, builds them as a job and shows the reads before and after",
  run: async ({ page, shot, openDb, db, work, repo, bin }) => {
    const path = join(work, "indexes.sqlite");
    copyFileSync(join(repo, "tests", "fixtures", "filters.sqlite"), path);
    await openDb(path);
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    await page.locator(tid("storage-open")).click();
    const panel = page.locator(tid("index-panel"));
    await panel.locator(tid("index-row")).first().waitFor({ timeout: 20_000 });
    const states = () => panel.locator(tid("index-row")).evaluateAll((rows) => rows.map((r) => r.dataset.state));
    const before = await states();
    expect(before.length >= 2 && before.every((s) => s === "missing"), `every index missing first: ${before}`);

    await panel.locator(tid("index-create")).click();
    const preview = panel.locator(tid("index-preview"));
    await preview.waitFor();
    const statements = await preview.locator("pre").textContent();
    expect(statements.includes("CREATE INDEX IF NOT EXISTS flashback_checkpoints_recent"), `the preview: ${statements}`);
    await panel.locator(tid("index-confirm")).click();
    const timings = panel.locator(tid("index-timings"));
    await timings.waitFor({ timeout: 30_000 });
    const lines = await timings.locator("li").allTextContents();
    expect(lines.some((l) => /most recently active threads: \d+ ms → \d+ ms/.test(l)), `the reads before and after: ${lines}`);
    await page.waitForFunction(
      (sel) => [...document.querySelectorAll(sel)].every((r) => r.dataset.state === "present"),
      `${tid("index-panel")} ${tid("index-row")}`,
    );
    expect((await preview.count()) === 0, "the preview closes once built");
    await shot("indexes.png");
    const cli = JSON.parse(spawnSync(bin, ["index", path, "--json"], { encoding: "utf8", timeout: 60_000 }).stdout || "{}");
    expect(cli.indexes?.length === before.length && cli.indexes.every((i) => i.state === "present"), `flashback index says the same: ${JSON.stringify(cli.indexes?.map((i) => i.state))}`);
    await openDb(db);
  },
};
