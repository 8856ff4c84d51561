import { describe, expect, it } from "vitest";
import type { IndexApplyReport, IndexApplyRequest, JobSnapshot } from "../ipc/bindings";
import { buildProgressText, IndexBuild, type IndexBackend } from "./indexbuild.svelte";

const report = {
  dry_run: false,
  plan: { action: "create", names: ["flashback_checkpoints_recent"], statements: ["CREATE INDEX …"], estimated_bytes: 1, estimated_seconds: 1, note: "" },
  seconds: 1.5,
  before: [{ read: "the 200 most recently active threads", millis: 900, threads: 200 }],
  after: [{ read: "the 200 most recently active threads", millis: 20, threads: 200 }],
  advice: null,
} as unknown as IndexApplyReport;

function snapshot(state: JobSnapshot["state"], extra: Partial<JobSnapshot> = {}): JobSnapshot {
  return { job: "j1", kind: "index", state, progress: null, events: [], cursor: 0, result: null, error: null, ...extra } as JobSnapshot;
}

function backend(final: () => JobSnapshot, updates: JobSnapshot[] = []) {
  const started: IndexApplyRequest[] = [];
  const cancelled: string[] = [];
  const b: IndexBackend = {
    start: async (req) => (started.push(req), "j1"),
    follow: async (_job, onUpdate) => {
      for (const u of updates) onUpdate(u);
      return final();
    },
    cancel: async (job) => void cancelled.push(job),
  };
  return { b, started, cancelled };
}

describe("an index build", () => {
  it("creates every missing index as a job and keeps its report", async () => {
    const progress = { done: 0, total: 2, label: "creating flashback_checkpoints_recent" };
    const { b, started } = backend(() => snapshot("succeeded", { result: report as never }), [snapshot("running", { progress })]);
    const build = new IndexBuild(b);
    const seen: string[] = [];
    const run = build.start("db1", ["all"]);
    seen.push(buildProgressText(build.progress));
    await run;
    expect(started).toEqual([{ db: "db1", action: "create", names: ["all"], dry_run: false }]);
    expect(build.report).toBe(report);
    expect([build.running, build.cancelled, build.error]).toEqual([false, false, null]);
  });

  it("is stopped on request and says so, without a report", async () => {
    let finish: (s: JobSnapshot) => void = () => {};
    const { b, cancelled } = backend(() => snapshot("cancelled"));
    b.follow = (_job, onUpdate) =>
      new Promise((resolve) => {
        onUpdate(snapshot("running", { progress: { done: 0, total: 1, label: "creating flashback_checkpoints_metadata" } }));
        finish = resolve;
      });
    const build = new IndexBuild(b);
    const run = build.start("db1", ["all"]);
    await new Promise((r) => setTimeout(r, 0));
    expect(buildProgressText(build.progress)).toBe("creating flashback_checkpoints_metadata (1 of 1)");
    build.cancel();
    finish(snapshot("cancelled", { error: { code: "cancelled", message: "the index build was cancelled; nothing was left half-built" } as never }));
    await run;
    expect(cancelled).toEqual(["j1"]);
    expect([build.cancelled, build.report, build.running]).toEqual([true, null, false]);
  });

  it("says a failed build in one line", async () => {
    const { b } = backend(() => snapshot("failed", { error: { code: "locked", message: "the database is locked by another process (busy); try again" } as never }));
    const build = new IndexBuild(b);
    await build.start("db1", ["all"]);
    expect(build.error?.message).toBe("the database is locked by another process (busy); try again");
    expect(build.report).toBeNull();
  });

  it("words its progress", () => {
    expect(buildProgressText(null)).toBe("starting…");
    expect(buildProgressText({ done: 1, total: 2, label: "creating flashback_checkpoints_metadata" })).toBe("creating flashback_checkpoints_metadata (2 of 2)");
    expect(buildProgressText({ done: 2, total: 2, label: "done" })).toBe("done");
  });
});
