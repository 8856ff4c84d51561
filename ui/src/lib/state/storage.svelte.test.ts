// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { describe, expect, it } from "vitest";
import type { JobSnapshot, StorageRequest } from "../ipc/bindings";
import { StorageJob, type StorageBackend } from "./storage.svelte";
import { report } from "./teststorage";

const snap = (over: Partial<JobSnapshot>): JobSnapshot => ({
  id: "j1",
  kind: "storage",
  state: "running",
  progress: null,
  events: [],
  cursor: 0,
  result: null,
  error: null,
  ...over,
});

class Fake implements StorageBackend {
  started: StorageRequest[] = [];
  cancelled: string[] = [];
  private ends = new Map<string, (s: JobSnapshot) => void>();
  private updates = new Map<string, (s: JobSnapshot) => void>();
  async start(req: StorageRequest) {
    this.started.push(req);
    return `job${this.started.length}`;
  }
  follow(job: string, onUpdate: (s: JobSnapshot) => void) {
    this.updates.set(job, onUpdate);
    return new Promise<JobSnapshot>((resolve) => this.ends.set(job, resolve));
  }
  async cancel(job: string) {
    this.cancelled.push(job);
    this.end(job, snap({ id: job, state: "cancelled" }));
  }
  update(job: string, s: JobSnapshot) {
    this.updates.get(job)?.(s);
  }
  end(job: string, s: JobSnapshot) {
    this.ends.get(job)?.(s);
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("StorageJob", () => {
  it("follows the progress, then shows the report and keeps it for the database", async () => {
    const fake = new Fake();
    const s = new StorageJob(fake);
    const done = s.start("db1");
    await tick();
    expect(fake.started).toEqual([{ db: "db1", thread_id: null, top: 20 }]);
    expect(s.running).toBe(true);
    fake.update("job1", snap({ progress: { done: 1, total: 2, label: "threads" } }));
    expect(s.progress?.done).toBe(1);
    fake.end("job1", snap({ state: "succeeded", result: report() as never }));
    await done;
    expect(s.running).toBe(false);
    expect(s.report?.thread_count).toBe(2);
    const again = new StorageJob(fake);
    expect(again.restore("db1")).toBe(true);
    expect(again.report?.thread_count).toBe(2);
    expect(new StorageJob(fake).restore("db2")).toBe(false);
  });

  it("measures one thread without keeping it as the database's report", async () => {
    const fake = new Fake();
    const s = new StorageJob(fake);
    const done = s.start("db3", "t1", 50);
    await tick();
    expect(fake.started[0]).toEqual({ db: "db3", thread_id: "t1", top: 50 });
    fake.end("job1", snap({ state: "succeeded", result: report({ thread_id: "t1" }) as never }));
    await done;
    expect(s.report?.thread_id).toBe("t1");
    expect(new StorageJob(fake).restore("db3")).toBe(false);
  });

  it("cancels, and a new run replaces the one running", async () => {
    const fake = new Fake();
    const s = new StorageJob(fake);
    const first = s.start("db1");
    await tick();
    const second = s.start("db1");
    await tick();
    expect(fake.cancelled).toEqual(["job1"]);
    await first;
    expect(s.running).toBe(true);
    s.cancel();
    await second;
    expect(fake.cancelled).toEqual(["job1", "job2"]);
    expect(s.cancelled).toBe(true);
    expect(s.running).toBe(false);
  });

  it("shows why it failed", async () => {
    const fake = new Fake();
    const s = new StorageJob(fake);
    const done = s.start("db1");
    await tick();
    fake.end("job1", snap({ state: "failed", error: { code: "not_found", message: "no such thread" } }));
    await done;
    expect(s.error?.message).toBe("no such thread");
    const bad = s.start("db1");
    await tick();
    fake.end("job2", snap({ state: "succeeded", result: "nope" }));
    await bad;
    expect(s.error?.message).toContain("not one");
  });
});
