// Today's agents (issue 32), on threads written by the real libraries (langchain create_agent
// with HumanInTheLoopMiddleware, deepagents, supervisor, swarm: tests/interop/agents_fixture.py,
// made by `tests/interop/agents.sh --make-sqlite`, given as --agents): an approval reads as
// cards and Resume with… builds the middleware's decisions; a deep agent waiting inside its
// sub-agent opens on the root checkpoint that can be resumed and says where it waits; Send steps
// are named by their target; the thread's tokens are totalled.

import { expect, tid } from "./harness.mjs";

const head = (page) => page.locator(`${tid("dag-row")}[data-head="true"]`);

export const approval = {
  name: "a create_agent approval reads as cards; Resume with… builds the middleware's decisions",
  why: "no --agents database (tests/interop/agents.sh --make-sqlite)",
  available: (t) => t.agentsDb,
  run: async ({ page, shot, openDb, openThread, agentsDb }) => {
    await openDb(agentsDb);
    // Per-call mode, two parallel calls, one answered: live, with the answered call applied.
    await openThread("hitl-per-call");
    await page.locator(tid("tab-state")).click();
    const note = (await page.locator(tid("view-note")).textContent()).toLowerCase();
    expect(note.includes("live") && note.includes("tools"), `the head is the live view with the finished tools task: ${note}`);
    expect((await page.locator(tid("snapshot-status")).textContent()).toLowerCase().includes("waiting"), "waiting for a human");
    const cards = page.locator(tid("approval-card"));
    expect((await cards.count()) === 1, `one call waits: ${await cards.count()} cards`);
    const args = await cards.first().locator(tid("approval-args")).textContent();
    expect(args.length > 2 && !args.includes("\\n"), `arguments read as text: ${args}`);
    // Internal channels folded.
    expect((await page.locator(tid("internal-toggle")).textContent()).includes("internal"), "internal channels folded");

    await page.locator(tid("resume-with")).click();
    await page.locator(tid("resume-approvals")).waitFor();
    // A bad edit is refused with one clear message, and nothing can be started.
    await page.locator(tid("decision-edit")).first().check();
    await page.locator(tid("decision-args")).first().fill("{");
    await page.locator(tid("decision-error")).first().waitFor();
    expect(await page.locator(tid("rerun-start")).isDisabled(), "no start while the edit is not JSON");
    await page.locator(tid("decision-reject")).first().check();
    await page.locator(tid("decision-message")).first().fill("not now");
    const value = JSON.parse(await page.locator(tid("rerun-resume-value")).inputValue());
    expect(value.type === "reject" && value.message === "not now", `the decision the middleware takes: ${JSON.stringify(value)}`);
    expect(!(await page.locator(tid("rerun-start")).isDisabled()), "a valid decision can be sent");
    expect((await page.locator(tid("rerun-start")).textContent()).trim() === "Resume", "the waiting head resumes in place");
    await shot("agents-approval.png");
    await page.locator(tid("modal-close")).click();

    // Batched mode: one interrupt for the turn, answered with {"decisions": [...]}.
    await openThread("hitl-batched");
    await page.locator(tid("resume-with")).click();
    await page.locator(tid("resume-approvals")).waitFor();
    // The second call allows only a response, which needs its text.
    expect(await page.locator(tid("rerun-start")).isDisabled(), "no start before the answer is written");
    await page.locator(tid("decision-message")).last().fill("Friday at 10.");
    const batched = JSON.parse(await page.locator(tid("rerun-resume-value")).inputValue());
    expect(
      batched.decisions.length === 2 && batched.decisions[0].type === "approve" && batched.decisions[1].message === "Friday at 10.",
      `one decision per call, in order: ${JSON.stringify(batched)}`,
    );
    await page.locator(tid("modal-close")).click();
  },
};

export const deepAgent = {
  name: "a deep agent waiting inside its sub-agent opens on the root head and says where it waits",
  why: "no --agents database (tests/interop/agents.sh --make-sqlite)",
  available: (t) => t.agentsDb,
  run: async ({ page, shot, openDb, openThread, selectedId, db, agentsDb }) => {
    await openDb(agentsDb);
    await openThread("deep-waiting");
    const rootHead = await head(page).getAttribute("data-id");
    expect((await selectedId()).length > 0, "a checkpoint is selected");
    const selected = page.locator(`${tid("dag-row")}[data-id="${rootHead}"]`);
    expect((await selected.getAttribute("data-ns")) === "", "the root graph's head");
    await page.locator(tid("interrupt-inside")).waitFor();
    expect(await page.locator(tid("resume-with")).isEnabled(), "Resume with… is offered on the root");
    await page.locator(tid("tab-state")).click();
    await shot("agents-deep-agent.png");
    const before = await selectedId();
    await page.locator(tid("open-inside")).click();
    await page.waitForFunction((b) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() !== b, before);

    // The deep agent that finished: its topology, the sub-agent nested in the tools node.
    await openThread("deep");
    await page.locator(tid("tab-topology")).click();
    await page.locator(tid("topology-svg")).waitFor({ timeout: 20_000 });
    const drawn = await page.locator(tid("topology-node")).evaluateAll((ns) => ns.map((n) => `${n.dataset.graph}/${n.dataset.node}`));
    expect(drawn.includes("/tools") && drawn.some((n) => n.startsWith("tools/")), `the sub-agent inside tools: ${drawn.join(" ")}`);
    const label = await page.locator(`${tid("topology-node")}[data-node="TodoListMiddleware.after_model"]`).first().textContent();
    expect(label.includes("TodoList · after model"), `a middleware hook as what it is: ${label}`);
    await shot("agents-topology.png");

    // A supervisor's steps are named by their nodes.
    await openThread("supervisor");
    const ran = await page.locator(tid("dag-ran")).allTextContents();
    expect(!ran.some((r) => r.includes("Send")), `steps named by their nodes: ${JSON.stringify(ran)}`);
    await openDb(db);
  },
};
