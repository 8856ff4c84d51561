// The thread detail screen, writing: fork, edit & fork, merge, re-run, export, delete.

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";
import { atSize, headRow, SMALL } from "./layout.mjs";

export const forkHere = {
  name: "fork here makes a new branch that becomes the head",
  run: async ({ page, openThread, dagRows, selectedId }) => {
    await openThread("forked");
    const before = await dagRows();
    const lanes = () =>
      page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-testid="dag-row"]')].map((r) => [r.dataset.id, r.dataset.lane])));
    const lanesBefore = await lanes();
    // The fork point of the thread.
    const forkRow = page.locator(tid("dag-row")).filter({ hasText: "fork point" }).first();
    const forkId = await forkRow.getAttribute("data-id");
    await forkRow.click();
    await page.waitForFunction((id) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === id, forkId);
    await page.locator(tid("fork-here")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    expect((await head.locator(tid("branch-label")).getAttribute("data-action")) === "copy_fork", "the new head is Flashback's copy fork");
    expect((await head.locator(tid("branch-label")).textContent()).trim() === "fork", "its branch is labelled fork");
    // Every branch that was there keeps its lane (and so its colour).
    const lanesAfter = await lanes();
    const moved = Object.keys(lanesBefore).filter((id) => lanesAfter[id] !== lanesBefore[id]);
    expect(moved.length === 0, `no checkpoint changed lane: ${moved.join(", ")}`);
    expect((await selectedId()) === (await head.getAttribute("data-id")), "the fork is selected");
  },
};

export const editAndFork = {
  name: "edit & fork writes an edited value on a new branch",
  run: async ({ page, shot, dagRows }) => {
    const before = await dagRows();
    await page.keyboard.press("j"); // back to the fork point
    await page.locator(tid("edit-fork-open")).click();
    await page.locator(tid("edit-channel")).selectOption("log");
    await page.locator(tid("edit-json")).fill('["input", "step1", "edited in the browser"]');
    await page.locator(tid("edit-valid")).waitFor();
    await page.locator(tid("edit-fork-submit")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    expect((await head.getAttribute("data-source")) === "update", "source update");
    await page.locator(`${tid("channel")}[data-channel="log"]`).getByText("edited in the browser").waitFor();
    await shot("edit-fork.png");
  },
};

export const badEdits = {
  name: "bad edits are explained and nothing is written",
  run: async ({ page, dagRows }) => {
    const before = await dagRows();
    await page.locator(tid("edit-fork-open")).click();
    await page.locator(tid("edit-channel")).selectOption("log");
    await page.locator(tid("edit-json")).fill('["input",\n  oops]');
    const status = await page.locator(tid("edit-status")).textContent();
    expect(status.includes("line 2"), `syntax error with its line: ${status}`);
    const submit = page.locator(tid("edit-fork-submit"));
    expect(await submit.isDisabled(), "no fork while the JSON does not parse");
    // A value that does not fit: said once with its path, and the fork cannot be pressed.
    const misfit = async (path) => {
      await page.locator(tid("edit-invalid")).waitFor();
      const said = (await page.locator(tid("edit-invalid")).textContent()).trim();
      expect(said.startsWith(`Does not fit at ${path}: `), `the misfit names its path: ${said}`);
      expect(said.split(path).length === 2, `the path said once: ${said}`);
      expect(await submit.isDisabled(), `no fork while the value does not fit: ${said}`);
      return said;
    };
    await page.locator(tid("edit-json")).fill('{"$type": "builtins.bytes", "base64": "%%%"}');
    await misfit("values.log");
    // A typed value Python could not revive (it would keep the string) is refused too.
    await page.locator(tid("edit-json")).fill('["input", {"$type": "datetime.datetime", "$value": "not a date"}]');
    const typed = await misfit("values.log[1]");
    expect(typed.includes("datetime"), `the typed misfit says why: ${typed}`);
    // Fixed: the fork can be pressed again.
    await page.locator(tid("edit-json")).fill('["input"]');
    await page.locator(tid("edit-valid")).waitFor();
    expect(!(await submit.isDisabled()), "a value that fits can be forked");
    await page.locator(tid("modal-close")).click();
    expect((await dagRows()) === before, "no checkpoint written");
  },
};

export const merge = {
  name: "merge takes a channel from another branch",
  run: async ({ page, dagRows }) => {
    const before = await dagRows();
    await page.locator(tid("merge-open")).click();
    await page.locator(`${tid("merge-channel")}[data-channel="log"] ${tid("merge-mode")}`).selectOption("take_b");
    await page.locator(tid("merge-submit")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    expect((await page.locator(`${tid("dag-row")}[data-head="true"]`).textContent()).includes("merge"), "a merge head");
    // At 1280×720 the merge head says each thing once, its time whole, and the DAG does not
    // scroll sideways for it.
    await atSize(page, SMALL, async () => {
      await page.waitForTimeout(100);
      const h = await headRow(page);
      expect(new Set(h.chips).size === h.chips.length, `one chip per meaning: ${h.chips.join(", ")}`);
      expect(h.chips.filter((c) => /\bmerge\b/.test(c)).length === 1, `merge said once: ${h.chips.join(", ")}`);
      expect(/^\d{2}:\d{2}:\d{2}$/.test(h.time) && !h.timeCut, `a whole time: ${JSON.stringify(h.time)}${h.timeCut ? " (cut)" : ""}`);
      expect(!h.dagSideways, "the DAG does not scroll sideways");
    });
  },
};

export const rerun = {
  name: "re-run forks, runs the command and tails the new checkpoints",
  run: async ({ page, dagRows }) => {
    const before = await dagRows();
    await page.locator(tid("rerun-open")).click();
    await page.locator(tid("rerun-command")).fill('echo "resuming $FLASHBACK_THREAD_ID from $FLASHBACK_CHECKPOINT_ID"');
    await page.locator(tid("rerun-start")).click();
    await page.locator(tid("rerun-log")).getByText("resuming forked").waitFor();
    await page.locator(tid("rerun-log")).getByText("+ checkpoint").first().waitFor();
    await page.locator(tid("modal-close")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    // The re-run's branch says so at its tip (the head), and the merge made before links to B.
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    expect((await head.locator(tid("branch-label")).textContent()).trim() === "re-run", "the re-run's branch is labelled");
    expect((await page.locator(tid("merge-from")).count()) >= 1, "the merge shows where it took from");
  },
};

export const exportReport = {
  name: "export downloads an HTML report that verifies",
  run: async ({ page, bin, out }) => {
    await page.locator(tid("export-open")).click();
    await page.locator(tid("export-format")).selectOption("html");
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator(tid("export-start")).click()]);
    const file = join(out, "..", "forked-export.html");
    await download.saveAs(file);
    await page.locator(tid("export-done")).waitFor();
    await page.locator(tid("export-verify")).click();
    expect((await page.locator(tid("verify-report")).textContent()).includes("Verified"), "verified in the UI");
    const v = spawnSync(bin, ["verify", file], { encoding: "utf8" });
    expect(v.status === 0, `flashback verify exits 0: ${v.stdout}${v.stderr}`);
    writeFileSync(file + ".tampered.html", readFileSync(file, "utf8").replace("edited in the browser", "edited by someone else"));
    const t = spawnSync(bin, ["verify", file + ".tampered.html"], { encoding: "utf8" });
    expect(t.status === 5, "a tampered copy fails verification");
    await page.locator(tid("modal-close")).click();
  },
};

export const deleteThread = {
  name: "delete thread asks for confirmation and removes it",
  run: async ({ page, openThread }) => {
    await openThread("durability-exit");
    await page.locator(tid("delete-open")).click();
    const preview = await page.locator(tid("delete-preview")).textContent();
    expect(preview.includes("2"), `the preview counts checkpoints: ${preview}`);
    expect(await page.locator(tid("delete-confirm")).isDisabled(), "disabled until confirmed");
    await page.locator(tid("delete-confirm-input")).fill("durability-exit");
    await page.locator(tid("delete-confirm")).click();
    await page.waitForSelector(tid("thread-list-screen"));
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length === 11);
  },
};
