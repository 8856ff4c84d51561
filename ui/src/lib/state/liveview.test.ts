import { describe, expect, it } from "vitest";
import type { Task, TaskSet } from "../ipc/bindings";
import { row } from "../graph/testrows";
import { appliedNodes, openingRow, statusText, viewNote, waitsInside } from "./liveview";

describe("viewNote", () => {
  it("live: as get_state shows it now, naming the nodes whose writes it applied", () => {
    const note = viewNote({
      live: true,
      applied: [
        { task_id: "a", node: "tools", channels: ["messages"] },
        { task_id: "b", node: "tools", channels: ["messages"] },
        { task_id: "0", node: null, channels: ["todos"] },
      ],
    });
    expect(note).toEqual({ kind: "live", label: "live", text: "as get_state shows it now — includes the writes of finished tasks: tools ×2, input / update_state" });
    expect(viewNote({ live: true, applied: [] }).text).toBe("as get_state shows it now");
    expect(viewNote({ live: true }).text).toBe("as get_state shows it now");
  });

  it("step record otherwise", () => {
    expect(viewNote({ live: false, applied: [] })).toMatchObject({ kind: "step", label: "step record" });
  });
});

describe("appliedNodes", () => {
  it("counts repeats in first-seen order", () => {
    expect(appliedNodes([{ task_id: "1", node: "model", channels: [] }, { task_id: "2", node: "tools", channels: [] }, { task_id: "3", node: "model", channels: [] }])).toEqual([
      "model ×2",
      "tools",
    ]);
    expect(appliedNodes([])).toEqual([]);
  });
});

describe("statusText", () => {
  it("says each status", () => {
    expect(["interrupted", "failed", "finished", "pending"].map((s) => statusText(s as never))).toEqual([
      "waiting for a human",
      "failed",
      "finished",
      "pending",
    ]);
  });
});

describe("openingRow", () => {
  it("is the thread's head, not a newer sub-agent checkpoint", () => {
    expect(openingRow([row("s9", 1, { ns: "tools:1", ns_head: true }), row("c3", 0, { head: true, ns_head: true }), row("c2", 0)])).toBe(1);
    expect(openingRow([row("c1", 0), row("c0", 0)])).toBe(0);
    expect(openingRow([])).toBe(-1);
  });
});

const task = (over: Partial<Task>): Task => ({
  id: "t1",
  name: "tools",
  kind: "push",
  path: [],
  triggers: [],
  checkpoint_ns: "tools:t1",
  error: null,
  interrupts: [],
  state: null,
  writes: [],
  finished: false,
  status: "interrupted",
  send_arg: null,
  ...over,
});
const set = (tasks: Task[]): TaskSet => ({ checkpoint_id: "c", checkpoint_ns: "", step: 2, next: [], tasks, unmatched_task_ids: [], warnings: [] });

describe("waitsInside", () => {
  const rows = [
    row("deep", 2, { ns: "tools:t1|tools:u7", ns_head: true, marks: ["interrupted"] }),
    row("sub", 1, { ns: "tools:t1", ns_head: true, marks: ["interrupted"] }),
    row("old", 1, { ns: "tools:t1", marks: ["interrupted"] }),
    row("c3", 0, { head: true, ns_head: true }),
  ];

  it("finds the deepest waiting checkpoint under the task's subgraph", () => {
    expect(waitsInside(set([task({ state: "tools:t1" })]), rows)).toEqual([{ node: "tools", ns: "tools:t1", at: { ns: "tools:t1|tools:u7", id: "deep" } }]);
  });

  it("falls back to the subgraph's latest checkpoint, or none when its rows are folded away", () => {
    const quiet = rows.map((r) => ({ ...r, marks: [] }));
    expect(waitsInside(set([task({ state: "tools:t1" })]), quiet)[0].at).toEqual({ ns: "tools:t1", id: "sub" });
    expect(waitsInside(set([task({ state: "tools:t1" })]), [])[0].at).toBeNull();
  });

  it("ignores tasks that finished, do not wait or ran no subgraph", () => {
    const tasks = set([task({ state: null }), task({ state: "tools:t1", finished: true, status: "done" }), task({ state: "x:1", status: "failed" })]);
    expect(waitsInside(tasks, rows)).toEqual([]);
    expect(waitsInside(null, rows)).toEqual([]);
  });
});
