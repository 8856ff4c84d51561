// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { describe, expect, it } from "vitest";
import type { JobSnapshot, ValueSearchRequest } from "../ipc/bindings";
import { ValueSearch, type SearchBackend } from "./valuesearch.svelte";

const snap = (over: Partial<JobSnapshot>): JobSnapshot => ({
  id: "j1",
  kind: "search",
  state: "running",
  progress: null,
  events: [],
  cursor: 0,
  result: null,
  error: null,
  ...over,
});

const hit = (thread: string) => ({
  type: "search_hit" as const,
  thread_id: thread,
  checkpoint_id: `cp-${thread}`,
  matches: [{ path: "x", snippet: "lovelace" }],
  more: false,
});

const SUMMARY = { threads_total: 3, threads_searched: 3, threads_matched: 2, truncated: false, threads_locked: 0, threads_unreadable: 0 };

/** A backend whose jobs end when told to, reporting the given updates first. */
class Fake implements SearchBackend {
  started: ValueSearchRequest[] = [];
  cancelled: string[] = [];
  private ends = new Map<string, (s: JobSnapshot) => void>();
  private updates = new Map<string, (s: JobSnapshot) => void>();
  async start(req: ValueSearchRequest) {
    this.started.push(req);
    return `job${this.started.length}`;
  }
  follow(job: string, onUpdate: (s: JobSnapshot) => void) {
    this.updates.set(job, onUpdate);
    return new Promise<JobSnapshot>((resolve) => this.ends.set(job, resolve));
  }
  async cancel(job: string) {
    this.cancelled.push(job);
    this.end(job, snap({ id: job, state: "cancelled", error: { code: "cancelled", message: "stopped" } }));
  }
  update(job: string, s: JobSnapshot) {
    this.updates.get(job)?.(s);
  }
  end(job: string, s: JobSnapshot) {
    this.ends.get(job)?.(s);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("ValueSearch", () => {
  it("collects results as they come, then the summary", async () => {
    const fake = new Fake();
    const s = new ValueSearch(fake);
    const done = s.start("db1", "  Lovelace ");
    await tick();
    expect(fake.started).toEqual([{ db: "db1", query: "Lovelace", limit: null, threads: null }]);
    expect(s.running).toBe(true);
    expect(s.query).toBe("Lovelace");
    fake.update("job1", snap({ progress: { done: 1, total: 3, label: "searching values" }, events: [hit("a")] }));
    fake.update("job1", snap({ progress: { done: 3, total: 3, label: "searching values" }, events: [hit("b")] }));
    expect(s.results.map((r) => r.threadId)).toEqual(["a", "b"]);
    expect(s.progress?.done).toBe(3);
    fake.end("job1", snap({ state: "succeeded", result: SUMMARY }));
    await done;
    expect(s.running).toBe(false);
    expect(s.summary).toEqual(SUMMARY);
    expect(s.error).toBeNull();
  });

  it("does nothing for blank text", async () => {
    const fake = new Fake();
    const s = new ValueSearch(fake);
    await s.start("db1", "   ");
    expect(fake.started).toEqual([]);
    expect(s.query).toBeNull();
  });

  it("cancels, keeping what was found", async () => {
    const fake = new Fake();
    const s = new ValueSearch(fake);
    const done = s.start("db1", "x");
    await tick();
    fake.update("job1", snap({ events: [hit("a")] }));
    s.cancel();
    await done;
    expect(fake.cancelled).toEqual(["job1"]);
    expect(s.cancelled).toBe(true);
    expect(s.running).toBe(false);
    expect(s.results).toHaveLength(1);
    expect(s.summary).toBeNull();
  });

  it("a new search replaces the running one, whose late reports are dropped", async () => {
    const fake = new Fake();
    const s = new ValueSearch(fake);
    const first = s.start("db1", "old");
    await tick();
    const second = s.start("db1", "new");
    await tick();
    expect(fake.cancelled).toEqual(["job1"]);
    fake.update("job1", snap({ events: [hit("stale")] }));
    fake.update("job2", snap({ events: [hit("fresh")] }));
    fake.end("job2", snap({ state: "succeeded", result: SUMMARY }));
    await Promise.all([first, second]);
    expect(s.query).toBe("new");
    expect(s.results.map((r) => r.threadId)).toEqual(["fresh"]);
    expect(s.cancelled).toBe(false);
    expect(s.summary).toEqual(SUMMARY);
  });

  it("reports a failure and clears", async () => {
    const fake = new Fake();
    const s = new ValueSearch(fake);
    const done = s.start("db1", "x");
    await tick();
    fake.end("job1", snap({ state: "failed", error: { code: "io", message: "disk gone" } }));
    await done;
    expect(s.error?.message).toBe("disk gone");
    s.clear();
    expect(s.query).toBeNull();
    expect(s.error).toBeNull();

    const failing = new ValueSearch({
      start: () => Promise.reject({ code: "invalid_input", message: "too long" }),
      follow: (job, onUpdate) => fake.follow(job, onUpdate),
      cancel: (job) => fake.cancel(job),
    });
    await failing.start("db1", "x");
    expect(failing.error?.code).toBe("invalid_input");
    expect(failing.running).toBe(false);
  });
});
