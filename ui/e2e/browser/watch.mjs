// Watch a key (issue 13 item 10): from the state view, every checkpoint where a value changed,
// along every branch, with the node whose write produced it; a click and prev/next select the
// checkpoint in the detail pane.

import { expect, tid } from "./harness.mjs";

const channel = (name) => `${tid("channel")}[data-channel="${name}"]`;

export const watchKey = {
  name: "watch a key: the checkpoints where a value changed and who wrote it; click and prev/next select them",
  run: async ({ page, shot, openThread, channelAction }) => {
    await openThread("chat-tools");
    await channelAction("messages", "watch-channel");
    const panel = page.locator(tid("watch-panel"));
    const entries = panel.locator(tid("watch-entry"));
    await entries.first().waitFor();
    expect((await panel.getAttribute("data-path")) === "messages", `the path: ${await panel.getAttribute("data-path")}`);
    const n = await entries.count();
    expect(n === 8, `one entry per message added (${n})`);
    const by = await panel.locator(tid("watch-by")).allTextContents();
    for (const node of ["__start__", "agent", "tools"]) expect(by.includes(node), `${node} among ${by.join(", ")}`);

    // A click selects that checkpoint; the entry is marked as the current one.
    const pane = (id) => page.locator(`${tid("detail-pane")}[data-checkpoint="${id}"]`);
    const idOf = (i) => entries.nth(i).getAttribute("data-checkpoint");
    const current = async () => panel.locator(`${tid("watch-entry")}.current`).getAttribute("data-checkpoint");
    await entries.nth(2).click();
    await pane(await idOf(2)).waitFor();
    expect((await current()) === (await idOf(2)), "the clicked change is the current one");
    // Next and prev go from change to change.
    await panel.locator(tid("watch-next")).click();
    await pane(await idOf(3)).waitFor();
    await panel.locator(tid("watch-prev")).click();
    await panel.locator(tid("watch-prev")).click();
    await pane(await idOf(1)).waitFor();
    expect((await current()) === (await idOf(1)), "prev moved the current change");
    await shot("watch-key.png");

    // A value inside a channel (a node of its tree), on a thread with branches.
    await openThread("forked");
    const logItem = page.locator(`${channel("log")} ${tid("value-tree")} .line`).first();
    await logItem.hover();
    await logItem.locator(tid("watch-key")).click();
    await panel.locator(tid("watch-entry")).first().waitFor();
    expect((await panel.getAttribute("data-path")) === "log[0]", `the node's path: ${await panel.getAttribute("data-path")}`);
    expect((await panel.locator(tid("watch-by")).first().textContent()).trim() === "__start__", "the input wrote the first item");
    // The whole channel `value`, on every branch or on the head's only.
    await channelAction("value", "watch-channel");
    await page.locator(`${tid("watch-panel")}[data-path="value"]`).waitFor();
    await panel.locator(tid("watch-entry")).first().waitFor();
    const all = await panel.locator(tid("watch-entry")).count();
    // Along lineage, not time: the selected branch's line from the root first, then each other
    // branch under its name (where it forks), steps rising within each.
    const groups = await panel.locator(tid("watch-group")).evaluateAll((gs) => gs.map((g) => ({ line: g.dataset.line, text: g.textContent })));
    expect(groups.length >= 2 && groups[0].line === "true", `the line, then branches: ${JSON.stringify(groups)}`);
    expect(groups.slice(1).every((g) => g.line === "false" && /forks at step \d+/.test(g.text)), `each branch says where it forks: ${JSON.stringify(groups)}`);
    const runs = await panel.locator(`${tid("watch-list")} > li`).evaluateAll((lis) => {
      const out = [];
      for (const li of lis) {
        if (li.dataset.testid === "watch-group") out.push([]);
        else out[out.length - 1].push(Number(li.querySelector('[data-testid="watch-entry"]').dataset.step));
      }
      return out;
    });
    expect(runs.every((r) => r.every((s, i) => i === 0 || s >= r[i - 1])), `steps rise within each group: ${JSON.stringify(runs)}`);
    await shot("watch-branches.png");
    // On another branch, the list reads along that branch's line.
    const other = await panel.locator(tid("watch-entry")).last().getAttribute("data-checkpoint");
    await panel.locator(tid("watch-entry")).last().click();
    await pane(other).waitFor();
    await panel.locator(tid("watch-reload")).click();
    await panel.locator(tid("watch-group-name")).first().getByText("Selected branch").waitFor();
    const firstGroup = await panel.locator(`${tid("watch-list")} > li`).evaluateAll((lis) => {
      const ids = [];
      for (const li of lis.slice(1)) {
        if (li.dataset.testid === "watch-group") break;
        ids.push(li.querySelector('[data-testid="watch-entry"]').dataset.checkpoint);
      }
      return ids;
    });
    expect(firstGroup.includes(other), `the selected change is on the line listed first (${firstGroup})`);
    await panel.locator(tid("watch-head-only")).check();
    const mine = await panel.locator(tid("watch-entry")).count();
    expect(all >= 6 && mine < all, `every branch (${all}), the head's only (${mine})`);
    await panel.locator(tid("watch-entry")).last().click();
    await pane(await panel.locator(tid("watch-entry")).last().getAttribute("data-checkpoint")).waitFor();
    await panel.locator(tid("watch-close")).click();
    await panel.waitFor({ state: "detached" });
  },
};
