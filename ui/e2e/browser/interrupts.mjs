// A thread waiting at an interrupt: the banner with its question, *Resume with…* (a re-run
// whose runner resumes with the value given, here the real LangGraph program of
// tests/interop/activity_test.py), a failed re-run's fork removed again, and token usage on
// the DAG rows. Needs --python (LangGraph).

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

const head = (page) => page.locator(`${tid("dag-row")}[data-head="true"]`);

export const resumeWith = {
  name: "an interrupt's banner asks its question; Resume with… resumes it; a failed re-run's fork can be removed; steps show tokens",
  why: "no --python with LangGraph",
  available: (t) => t.python,
  run: async ({ page, shot, openDb, openThread, dagRows, db, work, repo, python }) => {
    const path = join(work, "activity.sqlite");
    if (!existsSync(path)) {
      const made = spawnSync(python, [join(repo, "tests", "interop", "activity_test.py"), "--make", path], { encoding: "utf8" });
      expect(made.status === 0, `activity_test.py --make: ${made.stderr}`);
    }
    await openDb(path);

    // Tokens: the usage thread's two model steps.
    await openThread("usage");
    const tokens = await page.locator(tid("dag-tokens")).allTextContents();
    expect(JSON.stringify(tokens) === JSON.stringify(["1.2k tok", "365 tok"]), `tokens per step: ${JSON.stringify(tokens)}`);
    const title = await page.locator(tid("dag-tokens")).first().getAttribute("title");
    expect(title.includes("1,000 in, 234 out, 1,234 total"), `the breakdown: ${title}`);

    // The banner: the question of the waiting interrupt, at the top of the head's detail.
    await openThread("approval-waiting");
    const banner = page.locator(tid("interrupt-banner"));
    await banner.waitFor();
    expect((await banner.locator(tid("interrupt-question")).textContent()).includes("Approve the refund?"), "the question");
    await shot("interrupt-banner.png");

    // A runner that fails: its fork stays, and can be removed again from the dialog.
    const before = await dagRows();
    await page.locator(tid("resume-with")).click();
    await page.locator(tid("rerun-resume")).waitFor();
    await page.locator(tid("rerun-command")).fill("echo failing; exit 3");
    await page.locator(tid("rerun-resume-value")).fill("yes please");
    expect((await page.locator(tid("rerun-resume-error")).textContent()).includes('"yes please"'), "text must be quoted");
    expect(await page.locator(tid("rerun-start")).isDisabled(), "no start with a value that is not JSON");
    // Without a value it is a plain re-run: a fork of the head (resuming the head with a value
    // runs in place, below).
    await page.locator(tid("rerun-resume-value")).fill("");
    expect((await page.locator(tid("rerun-start")).textContent()).includes("Fork & run"), "a plain re-run forks");
    await page.locator(tid("rerun-start")).click();
    await page.locator(tid("rerun-error")).waitFor();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    await page.locator(tid("rerun-remove-preview")).click();
    await page.locator(tid("rerun-remove-confirm")).waitFor();
    expect((await page.locator(tid("rerun-remove")).textContent()).includes("1 checkpoint and"), "the preview counts the fork alone");
    await page.locator(tid("rerun-remove-confirm")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before);
    expect((await page.locator(tid("rerun-dialog")).count()) === 0, "the dialog closed");

    // Resume with a value: the real program resumes the interrupt with it and finishes.
    await page.locator(tid("resume-with")).click();
    await page.locator(tid("rerun-command")).fill(`${python} ${join(repo, "tests", "interop", "activity_test.py")} --resume-runner`);
    await page.locator(tid("rerun-resume-value")).fill('{"approved": true}');
    expect((await page.locator(tid("rerun-start")).textContent()).trim() === "Resume", "the waiting head resumes in place");
    expect((await page.locator(tid("rerun-how")).textContent()).includes("no fork"), "and says so");
    await page.locator(tid("rerun-start")).click();
    await page.locator(tid("rerun-log")).getByText("resumed with").waitFor({ timeout: 60_000 });
    for (let i = 0; i < 600 && (await page.locator(tid("rerun-stop")).count()); i++) await page.waitForTimeout(100);
    await page.locator(tid("modal-close")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) >= n, before + 1);
    await head(page).click();
    await page.locator(tid("tab-state")).click();
    await page.locator(tid("detail-pane")).getByText("answer: {'approved': True}").first().waitFor();
    expect((await page.locator(tid("interrupt-banner")).count()) === 0, "nothing waits any more");
    await openDb(db);
  },
};
