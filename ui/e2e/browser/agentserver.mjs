// A running Agent Server (issue 31): the real `langgraph dev` started by
// tests/devserver/serve_live.py (drive.start() + drive.run_scenario()), `flashback serve
// http://127.0.0.1:PORT` on it, and the interrupt of `approval-waiting` resumed from the app
// with *Resume with…* "approved": the server runs the graph, the run finishes, and its new
// checkpoints are on the DAG without a reload. Skipped (with a line) when no Python with the
// pinned langgraph-cli[inmem] / langgraph-sdk is found.

import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "./server.mjs";
import { expect, tid } from "./harness.mjs";

/** FLASHBACK_PYTHON, --python, or the test venv; null when none has the packages. */
function python(t) {
  const cands = [process.env.FLASHBACK_PYTHON, t.python, "/root/.cache/flashback/venv-test/bin/python"].filter(Boolean);
  for (const py of cands) {
    if (!existsSync(py) && py.includes("/")) continue;
    const probe = spawnSync(py, ["-c", "import langgraph_sdk, langgraph_api, langgraph_cli"], { encoding: "utf8" });
    if (probe.status === 0) return py;
  }
  return null;
}

/** Starts the live server; resolves with {port, url, threads, child} once the scenario ran. */
function startLive(py, repo) {
  const child = spawn(py, [join(repo, "tests", "devserver", "serve_live.py")], { stdio: ["pipe", "pipe", "pipe"], detached: false });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`langgraph dev did not start in 180 s: ${stderr.slice(-2000)}`)), 180_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        try {
          resolve({ ...JSON.parse(buf.slice(0, nl)), child });
        } catch (e) {
          reject(new Error(`serve_live.py: ${buf.slice(0, nl)}`));
        }
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve_live.py exited (${code}): ${stderr.slice(-2000)}`));
    });
  });
}

/** Stops `flashback serve` and the live server (closing its stdin, then SIGTERM, then SIGKILL). */
export function stopLive(t) {
  t.asServe?.child.kill("SIGTERM");
  const live = t.asLive?.child;
  if (live && live.exitCode === null) {
    live.stdin.end();
    live.kill("SIGTERM");
    setTimeout(() => live.exitCode === null && live.kill("SIGKILL"), 15_000).unref();
  }
}

export const resume = {
  name: "Agent Server: `flashback serve http://…` on the real langgraph dev; Resume with… \"approved\" runs on the server and the DAG shows the run",
  available: (t) => (t.asPython ??= python(t)) !== null,
  why: "no Python with langgraph-cli[inmem] and langgraph-sdk (FLASHBACK_PYTHON or /root/.cache/flashback/venv-test/bin/python)",
  run: async (t) => {
    const { page, bin, work, repo, shot } = t;
    t.asLive = await startLive(t.asPython, repo);
    const waiting = t.asLive.threads["approval-waiting"];
    expect(!!waiting, `the scenario's threads: ${JSON.stringify(t.asLive.threads)}`);
    t.asServe = await startServer(bin, work, t.asLive.url);
    await page.goto("about:blank");
    await page.goto(t.asServe.url);
    await page.waitForSelector(tid("thread-row"));

    // The thread list: the header says Agent Server, the banner has the live line.
    const label = (await page.locator(tid("server-label")).textContent()).trim();
    expect(label.includes("Agent Server"), `the header's label: ${label}`);
    const live = (await page.locator(tid("server-live")).textContent()).trim();
    expect(live.length > 0, "the banner's live line");
    const row = page.locator(`${tid("thread-row")}[data-thread="${waiting}"]`);
    expect((await row.locator(tid("server-status")).textContent()).trim() === "interrupted", "approval-waiting is interrupted");

    // The thread: its interrupt, resumed from the app.
    await row.click();
    await page.waitForSelector(tid("dag-row"));
    const banner = page.locator(tid("interrupt-banner"));
    await banner.waitFor();
    const before = Number(await page.locator(tid("dag")).getAttribute("data-rows"));
    await page.locator(tid("resume-with")).click();
    await page.locator(tid("rerun-resume")).waitFor();
    expect((await page.locator(tid("rerun-command")).count()) === 0, "no runner command is asked for");
    expect((await page.locator(tid("rerun-server")).textContent()).includes("The server runs its graph from this checkpoint"), "says the server runs it");
    await page.locator(tid("rerun-resume-value")).fill('"approved"');
    await page.locator(tid("rerun-start")).click();
    // The run ends, its lines and new checkpoints in the tail.
    await page.waitForFunction(
      () => ["succeeded", "failed", "cancelled"].includes(document.querySelector('[data-testid="rerun-state"]')?.textContent?.trim() ?? ""),
      null,
      { timeout: 60_000 },
    );
    const state = (await page.locator(tid("rerun-state")).textContent()).trim();
    expect(state === "succeeded", `the run's job: ${state}`);
    const err = await page.locator(tid("rerun-error")).count();
    expect(err === 0, `the run failed: ${err ? await page.locator(tid("rerun-error")).textContent() : ""}`);
    const log = await page.locator(tid("rerun-log")).textContent();
    expect(log.includes("+ checkpoint"), `the tail shows the new checkpoints: ${log.slice(0, 400)}`);
    // The DAG has them without a reload.
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) > n, before, { timeout: 20_000 });
    await page.locator('[data-testid="rerun-dialog"] button', { hasText: "Close" }).click();
    // The thread is no longer waiting: the server says so, and the head's banner is gone.
    await page.waitForFunction(
      () => document.querySelector('[data-testid="server-thread-status"]')?.textContent?.trim() !== "interrupted",
      null,
      { timeout: 30_000 },
    );
    const status = (await page.locator(tid("server-thread-status")).textContent()).trim();
    expect(status === "idle", `the server's status after the run: ${status}`);
    // The new head (the DAG's top row) waits on nothing.
    await page.locator(tid("dag-row")).first().click();
    await page.waitForTimeout(500);
    expect((await page.locator(tid("interrupt-banner")).count()) === 0, "the new head has no interrupt banner");
    await shot("agentserver-resume.png");
  },
};
