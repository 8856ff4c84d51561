import { describe, expect, it } from "vitest";
import type { Task, TaskSet, Value } from "../ipc/bindings";
import { parseResume, resumeTemplate, waitingInterrupts, serverRuns } from "./resume";

const task = (over: Partial<Task>): Task => ({
  id: "t1",
  name: "ask",
  kind: "pull",
  path: ["__pregel_pull", "ask"],
  triggers: [],
  checkpoint_ns: "",
  error: null,
  interrupts: [],
  state: null,
  writes: [],
  finished: false,
  status: "pending",
  send_arg: null,
  ...over,
});

const set = (tasks: Task[]): TaskSet => ({
  checkpoint_id: "c",
  checkpoint_ns: "",
  step: 3,
  next: tasks.map((t) => t.name),
  tasks,
  unmatched_task_ids: [],
  warnings: [],
});

const interrupt = (value: Value, id = "i1"): Value => ({ $type: "langgraph.types.Interrupt", value, id });

describe("waitingInterrupts", () => {
  it("reads the question of an interrupted task, unwrapping the Interrupt", () => {
    const w = waitingInterrupts(set([task({ status: "interrupted", interrupts: [interrupt("Approve the plan?")] })]));
    expect(w).toEqual([{ node: "ask", task: "t1", id: "i1", value: "Approve the plan?", question: "Approve the plan?" }]);
  });

  it("takes a text field of a structured value, else its JSON (clipped)", () => {
    const [a] = waitingInterrupts(
      set([task({ status: "interrupted", interrupts: [interrupt({ question: "Which city?", options: ["A", "B"] })] })]),
    );
    expect(a.question).toBe("Which city?");
    const [b] = waitingInterrupts(set([task({ status: "interrupted", interrupts: [interrupt({ n: 1 })] })]));
    expect(b.question).toBe('{"n":1}');
    const [c] = waitingInterrupts(set([task({ status: "interrupted", interrupts: [interrupt("x".repeat(1000))] })]));
    expect(c.question.length).toBe(1000);
    const [d] = waitingInterrupts(set([task({ status: "interrupted", interrupts: [interrupt({ big: "x".repeat(1000) })] })]));
    expect(d.question.length).toBe(401);
  });

  it("skips tasks that finished or did not stop on an interrupt", () => {
    const done = task({ status: "done", finished: true, interrupts: [interrupt("old")] });
    const pending = task({ id: "t2", name: "other" });
    expect(waitingInterrupts(set([done, pending]))).toEqual([]);
    expect(waitingInterrupts(null)).toEqual([]);
  });

  it("keeps a raw value that is not an Interrupt", () => {
    const [w] = waitingInterrupts(set([task({ status: "interrupted", interrupts: ["plain"] })]));
    expect(w).toMatchObject({ id: null, value: "plain", question: "plain" });
  });
});

describe("resumeTemplate", () => {
  it("is empty for one interrupt and an id map for several", () => {
    const one = waitingInterrupts(set([task({ status: "interrupted", interrupts: [interrupt("q")] })]));
    expect(resumeTemplate(one)).toBe("");
    const two = waitingInterrupts(
      set([
        task({ status: "interrupted", interrupts: [interrupt("q1", "a")] }),
        task({ id: "t2", status: "interrupted", interrupts: [interrupt("q2", "b")] }),
      ]),
    );
    expect(JSON.parse(resumeTemplate(two))).toEqual({ a: null, b: null });
  });
});

describe("parseResume", () => {
  it("reads JSON; empty is no value", () => {
    expect(parseResume("")).toEqual({ ok: true, value: null });
    expect(parseResume(' {"ok": true} ')).toEqual({ ok: true, value: { ok: true } });
    expect(parseResume('"yes"')).toEqual({ ok: true, value: "yes" });
    expect(parseResume("42")).toEqual({ ok: true, value: 42 });
  });

  it("refuses a bare word, saying how to quote it", () => {
    const r = parseResume("yes please");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain('"yes please"');
    expect(parseResume("{oops").ok).toBe(false);
  });
});

describe("serverRuns", () => {
  it("is true only for an Agent Server session", () => {
    expect(serverRuns("agentserver")).toBe(true);
    expect(serverRuns("sqlite")).toBe(false);
    expect(serverRuns(undefined)).toBe(false);
  });
});

describe("waitingInterrupts on an Agent Server", () => {
  it("reads the API's {value, id} interrupts", () => {
    const set = { tasks: [{ name: "approve", status: "interrupted", finished: false, interrupts: [{ value: { question: "ok?" }, id: "i1" }] }] } as unknown as TaskSet;
    expect(waitingInterrupts(set)).toEqual([{ node: "approve", id: "i1", value: { question: "ok?" }, question: "ok?" }]);
  });
});
