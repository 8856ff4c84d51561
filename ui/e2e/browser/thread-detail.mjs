// The thread detail screen, reading: the DAG, stepping, the state, writes and diff views,
// long threads, subgraph namespaces, undecodable values.

import { expect, tid } from "./harness.mjs";

export const lanes = {
  name: "a thread's checkpoints are drawn as branch lanes",
  run: async ({ page, shot, dagRows }) => {
    await page.locator(`${tid("thread-row")}[data-thread="forked"]`).click();
    await page.waitForSelector(tid("dag-row"));
    expect((await dagRows()) === 14, "14 checkpoints");
    const lanes = await page.locator(tid("dag-row")).evaluateAll((rows) => new Set(rows.map((r) => r.dataset.lane)).size);
    expect(lanes >= 3, `several lanes (${lanes})`);
    // Each branch its own colour (issue 33: two branches hashed to one colour read as one).
    const colours = await page.locator(`${tid("dag")} circle.dot`).evaluateAll((dots) => new Set(dots.map((d) => getComputedStyle(d).getPropertyValue("--c").trim() || getComputedStyle(d).fill)).size);
    expect(colours >= lanes, `a colour per branch: ${colours} colours for ${lanes} lanes`);
    expect((await page.locator(`${tid("dag-row")}[data-head="true"]`).count()) === 1, "one head");
    await shot("thread-dag.png");
  },
};

export const keyboardStepping = {
  name: "keyboard stepping walks the branch and the scrubber follows",
  run: async ({ page, selectedId }) => {
    const start = await selectedId();
    const seen = [start];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("j");
      await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() !== prev, seen[seen.length - 1]);
      seen.push(await selectedId());
    }
    expect(new Set(seen).size === 4, "four different checkpoints");
    const pos = await page.locator(tid("scrub-position")).textContent();
    expect(pos.trim().startsWith("4 /"), `position on the branch: ${pos}`);
    await page.keyboard.press("k");
    await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === prev, seen[2]);
    await page.keyboard.press("End");
    await page.waitForFunction((prev) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() === prev, start);
  },
};

export const dialogFocus = {
  name: "dialogs take focus, keep Tab inside, close on Escape and give focus back",
  run: async ({ page }) => {
    const inDialog = () => page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]'));
    // The shortcuts (?): focus moves in, Tab cycles inside, Escape closes.
    await page.keyboard.press("?");
    await page.locator('[role="dialog"]').waitFor();
    expect(await inDialog(), "focus is inside the help dialog");
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab");
      expect(await inDialog(), `Tab ${i + 1} stays inside the dialog`);
    }
    await page.keyboard.press("Shift+Tab");
    expect(await inDialog(), "Shift+Tab stays inside the dialog");
    await page.keyboard.press("Escape");
    await page.locator('[role="dialog"]').waitFor({ state: "detached" });
    // Edit & fork: focus starts in its first field and returns to the button that opened it.
    await page.locator(tid("edit-fork-open")).click();
    await page.locator('[role="dialog"]').waitFor();
    const first = await page.evaluate(() => document.activeElement?.tagName);
    expect(["INPUT", "SELECT", "TEXTAREA"].includes(first), `the first field has focus: ${first}`);
    await page.keyboard.press("Escape");
    await page.locator('[role="dialog"]').waitFor({ state: "detached" });
    const back = await page.evaluate(() => document.activeElement?.dataset?.testid);
    expect(back === "edit-fork-open", `focus went back to the opener: ${back}`);
  },
};

export const chatBubble = {
  name: "a decoded message shows as a chat bubble with its tool calls",
  run: async ({ page, shot, openThread, channelAction }) => {
    await openThread("chat-tools");
    await page.locator(tid("chat")).first().waitFor();
    const texts = await page.locator(tid("chat-text")).allTextContents();
    expect(texts.some((t) => t.includes("What is 2+3 and 4*5?")), "the human message");
    const calls = await page.locator(tid("tool-call")).allTextContents();
    expect(calls.some((t) => t.includes("add(") && t.includes('"a":2')), `the tool call: ${calls}`);
    await shot("state-view.png");
    // What the step into this checkpoint changed is marked without playing anything.
    expect(await page.locator(`${tid("channel")}[data-channel="messages"].changed`).count() === 1, "messages: changed by this step");
    // A channel's value copies as Python source (and as JSON).
    await channelAction("messages", "copy-python");
    await page.locator(tid("toast-info")).getByText("Copied messages as Python.").waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => null));
    if (copied !== null) expect(copied.startsWith("[HumanMessage(content='What is 2+3 and 4*5?'"), `the Python text: ${copied.slice(0, 80)}`);
  },
};

export const writeTrace = {
  name: "the write trace says whose writes they are: what made the checkpoint, then the next step's",
  run: async ({ page, shot, openThread }) => {
    // chat-tools: input, __start__, agent, tools, agent, … Step 1 was made by `agent`; its own
    // pending writes are the next step's, `tools`.
    await openThread("chat-tools");
    const selected = () => page.locator(tid("selected-id")).textContent();
    await page.keyboard.press("Home");
    for (const _ of [0, 1]) {
      const before = await selected();
      await page.keyboard.press("k");
      await page.waitForFunction((b) => document.querySelector('[data-testid="selected-id"]')?.textContent !== b, before);
    }
    await page.locator(tid("tab-writes")).click();
    const made = page.locator(tid("writes-made-heading"));
    await made.waitFor();
    expect((await made.textContent()).trim() === "agent wrote", `the writes that made it: ${await made.textContent()}`);
    const next = (await page.locator(tid("writes-next-heading")).textContent()).trim();
    expect(next === "Writes of the next step: tools", `its own pending writes: ${next}`);
    // agent's writes come first, then tools'.
    const nodes = await page.locator(`${tid("write-group")}`).evaluateAll((gs) => gs.map((g) => g.dataset.node));
    expect(nodes[0] === "agent" && nodes[nodes.length - 1] === "tools", `groups in order: ${nodes}`);
    expect((await page.locator(tid("write")).count()) > 0, "writes listed");
    await shot("writes.png");
    // The input checkpoint: no step made it.
    await page.keyboard.press("Home");
    await page.locator(tid("writes-made-none")).getByText("holds an input").waitFor();
    await page.locator(tid("tab-state")).click();
    await page.keyboard.press("End");
  },
};

/** The computed colour of a token (as `rgb(…)`), read through a probe element. */
export async function tokenColour(page, token) {
  return page.evaluate((t) => {
    const probe = document.createElement("span");
    probe.style.color = `var(${t})`;
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  }, token);
}

export const errorText = {
  name: "an error reads as its type and message, monospace, in the failed colour (thread list, tasks, writes), not as a str value",
  run: async ({ page, shot, openThread }) => {
    const want = "ValueError: upstream returned HTTP 500 for item 42";
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    const listed = await page.locator(`${tid("thread-row")}[data-thread="parallel-failure"] .failure`).textContent();
    expect(listed.includes(want) && !listed.includes("('"), `the thread list's error: ${listed}`);
    await openThread("parallel-failure");
    // fetch_bad raised in the step after the head: its task (and its __error__ write) are the head's.
    await page.locator(`${tid("dag-row")}[data-head="true"]`).click();
    await page.locator(tid("tab-tasks")).click();
    const err = page.locator(`${tid("task-error")} ${tid("error-value")}`);
    await err.waitFor();
    expect((await err.textContent()).trim() === want, `the task's error: ${await err.textContent()}`);
    expect((await err.getAttribute("data-type")) === "ValueError", "its type");
    expect((await page.locator(`${tid("task-error")} ${tid("type-badge")}`).count()) === 0, "no `str` badge");
    expect((await page.locator(`${tid("task-error")} ${tid("string-value")}`).count()) === 0, "not a string leaf");
    const look = await err.evaluate((e) => ({ color: getComputedStyle(e).color, font: getComputedStyle(e).fontFamily }));
    expect(look.color === (await tokenColour(page, "--bad")), `the failed colour: ${look.color}`);
    expect(/mono/i.test(look.font), `monospace: ${look.font}`);
    const [box, text] = await Promise.all([page.locator(tid("task-error")).boundingBox(), err.boundingBox()]);
    expect(box.height <= text.height + 16, `the box holds the error and no blank line (${box.height} for ${text.height})`);
    await shot("task-error.png");
    await page.locator(tid("tab-writes")).click();
    const write = page.locator(`${tid("write")}[data-kind="error"] ${tid("error-value")}`);
    await write.waitFor();
    expect((await write.textContent()).trim() === want, `the __error__ write: ${await write.textContent()}`);
    await page.locator(tid("tab-state")).click();
  },
};

export const diffWithParent = {
  name: "diff with the parent shows the new message, by its role and text",
  run: async ({ page, shot }) => {
    await page.locator(tid("diff-parent")).click();
    await page.locator(tid("diff-view")).waitFor();
    const messages = page.locator(`${tid("diff-channel")}[data-channel="messages"]`);
    expect((await messages.count()) === 1, "messages changed");
    expect((await messages.locator(`${tid("diff-item")}[data-change="added"]`).count()) >= 1, "an added message");
    const labels = await messages.locator(tid("diff-item-label")).allTextContents();
    for (const l of labels) expect(/^(ai|human|tool|system) /.test(l.trim()), `a message line leads with its role: ${l}`);
    // One line of the same checkpoint: it descends from A.
    expect((await page.locator(tid("diff-meet")).textContent()).includes("B descends from A"), "one line");
    await shot("diff.png");
    await page.locator(tid("diff-close")).click();
  },
};

export const diffAcrossBranches = {
  name: "comparing two branches says where they meet",
  run: async ({ page, shot, openThread }) => {
    await openThread("forked");
    // Two branch tips: the head, and the tip of another lane.
    const head = page.locator(`${tid("dag-row")}[data-head="true"]`);
    await head.click();
    // Rows are newest first: a lane's first row is its tip.
    const tips = await page.locator(tid("dag-row")).evaluateAll((rows) => {
      const headLane = rows.find((r) => r.dataset.head === "true")?.dataset.lane;
      const seen = new Set([headLane]);
      return rows.filter((r) => !seen.has(r.dataset.lane) && seen.add(r.dataset.lane)).map((r) => r.dataset.id);
    });
    expect(tips.length >= 1, `another branch tip (${tips})`);
    await page.locator(`${tid("dag-row")}[data-id="${tips[0]}"]`).click({ modifiers: ["Shift"] });
    const meet = page.locator(tid("diff-meet"));
    await meet.waitFor();
    const text = (await meet.textContent()).trim();
    expect(/^branches meet at [0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4} step \d+$/.test(text), `where they meet: ${text}`);
    const at = await meet.getAttribute("title");
    expect((await page.locator(`${tid("dag-row")}[data-id="${at}"]`).count()) === 1, `the meeting point is a row (${at})`);
    await shot("diff-branches.png");
    await page.locator(tid("diff-close")).click();
  },
};

export const longThreads = {
  name: "long threads are virtualised",
  run: async ({ page, openThread, dagRows }) => {
    await openThread("long");
    expect((await dagRows()) === 300, "300 checkpoints");
    const drawn = await page.locator(tid("dag-row")).count();
    expect(drawn < 100, `only visible rows are drawn (${drawn})`);
    await page.keyboard.press("Home");
    await page.waitForFunction(() => document.querySelector('[data-testid="scrub-position"]')?.textContent?.trim().startsWith("1 /"));
  },
};

export const wideThread = {
  name: "a checkpoint forked 5,000 times: 5,001 lanes scroll sideways and the DOM stays small",
  run: async ({ page, shot, openDb, dagRows, db, wide }) => {
    await openDb(wide);
    await page.locator(`${tid("thread-row")}[data-thread="wide"]`).click();
    await page.waitForSelector(tid("selected-id"));
    expect((await dagRows()) === 5_014, `5,014 checkpoints (${await dagRows()})`);
    const drawn = () =>
      page.evaluate(() => {
        const svg = document.querySelector('[data-testid="dag-lanes"]');
        const dag = document.querySelector('[data-testid="dag"]');
        return { paths: svg.querySelectorAll("path").length, dots: svg.querySelectorAll("circle").length, nodes: dag.querySelectorAll("*").length, width: svg.getBoundingClientRect().width };
      });
    let d = await drawn();
    expect(d.paths <= 16 && d.nodes < 2_000, `a small DOM at the top (${JSON.stringify(d)})`);
    expect(d.width <= 400, `the graph column is capped (${d.width} px)`);
    const label = await page.locator(`${tid("dag-row")}[data-head="true"] .id`).boundingBox();
    expect(label && label.x < 600, `the head's label is in view (x ${label?.x})`);
    // Down to row 2,500 and sideways to its lane: the sibling's dot is drawn with its neighbours'.
    await page.locator(tid("dag")).evaluate((el) => (el.scrollTop = 28 * 2_490));
    await page.locator(tid("lane-scroll")).evaluate((el) => (el.scrollLeft = 16 * 2_490));
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="dag-lanes"] circle')].some((c) => Number(c.getAttribute("cx")) > 16 * 2_495));
    d = await drawn();
    expect(d.paths <= 16 && d.dots > 10 && d.nodes < 2_000, `a small DOM at lane 2,500 (${JSON.stringify(d)})`);
    await shot("wide-dag-sideways.png");
    // Older from the head: the fork point, where 5,001 lines converge, scrolled into view (and back to lane 0).
    await page.keyboard.press("j");
    await page.waitForSelector(`${tid("dag-row")}.selected[data-fork-point="true"]`);
    d = await drawn();
    expect(d.paths <= 16 && d.nodes < 2_000, `a small DOM at the fork point (${JSON.stringify(d)})`);
    expect((await page.locator(tid("lane-scroll")).evaluate((el) => el.scrollLeft)) === 0, "back to lane 0");
    await shot("wide-dag.png");
    await openDb(db);
  },
};

export const subgraphs = {
  name: "subgraph namespaces expand and collapse; their checkpoints cannot be forked (the reason shown)",
  run: async ({ page, openThread, dagRows }) => {
    await openThread("subgraph");
    const full = await dagRows();
    // A checkpoint inside a subgraph: fork, edit, merge and re-run are off, with the reason.
    await page.locator(`${tid("dag-row")}:not([data-ns=""])`).first().click();
    await page.locator(tid("subgraph-fork-note")).waitFor();
    for (const b of ["fork-here", "edit-fork-open", "merge-open", "rerun-open"]) {
      expect(await page.locator(tid(b)).isDisabled(), `${b} is disabled in a subgraph`);
    }
    // Back on the root graph they are on again.
    await page.locator(`${tid("dag-row")}[data-ns=""]`).first().click();
    await page.locator(tid("subgraph-fork-note")).waitFor({ state: "detached" });
    expect(!(await page.locator(tid("fork-here")).isDisabled()), "fork is back on the root graph");
    await page.locator(tid("toggle-subgraph")).first().click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) < n, full);
    await page.locator(tid("toggle-subgraph")).first().click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, full);
  },
};

export const sendFanout = {
  name: "a Send fan-out lists every task due, even with the same node name",
  run: async ({ page, openThread }) => {
    await openThread("send-fanout");
    // Step 1: `plan` sent three `work` tasks.
    await page.locator(`${tid("dag-row")}[data-id="1f1e641e-e93a-6d53-8001-9d3db27f99b4"]`).click();
    await page.locator(tid("tab-tasks")).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="next-node"]').length === 3);
    const names = await page.locator(tid("next-node")).allTextContents();
    expect(names.every((n) => n.trim() === "work"), `next: ${names.join(", ")}`);
    expect((await page.locator(tid("panel-error")).count()) === 0, "no panel failed");
    // Stepping on shows that checkpoint's tasks, not these.
    await page.keyboard.press("k");
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="next-node"]').length !== 3);
  },
};

export const undecodable = {
  name: "undecodable blobs show the error in place and the rest stays usable",
  run: async ({ page, shot, broken, damagedIds }) => {
    await page.locator(tid("location-input")).fill(broken);
    await page.locator(tid("open-button")).click();
    // A thread whose latest checkpoint is damaged is listed, marked, with the others.
    const damagedRow = page.locator(`${tid("thread-row")}[data-thread="reducers"]`);
    await damagedRow.locator(tid("thread-problem")).waitFor();
    expect((await page.locator(tid("thread-problem")).count()) === 1, "only the damaged thread is marked");
    await page.locator(`${tid("thread-row")}[data-thread="chat-tools"]`).click();
    await page.waitForSelector(tid("dag-row"));
    // An older checkpoint whose writes include a message.
    await page.keyboard.press("j");
    await page.locator(tid("tab-writes")).click();
    await page.locator(tid("write")).first().waitFor();
    const rowsText = await page.locator(tid("writes-panel")).textContent();
    expect(rowsText.includes("⚠"), "the undecodable write is marked");
    await page.locator(tid("write")).filter({ hasText: "⚠" }).first().click();
    await page.locator(tid("decode-error")).first().waitFor();
    await shot("decode-error.png");
    await page.locator(tid("tab-state")).click();
    await page.locator(tid("chat")).first().waitFor();
    // The damaged older checkpoint: a banner over the DAG, a badge on its row, the reason above
    // its detail; its neighbours still read.
    await page.locator(tid("graph-unreadable")).waitFor();
    const bad = page.locator(`${tid("dag-row")}[data-id="${damagedIds.older}"]`);
    await bad.locator(tid("row-problem")).waitFor();
    expect((await page.locator(tid("row-problem")).count()) === 1, "only the damaged checkpoint is marked");
    await bad.click();
    const why = await page.locator(tid("checkpoint-problem")).textContent();
    expect(why.includes("Not read in full"), `the reason is shown: ${why}`);
    expect((await page.locator(tid("repair-open")).count()) === 0, "no Repair from writes on LangGraph's schema");
    await shot("damaged-checkpoint.png");
    await page.keyboard.press("j");
    await page.locator(tid("checkpoint-problem")).waitFor({ state: "detached" });
  },
};
