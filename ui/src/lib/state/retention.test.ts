import { describe, expect, it } from "vitest";
import type { RetentionReport, RetentionThread } from "../ipc/bindings";
import { ageProblem, buildRequest, cutoffLine, defaultForm, doneKind, doneText, retentionPhrase, retentionRows, sameSelection, skippedLine, totalsLine, vacuumLines } from "./retention";

const thread = (thread_id: string, bytes: number, over: Partial<RetentionThread> = {}): RetentionThread => ({
  thread_id,
  status: "failed",
  last_checkpoint_ts: "2026-11-22T06:57:07.194742+00:00",
  checkpoints: 2,
  kept: 1,
  writes: 3,
  blobs: 0,
  bytes,
  skipped: null,
  ...over,
});

const report = (threads: RetentionThread[], over: Partial<RetentionReport> = {}): RetentionReport => ({
  cutoff: "2026-11-26T13:48:23.413952+00:00",
  filters: { thread_ids: [], older_than: "1s", statuses: ["failed"], strategy: "keep_latest", keep_last: 1 },
  threads,
  totals: {
    threads: threads.length,
    checkpoints: threads.reduce((s, t) => s + t.checkpoints, 0),
    kept: threads.reduce((s, t) => s + t.kept, 0),
    writes: threads.reduce((s, t) => s + t.writes, 0),
    blobs: threads.reduce((s, t) => s + t.blobs, 0),
    bytes: threads.reduce((s, t) => s + t.bytes, 0),
    skipped: threads.filter((t) => t.skipped).length,
  },
  vacuum: null,
  vacuum_preview: null,
  vacuum_error: null,
  transactions: 0,
  longest_transaction_ms: 0,
  dry_run: true,
  ...over,
});

describe("retention: ages", () => {
  it("accepts a whole number and a unit, or nothing", () => {
    for (const ok of ["90m", "12h", "30d", "2w", "45s", " 1s ", ""]) expect(ageProblem(ok), ok).toBeNull();
  });
  it("refuses what the backend refuses, with a hint", () => {
    for (const bad of ["30", "d", "30x", "3.5d", "-1d", "30 d", "1D", "1y"]) expect(ageProblem(bad), bad).toMatch(/whole number and a unit/);
    expect(ageProblem("0d")).toMatch(/above zero/);
    expect(ageProblem("000h")).toMatch(/above zero/);
  });
});

describe("retention: the request", () => {
  it("builds a preview from the default form (30 days, keep the latest one)", () => {
    expect(buildRequest("db1", defaultForm(), true)).toEqual({
      request: { db: "db1", thread_ids: [], older_than: "30d", statuses: [], strategy: "keep_latest", keep_last: 1, vacuum: false, force_vacuum: false, dry_run: true },
    });
  });
  it("orders the statuses, drops keep_last for delete, and previews the VACUUM a run would do", () => {
    const form = { ...defaultForm(), olderThan: " 1s ", statuses: ["pending", "failed"] as ("pending" | "failed")[], strategy: "delete" as const, keepLast: 3, vacuum: true };
    const preview = buildRequest("db", form, true);
    const run = buildRequest("db", { ...form, forceVacuum: true }, false);
    expect(preview).toEqual({
      request: { db: "db", thread_ids: [], older_than: "1s", statuses: ["failed", "pending"], strategy: "delete", keep_last: null, vacuum: true, force_vacuum: false, dry_run: true },
    });
    expect("request" in run && run.request.vacuum && run.request.force_vacuum && !run.request.dry_run).toBe(true);
    if ("request" in preview && "request" in run) expect(sameSelection(preview.request, run.request)).toBe(true);
    // Ticking VACUUM asks a new preview (its cost); forcing it without VACUUM forces nothing.
    const plain = buildRequest("db", { ...form, vacuum: false, forceVacuum: true }, false);
    if (!("request" in preview) || !("request" in plain)) throw new Error("requests");
    expect(plain.request.force_vacuum).toBe(false);
    expect(sameSelection(preview.request, plain.request)).toBe(false);
  });
  it("sends an empty age as none (the backend says when nothing is chosen)", () => {
    const r = buildRequest("db", { ...defaultForm(), olderThan: "  " }, true);
    expect("request" in r && r.request.older_than).toBe(null);
  });
  it("stops on a bad age or keep-last count, without a call", () => {
    expect(buildRequest("db", { ...defaultForm(), olderThan: "30x" }, true)).toHaveProperty("problem");
    expect(buildRequest("db", { ...defaultForm(), keepLast: 0 }, true)).toHaveProperty("problem");
    expect(buildRequest("db", { ...defaultForm(), keepLast: null }, true)).toHaveProperty("problem");
    expect(buildRequest("db", { ...defaultForm(), keepLast: 1.5 }, true)).toHaveProperty("problem");
    // keep-last does not matter when whole threads go.
    expect(buildRequest("db", { ...defaultForm(), strategy: "delete", keepLast: null }, true)).toHaveProperty("request");
  });
  it("tells a changed selection from the same one", () => {
    const a = buildRequest("db", defaultForm(), true);
    const b = buildRequest("db", { ...defaultForm(), keepLast: 2 }, true);
    if (!("request" in a) || !("request" in b)) throw new Error("requests");
    expect(sameSelection(a.request, b.request)).toBe(false);
  });
});

describe("retention: the preview", () => {
  it("sums up what would go", () => {
    const r = report([thread("a", 312), thread("b", 2048, { checkpoints: 1, kept: 0, writes: 0 })]);
    expect(totalsLine(r.totals)).toBe("2 threads, 3 checkpoints, 3 writes, 0 blobs, 2.4 kB would go; 1 kept");
    expect(totalsLine(report([thread("a", 312, { checkpoints: 1, writes: 1, blobs: 1 })]).totals)).toBe("1 thread, 1 checkpoint, 1 write, 1 blob, 312 B would go; 1 kept");
    expect(cutoffLine(r)).toBe("Threads whose latest checkpoint is before 2026-11-26 13:48:23 UTC");
    expect(cutoffLine({ ...r, cutoff: null })).toBe("Threads of any age");
  });
  it("lists the threads largest first, ties by id", () => {
    const rows = retentionRows(report([thread("b", 10), thread("c", 5000), thread("a", 10, { status: null, last_checkpoint_ts: null })]));
    expect(rows.map((r) => r.thread_id)).toEqual(["c", "a", "b"]);
    expect(rows[0]).toEqual({ thread_id: "c", status: "failed", last: "2026-11-22 06:57:07", checkpoints: 2, kept: 1, bytes: "5.0 kB", skipped: null });
    expect(rows[1].last).toBe("—");
  });
});

describe("retention: confirmation and outcome", () => {
  it("asks for the words only when whole threads go", () => {
    const one = report([thread("parallel-failure", 1)]);
    const two = report([thread("a", 1), thread("b", 1)]);
    expect(retentionPhrase("keep_latest", two)).toBeNull();
    expect(retentionPhrase("delete", one)).toBe("parallel-failure");
    expect(retentionPhrase("delete", two)).toBe("delete 2 threads");
    expect(retentionPhrase("delete", report([]))).toBeNull();
    expect(retentionPhrase("delete", null)).toBeNull();
  });
  it("says what went and what VACUUM gave back", () => {
    const kept = report([thread("a", 1), thread("b", 1)], { dry_run: false });
    expect(doneText(kept)).toBe("Pruned 4 checkpoints from 2 threads.");
    const gone = report([thread("a", 1, { checkpoints: 1 })], {
      dry_run: false,
      filters: { ...kept.filters, strategy: "delete", keep_last: 0 },
      vacuum: { bytes_before: 8192, bytes_after: 4096, bytes_returned: 4096 },
    });
    expect(doneText(gone)).toBe("Deleted 1 thread (1 checkpoint); VACUUM returned 4.1 kB.");
  });
});

describe("retention: issue 28 — skipped threads and the VACUUM", () => {
  it("marks the threads left alone and says why, in the rows and in a line", () => {
    const r = report([thread("a", 10), thread("b", 0, { checkpoints: 0, kept: 0, writes: 0, skipped: "changed" }), thread("c", 0, { checkpoints: 0, skipped: "gone" })]);
    const rows = retentionRows(r);
    expect(rows.find((x) => x.thread_id === "b")?.skipped).toBe("skipped: written to after it was chosen");
    expect(rows.find((x) => x.thread_id === "c")?.skipped).toBe("skipped: gone before the prune reached it");
    expect(rows.find((x) => x.thread_id === "a")?.skipped).toBeNull();
    expect(skippedLine(r)).toBe("2 threads of 3 left alone: LangGraph wrote to them after they were chosen (or they were gone), so nothing went from them.");
    expect(skippedLine(report([thread("a", 1)]))).toBeNull();
    const done = { ...r, dry_run: false };
    expect(doneText(done)).toBe("Pruned 2 checkpoints from 1 thread; left 2 threads alone (written to after they were chosen).");
  });
  it("warns how long SQLite's VACUUM stops writers, and when it would be refused", () => {
    const preview = (over: Partial<NonNullable<RetentionReport["vacuum_preview"]>>) =>
      report([thread("a", 1)], { vacuum_preview: { bytes: 225_000_000, blocks_writers: true, seconds: 6, open_elsewhere: [], ...over } });
    expect(vacuumLines(report([thread("a", 1)]))).toBeNull();
    expect(vacuumLines(preview({}))).toEqual({
      warning: 'VACUUM rewrites the whole 225.0 MB file and stops every writer for about 6 s; a LangGraph program waits 5 s, then fails with "database is locked".',
      refused: null,
    });
    expect(vacuumLines(preview({ open_elsewhere: [4242] }))?.refused).toBe("Another program (pid 4242) has the database open now: the VACUUM is refused unless forced.");
    expect(vacuumLines(preview({ open_elsewhere: [0] }))?.refused).toBe("Another program has the database open now: the VACUUM is refused unless forced.");
    expect(vacuumLines(preview({ blocks_writers: false, seconds: 0, open_elsewhere: null }))).toEqual({ warning: "VACUUM ANALYZE works through 225.0 MB; writers go on meanwhile.", refused: null });
  });
  it("says the prune committed when the VACUUM failed after it", () => {
    const r = report([thread("a", 1, { checkpoints: 159 })], { dry_run: false, vacuum_error: "database or disk is full" });
    expect(doneText(r)).toBe("Pruned 159 checkpoints from 1 thread (committed). VACUUM failed: database or disk is full — the database is consistent; run it again with VACUUM once the cause is gone.");
    expect(doneKind(r)).toBe("error");
    expect(doneKind({ ...r, vacuum_error: null })).toBe("ok");
  });
});
