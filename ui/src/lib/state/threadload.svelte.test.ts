import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ThreadSummary, ThreadsRequest } from "../ipc/bindings";
import { FIRST_PAGE, isCapped, LIST_MAX, loadRequest, partialNote, progressText, ThreadListLoad } from "./threadload.svelte";

const t = (id: string): ThreadSummary => ({
  thread_id: id,
  namespaces: [""],
  checkpoint_count: 1,
  latest_checkpoint_id: null,
  latest_ts: null,
  latest_step: null,
  status: "finished",
  interrupts: [],
  error: null,
  next: [],
  problem: null,
  locked: false,
});
const many = (n: number) => Array.from({ length: n }, (_, i) => t(`t${i}`));

/** A list call whose answers the test releases one by one. */
function pending() {
  const asked: ThreadsRequest[] = [];
  const answers: ((list: ThreadSummary[]) => void)[] = [];
  const list = (req: ThreadsRequest) => {
    asked.push(req);
    return new Promise<ThreadSummary[]>((done) => answers.push(done));
  };
  return { asked, answers, list };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("the thread list's requests", () => {
  it("asks for a first page, then at most LIST_MAX threads — never the whole list", () => {
    expect(loadRequest("db1", "first")).toEqual({ db: "db1", limit: FIRST_PAGE });
    expect(loadRequest("db1", "rest")).toEqual({ db: "db1", limit: LIST_MAX });
    expect(loadRequest("db1", "rest", 500).limit).toBe(500);
    expect(isCapped(many(499), 500)).toBe(false);
    expect(isCapped(many(500), 500)).toBe(true);
  });

  it("says what it reads, and for how long", () => {
    expect(progressText("first", 0.4)).toBe("Reading the most recently active threads…");
    expect(progressText("first", 3.7)).toBe("Reading the most recently active threads… 3 s");
    expect(progressText("rest", 12)).toBe("Loading all threads… 12 s");
  });

  it("notes a list that is not every thread", () => {
    const s = { capped: false, partial: false, stopped: false };
    expect(partialNote(1200, s)).toBeNull();
    expect(partialNote(200, { ...s, partial: true })).toBe("Showing the 200 most recently active threads; loading all threads…");
    expect(partialNote(200, { ...s, partial: true, stopped: true })).toContain("(loading all threads was stopped)");
    expect(partialNote(100_000, { ...s, capped: true })).toBe(
      "Showing the 100,000 most recently active threads; find older ones with the filter bar (metadata, time).",
    );
  });
});

describe("ThreadListLoad", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] }));
  afterEach(() => vi.useRealTimers());

  it("shows the first page, then the rest, bounded", async () => {
    const p = pending();
    const load = new ThreadListLoad(p.list, 1000);
    const phases: string[] = [];
    const done = load.load("db", (_, phase) => phases.push(phase), () => {});
    expect(load.phase).toBe("first");
    p.answers[0](many(FIRST_PAGE));
    await tick();
    expect(load.threads?.length).toBe(FIRST_PAGE);
    expect(load.partial).toBe(true);
    expect(load.phase).toBe("rest");
    expect(p.asked[1]).toEqual({ db: "db", limit: 1000 });
    p.answers[1](many(1000));
    await done;
    expect(phases).toEqual(["first", "rest"]);
    expect(load.threads?.length).toBe(1000);
    expect(load.partial).toBe(false);
    expect(load.capped).toBe(true);
    expect(load.phase).toBeNull();
  });

  it("asks once when the first page holds every thread", async () => {
    const p = pending();
    const load = new ThreadListLoad(p.list);
    const done = load.load("db", () => {}, () => {});
    p.answers[0](many(12));
    await done;
    expect(p.asked.length).toBe(1);
    expect(load.threads?.length).toBe(12);
    expect(load.partial || load.capped).toBe(false);
  });

  it("counts the seconds of a slow read, and stops waiting for it", async () => {
    const p = pending();
    const load = new ThreadListLoad(p.list);
    const applied: string[] = [];
    const done = load.load("db", (_, phase) => applied.push(phase), () => {});
    vi.advanceTimersByTime(3000);
    expect(load.seconds).toBeGreaterThanOrEqual(3);
    load.stop();
    expect(load.phase).toBeNull();
    expect(load.stopped).toBe(true);
    // The answer that comes after is dropped: nothing shown, no second read.
    p.answers[0](many(FIRST_PAGE));
    await done;
    expect(load.threads).toBeNull();
    expect(applied).toEqual([]);
    expect(p.asked.length).toBe(1);
    vi.advanceTimersByTime(5000);
    expect(load.seconds).toBeLessThan(4);
  });

  it("keeps the first page when loading the rest is stopped, and loads it again on demand", async () => {
    const p = pending();
    const load = new ThreadListLoad(p.list);
    const first = load.load("db", () => {}, () => {});
    p.answers[0](many(FIRST_PAGE));
    await tick();
    load.stop();
    p.answers[1](many(5000));
    await first;
    expect(load.threads?.length).toBe(FIRST_PAGE);
    expect(load.partial && load.stopped).toBe(true);
    const again = load.load("db", () => {}, () => {});
    expect(load.stopped).toBe(false);
    expect(p.asked[2].limit).toBe(LIST_MAX);
    p.answers[2](many(5000));
    await again;
    expect(load.threads?.length).toBe(5000);
    expect(load.partial).toBe(false);
  });

  it("lets no poll in while a read runs", async () => {
    const p = pending();
    const load = new ThreadListLoad(p.list);
    void load.load("db", () => {}, () => {});
    let polled = false;
    expect(await load.through(async () => (polled = true), () => {}, () => {})).toBe(false);
    expect(polled).toBe(false);
  });

  it("reports a failed read", async () => {
    const load = new ThreadListLoad(() => Promise.reject(new Error("gone")));
    let failed: unknown = null;
    await load.load("db", () => {}, (e) => (failed = e));
    expect(String(failed)).toContain("gone");
    expect(load.phase).toBeNull();
  });
});
