// A database written by LangGraph.js (issue 16: tests/js-fixtures/langgraphjs.sqlite, the
// SqliteSaver's `json` rows): the same screens as for a Python one — the thread list and its
// statuses, the state view's chat bubbles and tool calls, the interrupt banner — and a fork from
// the UI written in JS's format, whose toast says how LangGraph.js resumes it.
//
// A group of its own: it opens a copy of the JS fixture (fixtures.mjs: jsDb), forks into that
// copy only, and leaves the page on the served Python copy again, as it found it. The names
// all hold "langgraphjs" (`--only langgraphjs`).

import { spawnSync } from "node:child_process";
import { expect, tid } from "./harness.mjs";

const JS_THREADS = ["chat-tools", "forked", "interrupt-resumed", "interrupt-waiting", "send-fanout", "subgraph"];
const row = (id) => `${tid("thread-row")}[data-thread="${id}"]`;
const head = (page) => page.locator(`${tid("dag-row")}[data-head="true"]`);

/** A thread row's badges (class and text) and its inbox question, as the list draws them. */
const rowLook = (page, id) =>
  page.locator(row(id)).evaluate((r) => ({
    badges: [...r.querySelectorAll(".badge")].map((b) => `${b.className.replace(/\s*svelte-\w+/g, "")}|${b.textContent.trim()}`),
    asks: r.querySelector('[data-testid="interrupt-text"]')?.textContent?.replace(/\s+/g, " ").trim() ?? null,
  }));

/** The state view's chat bubbles: role, text, tool calls, answered call id, and the message type. */
const bubbles = (page) =>
  page.locator(tid("chat-message")).evaluateAll((ms) =>
    ms.map((m) => ({
      role: m.dataset.role,
      text: m.querySelector('[data-testid="chat-text"]')?.textContent ?? null,
      calls: [...m.querySelectorAll('[data-testid="tool-call"]')].map((c) => c.textContent.replace(/\s+/g, " ").trim()),
      answers: [...m.querySelectorAll(".meta .mono")].map((s) => s.textContent.trim()).find((s) => s.startsWith("↩")) ?? null,
      type: m.querySelector(".meta button")?.getAttribute("title") ?? null,
    })),
  );

/** Opens the JS copy unless it is open (a failed check leaves the page on the served copy). */
async function onJs({ page, openDb, jsDb }) {
  const crumb = page.locator(tid("crumb-db"));
  if ((await crumb.count()) && (await crumb.getAttribute("title")) === jsDb) return;
  await openDb(jsDb);
}

/** `flashback state DB THREAD --json` (the latest checkpoint, or `--checkpoint ID`). */
function stateJson(bin, db, thread, checkpoint) {
  const args = ["state", db, thread, "--json", ...(checkpoint ? ["--checkpoint", checkpoint] : [])];
  const r = spawnSync(bin, args, { encoding: "utf8" });
  expect(r.status === 0, `flashback ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export const threadList = {
  name: "langgraphjs: a LangGraph.js database lists its six threads, interrupt-waiting marked interrupted as in a Python one",
  run: async ({ page, openDb, db, jsDb }) => {
    // What the Python copy's waiting thread looks like in the list, to compare with.
    await openDb(db);
    const py = await rowLook(page, "interrupt-waiting");
    expect(py.badges.includes("badge interrupted|interrupted"), `the Python row: ${JSON.stringify(py)}`);

    await openDb(jsDb);
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="thread-row"]').length === n, JS_THREADS.length);
    const ids = await page.locator(tid("thread-row")).evaluateAll((rs) => rs.map((r) => r.dataset.thread).sort());
    expect(JSON.stringify(ids) === JSON.stringify(JS_THREADS), `the JS threads: ${ids.join(", ")}`);
    expect((await page.locator(tid("thread-problem")).count()) === 0, "no thread is marked unreadable");

    const js = await rowLook(page, "interrupt-waiting");
    expect(JSON.stringify(js.badges) === JSON.stringify(py.badges), `the same badges as Python's: ${JSON.stringify(js.badges)} vs ${JSON.stringify(py.badges)}`);
    expect(js.asks === "asks Approve this draft? (draft)", `the question in the list, then the value's other keys: ${js.asks}`);
    expect(/^asks .+ \(draft\)$/.test(py.asks ?? ""), `as the Python row shows its question: ${py.asks}`);
    for (const id of JS_THREADS.filter((t) => t !== "interrupt-waiting")) {
      const look = await rowLook(page, id);
      expect(look.badges.some((b) => b === "badge finished|finished") && !look.asks, `${id}: ${JSON.stringify(look)}`);
    }
    // The inbox filter finds it, as it finds Python's.
    await page.locator(tid("filter-interrupted")).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="thread-row"]').length === 1);
    expect((await page.locator(tid("thread-row")).getAttribute("data-thread")) === "interrupt-waiting", "the inbox holds interrupt-waiting");
    await page.locator(tid("filter-all")).click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="thread-row"]').length === n, JS_THREADS.length);
  },
};

export const chat = {
  name: "langgraphjs: chat-tools' state renders as a chat: human, AI with its add and multiply tool calls, the tool results, the answer",
  run: async (t) => {
    const { page, shot, openThread, dagRows } = t;
    await onJs(t);
    await openThread("chat-tools");
    expect((await dagRows()) === 8, `8 checkpoints (${await dagRows()})`);
    await page.locator(tid("chat")).first().waitFor();
    // The selectors of the Python check (thread-detail.mjs: chatBubble).
    const texts = await page.locator(tid("chat-text")).allTextContents();
    expect(texts.some((t) => t.includes("What is 2 + 3 and 4 * 5?")), `the human message: ${JSON.stringify(texts)}`);
    expect(texts.some((t) => t.trim() === "2 + 3 = 5 and 4 * 5 = 20."), `the final answer: ${JSON.stringify(texts)}`);
    const calls = await page.locator(tid("tool-call")).allTextContents();
    expect(calls.length === 2, `two tool calls: ${JSON.stringify(calls)}`);
    expect(calls[0].includes("add(") && calls[0].includes('{"a":2,"b":3}') && calls[0].includes("call_add"), `add: ${calls[0]}`);
    expect(calls[1].includes("multiply(") && calls[1].includes('{"a":4,"b":5}') && calls[1].includes("call_mul"), `multiply: ${calls[1]}`);

    // Bubble by bubble: the roles, the tool results paired with their calls, Python's class names.
    const b = await bubbles(page);
    const roles = b.map((m) => m.role).join(",");
    expect(roles === "human,ai,tool,tool,ai,human,ai", `the roles: ${roles}`);
    expect(b[1].calls.length === 2 && !b[1].text, `the AI turn holds the calls and no text: ${JSON.stringify(b[1])}`);
    expect(b[2].text === "5" && b[2].answers === "↩ call_add", `add's result: ${JSON.stringify(b[2])}`);
    expect(b[3].text === "20" && b[3].answers === "↩ call_mul", `multiply's result: ${JSON.stringify(b[3])}`);
    expect(b[4].text === "2 + 3 = 5 and 4 * 5 = 20." && b[4].calls.length === 0, `the answer: ${JSON.stringify(b[4])}`);
    const types = [...new Set(b.map((m) => m.type))].sort().join(", ");
    expect(
      types === "langchain_core.messages.ai.AIMessage, langchain_core.messages.human.HumanMessage, langchain_core.messages.tool.ToolMessage",
      `the message types: ${types}`,
    );
    expect((await page.locator(`${tid("state-panel")} .badge.failed`).count()) === 0, "nothing undecodable");
    expect((await page.locator(tid("panel-error")).count()) === 0, "no panel failed");
    // The rows name the nodes that ran (JS stores no task path: from the writes' task ids).
    const ran = (await page.locator(tid("dag-ran")).allTextContents()).map((s) => s.trim());
    expect(ran.includes("agent") && ran.includes("tools"), `nodes that ran: ${JSON.stringify(ran)}`);
    // The answer's usage_metadata counts as the step's tokens, as for Python.
    const tokens = await page.locator(tid("dag-tokens")).allTextContents();
    expect(tokens.map((s) => s.trim()).includes("54 tok"), `tokens per step: ${JSON.stringify(tokens)}`);
    // A JS database's values are JSON, not Python: the ⋯ menu offers JSON only.
    const card = `${tid("channel")}[data-channel="messages"]`;
    await page.locator(`${card} ${tid("channel-more")}`).click();
    const offered = await page.locator(`${card} ${tid("channel-more-menu")} [role="menuitem"]`).evaluateAll((bs) => bs.map((b) => b.dataset.testid));
    expect(offered.includes("copy-json") && !offered.includes("copy-python"), `no copy Python for JS: ${offered.join(", ")}`);
    await page.keyboard.press("Escape");
    await page.locator(`${card} ${tid("channel-more-menu")}`).waitFor({ state: "detached" });
    await page.locator(tid("chat")).first().scrollIntoViewIfNeeded();
    await shot("langgraphjs-chat.png");
  },
};

export const interrupt = {
  name: "langgraphjs: interrupt-waiting shows the interrupt banner with its question",
  run: async (t) => {
    const { page, out, openThread } = t;
    await onJs(t);
    await openThread("interrupt-waiting");
    const banner = page.locator(tid("interrupt-banner"));
    await banner.waitFor();
    const questions = await banner.locator(tid("interrupt-question")).allTextContents();
    expect(questions.length === 1, `one interrupt: ${JSON.stringify(questions)}`);
    expect(questions[0].includes("Approve this draft?") && questions[0].includes("review"), `the question and its node: ${questions[0]}`);
    expect((await banner.textContent()).includes("Waiting for input"), "the head waits");
    // Its DAG row is marked as Python's waiting head is.
    await head(page).locator(`${tid("dag-mark")}[data-mark="interrupted"]`).waitFor();
    const next = await page.locator(tid("channel")).evaluateAll((cs) => cs.map((c) => c.dataset.channel));
    expect(["draft", "due", "log"].every((c) => next.includes(c)), `the state's channels: ${next.join(", ")}`);
    await page.screenshot({ path: `${out}/langgraphjs-interrupt.png` });
  },
};

export const fork = {
  name: "langgraphjs: a copy fork from the UI is written in JS's format and its toast says how LangGraph.js resumes it",
  run: async (t) => {
    const { page, openDb, openThread, dagRows, selectedId, bin, db, jsDb } = t;
    await onJs(t);
    await openThread("chat-tools");
    const before = await dagRows();
    // Back to the checkpoint after the first tools step (human, AI, two tool results).
    for (let i = 0; i < 7; i++) {
      const roles = (await bubbles(page)).map((m) => m.role).join(",");
      if (roles === "human,ai,tool,tool") break;
      const prev = await selectedId();
      await page.keyboard.press("j");
      await page.waitForFunction((p) => document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() !== p, prev);
      // The detail of the newly selected checkpoint (not the one before) is what the chat shows.
      await page.waitForFunction(() => {
        const pane = document.querySelector('[data-testid="detail-pane"]');
        const id = document.querySelector('[data-testid="selected-id"]')?.textContent?.trim() ?? "";
        return !!pane && !!id && (pane.getAttribute("data-checkpoint") ?? "").endsWith(id.slice(-4));
      });
      await page.locator(tid("chat")).first().waitFor();
    }
    const source = await selectedId();
    const sourceBubbles = await bubbles(page);
    expect(sourceBubbles.map((m) => m.role).join(",") === "human,ai,tool,tool", `the checkpoint after the tools step: ${JSON.stringify(sourceBubbles)}`);

    await page.locator(tid("fork-here")).click();
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="dag"]')?.dataset.rows) === n, before + 1);
    const toast = page.locator(tid("toast-ok")).filter({ hasText: "LangGraph.js" });
    await toast.waitFor();
    const said = (await toast.textContent()).replace(/\s*×\s*$/, "");
    expect(said.includes("Resume it in LangGraph.js with graph.invoke(null, { configurable: { thread_id: \"chat-tools\" } })"), `the toast: ${said}`);
    expect(!said.includes("invoke(None"), `no Python in the toast: ${said}`);
    expect((await head(page).locator(tid("branch-label")).getAttribute("data-action")) === "copy_fork", "the new head is Flashback's copy fork");
    const forkId = await head(page).getAttribute("data-id");
    expect((await selectedId()) === forkId, "the fork is selected");
    // The fork shows the same chat as its source.
    await page.locator(tid("chat")).first().waitFor();
    const after = await bubbles(page);
    expect(JSON.stringify(after) === JSON.stringify(sourceBubbles), `the fork's chat: ${JSON.stringify(after)}`);

    // Stored in JS's format (SqliteSaver: type 'json', integer versions, an ISO `ts` with Z), and
    // read back with its source's values.
    const row = spawnSync(
      "python3",
      [
        "-c",
        `import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t, ck, md, parent = c.execute("SELECT type, checkpoint, metadata, parent_checkpoint_id FROM checkpoints WHERE thread_id = 'chat-tools' AND checkpoint_ns = '' AND checkpoint_id = ?", (sys.argv[2],)).fetchone()
ck = json.loads(bytes(ck).decode())
print(json.dumps({"type": t, "parent": parent, "ts": ck["ts"], "versions": list(ck["channel_versions"].values()), "messages": len(ck["channel_values"].get("messages", [])), "lc": ck["channel_values"]["messages"][1].get("lc"), "source": json.loads(bytes(md).decode())["source"]}))`,
        jsDb,
        forkId,
      ],
      { encoding: "utf8" },
    );
    expect(row.status === 0, `reading the fork's row: ${row.stderr}`);
    const stored = JSON.parse(row.stdout);
    expect(stored.type === "json" && stored.lc === 1 && stored.messages === 4, `a JS row with lc message envelopes: ${row.stdout}`);
    expect(stored.versions.every((v) => Number.isInteger(v)), `integer channel versions: ${JSON.stringify(stored.versions)}`);
    expect(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(stored.ts), `an ISO ts: ${stored.ts}`);
    const a = stateJson(bin, jsDb, "chat-tools", source).values.messages;
    const b = stateJson(bin, jsDb, "chat-tools").values.messages;
    expect(JSON.stringify(a) === JSON.stringify(b), "the fork reads back with its source's messages");
    // Back to the served Python copy, where the next checks expect the page.
    await openDb(db);
  },
};
