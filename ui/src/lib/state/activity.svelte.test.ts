import { describe, expect, it } from "vitest";
import type { ThreadActivity } from "../ipc/bindings";
import { ACTIVITY_BATCH, retriedTitle, ThreadActivities } from "./activity.svelte";

const used = { input: 900, output: 100, total: 1000, messages: 2, cached: 0, reasoning: 0 };

function fake(recovered: Record<string, string[]> = {}) {
  const calls: string[][] = [];
  const load = async (ids: string[]): Promise<ThreadActivity[]> => {
    calls.push(ids);
    return ids.map((thread_id) => ({ thread_id, recovered: recovered[thread_id] ?? [], nodes: [`n-${thread_id}`], problem: null, tokens: thread_id === "ok" ? used : null }));
  };
  return { calls, load };
}

describe("ThreadActivities", () => {
  it("looks up each thread in view once", async () => {
    const f = fake({ "flaky-1": ["flaky"] });
    const a = new ThreadActivities(f.load, 0);
    a.want(["flaky-1", "ok"]);
    a.want(["ok", "other"]);
    await a.flush();
    expect(f.calls).toEqual([["flaky-1", "ok", "other"]]);
    expect(a.recovered.get("flaky-1")).toEqual(["flaky"]);
    expect(a.recovered.get("ok")).toEqual([]);
    // The tokens column's numbers come with it.
    expect(a.tokens.get("ok")).toEqual(used);
    expect(a.tokens.get("flaky-1")).toBeNull();
    expect(a.tokens.has("unseen")).toBe(false);
    a.want(["flaky-1", "ok"]);
    await a.flush();
    expect(f.calls.length).toBe(1);
  });

  it("asks at most a batch at a time", async () => {
    const f = fake();
    const a = new ThreadActivities(f.load, 0);
    a.want(Array.from({ length: ACTIVITY_BATCH + 20 }, (_, i) => `t${i}`));
    await a.flush();
    expect(f.calls[0].length).toBe(ACTIVITY_BATCH);
  });

  it("looks up every thread for a search, a batch at a time, the nodes that ran with it", async () => {
    const f = fake();
    const a = new ThreadActivities(f.load, 0);
    a.want(["t0"]);
    await a.flush();
    const all = Array.from({ length: ACTIVITY_BATCH + 20 }, (_, i) => `t${i}`);
    const done = a.wantAll(all);
    // Asked for again meanwhile: queued once.
    void a.wantAll(all);
    await done;
    expect(f.calls.map((c) => c.length)).toEqual([1, ACTIVITY_BATCH, 19]);
    expect(a.nodes.get(`t${ACTIVITY_BATCH + 19}`)).toEqual([`n-t${ACTIVITY_BATCH + 19}`]);
    expect(a.backlog).toBe(0);
    await a.wantAll(all);
    expect(f.calls.length).toBe(3);
  });

  it("stops looking up every thread when the list is reloaded", async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const a = new ThreadActivities(async (ids) => {
      calls.push(ids);
      await new Promise<void>((r) => (release = r));
      return ids.map((thread_id) => ({ thread_id, recovered: [], nodes: ["x"], problem: null, tokens: null }));
    }, 0);
    const done = a.wantAll(Array.from({ length: ACTIVITY_BATCH * 2 }, (_, i) => `t${i}`));
    a.reset();
    release();
    await done;
    expect(calls.length).toBe(1);
    expect(a.nodes.size).toBe(0);
    expect(a.backlog).toBe(0);
  });

  it("asks again after a failure, and forgets everything on reset", async () => {
    let fail = true;
    const a = new ThreadActivities(async (ids) => {
      if (fail) throw new Error("offline");
      return ids.map((thread_id) => ({ thread_id, recovered: ["n"], problem: null, tokens: null }));
    }, 0);
    a.want(["x"]);
    await a.flush();
    expect(a.recovered.has("x")).toBe(false);
    fail = false;
    a.want(["x"]);
    await a.flush();
    expect(a.recovered.get("x")).toEqual(["n"]);
    a.reset();
    expect(a.recovered.size).toBe(0);
  });

  it("drops an answer to a list that was reloaded meanwhile", async () => {
    let release!: () => void;
    const a = new ThreadActivities(
      (ids) => new Promise((res) => (release = () => res(ids.map((thread_id) => ({ thread_id, recovered: ["n"], problem: null, tokens: null }))))),
      0,
    );
    a.want(["x"]);
    const pending = a.flush();
    a.reset();
    release();
    await pending;
    expect(a.recovered.size).toBe(0);
  });
});

describe("retriedTitle", () => {
  it("names the nodes once", () => {
    expect(retriedTitle(["flaky"])).toBe("Raised, then recovered on retry: a task (flaky) failed on the way and finished when run again");
    expect(retriedTitle(["a", "a", "b"])).toContain("3 tasks (a, b)");
  });
});
