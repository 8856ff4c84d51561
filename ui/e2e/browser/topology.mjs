// The thread screen's Topology tab, and the chat following the step.

import { expect, tid } from "./harness.mjs";

/** The messages highlighted as added by the selected step: `role:id`. */
const highlighted = (page) =>
  page.locator(`${tid("chat-message")}[data-added="true"]`).evaluateAll((ms) => ms.map((m) => m.dataset.role));

export const chatFollows = {
  name: "stepping through a chat highlights the messages each step added",
  run: async ({ page, openThread }) => {
    await openThread("chat-tools");
    await page.locator(tid("tab-state")).click();
    await page.locator(tid("chat")).first().waitFor();
    expect((await highlighted(page)).length === 0, "nothing is highlighted when the thread opens");
    // Back one step (its parent is read once): the tool's answer.
    await page.keyboard.press("j");
    await page.waitForSelector(`${tid("chat-message")}[data-added="true"]`);
    const back = await highlighted(page);
    expect(back.join(",") === "tool", `the tools step added its result: ${back}`);
    // Forward again (compared with the checkpoint just shown): the final answer.
    await page.keyboard.press("k");
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid="chat-message"][data-added="true"]')].map((m) => m.dataset.role).join(",") === "ai",
    );
    const models = await page.locator(tid("chat-usage")).count();
    expect(models > 0, "AI messages show their usage");
  },
};

export const topology = {
  name: "the Topology tab draws what ran, sub-agents inside the node that ran them; a node lists where it ran and opens it",
  run: async ({ page, shot, openThread }) => {
    await openThread("subgraph");
    await page.locator(tid("tab-topology")).click();
    await page.locator(tid("topology-svg")).waitFor({ timeout: 20_000 });
    const nodes = await page.locator(tid("topology-node")).evaluateAll((ns) => ns.map((n) => `${n.dataset.graph}/${n.dataset.node}`));
    for (const want of ["/prep", "/mid", "/post", "mid/mid_pre", "mid/inner", "mid|inner/inner_step"]) {
      expect(nodes.includes(want), `${want} is drawn (${nodes.join(" ")})`);
    }
    const edges = await page.locator(tid("topology-edge")).count();
    expect(edges === 10, `the transitions of the three graphs (${edges})`);
    // A sub-agent's graph sits inside the node that ran it.
    const box = (graph, node) => page.locator(`${tid("topology-node")}[data-graph="${graph}"][data-node="${node}"]`).boundingBox();
    const [outer, inner] = [await box("", "mid"), await box("mid|inner", "inner_step")];
    expect(
      inner.x > outer.x && inner.y > outer.y && inner.x + inner.width < outer.x + outer.width && inner.y + inner.height < outer.y + outer.height,
      "inner_step is drawn inside mid",
    );
    await shot("topology.png");
    // A node lists the checkpoints it ran at; one opens in the DAG.
    await page.locator(`${tid("topology-node")}[data-graph="mid|inner"][data-node="inner_step"]`).click();
    const runs = page.locator(tid("topology-run"));
    await runs.first().waitFor();
    expect((await runs.count()) === 1, "inner_step ran once");
    const id = await runs.first().getAttribute("data-id");
    await runs.first().click();
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${id}"]`).waitFor();
    expect((await page.locator(`${tid("dag-row")}[data-id="${id}"]`).count()) === 1, "its row is in the DAG");
    expect((await page.locator(tid("topology-node")).count()) === nodes.length, "the tab stays on the topology");
    await page.locator(tid("tab-state")).click();
  },
};

export const deepAgent = {
  name: "a deep agent's topology: its task sub-agent inside tools, middleware hooks named as such, a wait marked",
  why: "no --agents database (tests/interop/agents.sh --make-sqlite)",
  available: (t) => t.agentsDb,
  run: async ({ page, shot, openDb, openThread, db, agentsDb }) => {
    await openDb(agentsDb);
    await openThread("deep");
    await page.locator(tid("tab-topology")).click();
    await page.locator(tid("topology-svg")).waitFor({ timeout: 20_000 });
    const inside = await page.locator(`${tid("topology-node")}[data-graph="tools"]`).count();
    expect(inside > 2, `the sub-agent's nodes are drawn inside tools (${inside})`);
    const names = await page.locator(`${tid("topology-node")} text`).allTextContents();
    expect(names.includes("TodoList · after model"), `a middleware hook reads as one: ${names.join(" | ")}`);
    await shot("topology-deep-agent.png");
    // Waiting inside the sub-agent: the node that waits, there and in the root graph.
    await openThread("deep-waiting");
    await page.locator(tid("tab-topology")).click();
    await page.locator(`${tid("topology-node")}.interrupted`).first().waitFor({ timeout: 20_000 });
    const waiting = await page.locator(`${tid("topology-node")}.interrupted`).evaluateAll((ns) => ns.map((n) => `${n.dataset.graph}/${n.dataset.node}`));
    expect(waiting.includes("/tools") && waiting.some((w) => w.startsWith("tools/")), `the waits are marked: ${waiting}`);
    await page.locator(tid("tab-state")).click();
    await openDb(db);
  },
};
