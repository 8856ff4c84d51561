import { describe, expect, it } from "vitest";
import type { ThreadActivity } from "../ipc/bindings";
import { ACTIVITY_BATCH, retriedTitle, ThreadActivities } from "./activity.svelte";

const used = { input: 900, output: 100, total: 1000, messages: 2, cached: 0, reasoning: 0 };

function fake(recovered: Record<string, string[]> = {}) {
  const calls: string[][] = [];
  const load = async (ids: string[]): Promise<ThreadActivity[]> => {
    calls.push(ids);
    return ids.map((thread_id) => ({ thread_id, recovered: recovered[thread_id] ?? [], problem: null, tokens: thread_id === "ok" ? used : null }));
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
