// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { describe, expect, it } from "vitest";
import type { ConvertReport, ConvertRequest, JobSnapshot } from "../ipc/bindings";
import { isAbsolutePath, SnapshotJob, snapshotRequest, snapshotText, type SnapshotBackend } from "./snapshot.svelte";

const snap = (over: Partial<JobSnapshot>): JobSnapshot => ({
  id: "j1",
  kind: "convert",
  state: "running",
  progress: null,
  events: [],
  cursor: 0,
  result: null,
  error: null,
  ...over,
});

const report = (over: Partial<ConvertReport> = {}): ConvertReport => ({
  threads: 3,
  checkpoints: 20,
  writes: 5,
  value_bytes: 100,
  three_table_bytes: null,
  dry_run: false,
  skipped: [],
  ...over,
});

function fake(final: JobSnapshot) {
  const started: ConvertRequest[] = [];
  const backend: SnapshotBackend = {
    start: async (req) => (started.push(req), "job1"),
    follow: async (_job, onUpdate) => {
      onUpdate(snap({ progress: { done: 1, total: 3, label: "threads" } }));
      return final;
    },
    cancel: async () => {},
  };
  return { backend, started };
}

describe("snapshot", () => {
  it("converts every thread to LangGraph's schema in the file", () => {
    expect(snapshotRequest("db1", " /tmp/a.sqlite ")).toEqual({ db: "db1", target: "/tmp/a.sqlite", to: "langgraph" });
  });

  it("tells a path from a bare file name", () => {
    expect(isAbsolutePath("/tmp/a.sqlite")).toBe(true);
    expect(isAbsolutePath("C:\\Users\\me\\a.sqlite")).toBe(true);
    expect(isAbsolutePath("c:/x.sqlite")).toBe(true);
    expect(isAbsolutePath("\\\\server\\share\\a.sqlite")).toBe(true);
    expect(isAbsolutePath("agent-server-x.sqlite")).toBe(false);
    expect(isAbsolutePath("sub/a.sqlite")).toBe(false);
  });

  it("says what it kept", () => {
    expect(snapshotText(report(), "a.sqlite")).toBe("Kept 3 threads, 20 checkpoints in a.sqlite.");
    expect(snapshotText(report({ threads: 1, skipped: [{ thread_id: "t", reason: "x" }] as never }), "a.sqlite")).toBe(
      "Kept 1 thread, 20 checkpoints in a.sqlite (1 skipped).",
    );
  });

  it("runs the convert job and keeps its report", async () => {
    const f = fake(snap({ state: "succeeded", result: report() as never }));
    const job = new SnapshotJob(f.backend);
    await job.start("db1", "snap.sqlite");
    expect(f.started).toEqual([{ db: "db1", target: "snap.sqlite", to: "langgraph" }]);
    expect(job.report?.threads).toBe(3);
    expect(job.target).toBe("snap.sqlite");
    expect(job.progress?.done).toBe(1);
    expect(job.running).toBe(false);
  });

  it("shows the job's error", async () => {
    const f = fake(snap({ state: "failed", error: { code: "invalid_input", message: "snap.sqlite already holds threads" } }));
    const job = new SnapshotJob(f.backend);
    await job.start("db1", "snap.sqlite");
    expect(job.report).toBeNull();
    expect(job.error?.message).toBe("snap.sqlite already holds threads");
  });
});
