import { describe, expect, it } from "vitest";
import type { IndexAdvice, IndexApplyReport, IndexReport } from "../ipc/bindings";
import { count, creatable, estimateLine, hintLine, planLine, sizeLine, stateLabel, timingLines } from "./indexes";

function advice(over: Partial<IndexAdvice> = {}): IndexAdvice {
  return {
    name: "flashback_checkpoints_recent",
    table: "checkpoints",
    definition: "CREATE INDEX …",
    speeds: ["newest-first page"],
    state: "missing",
    size_bytes: null,
    estimated_bytes: 350_000_000,
    estimated_seconds: 12.5,
    estimate: {
      read: "the 200 most recently active threads",
      plan: "SCAN checkpoints",
      scans: true,
      uses_index: false,
      rows_now: 5_000_000,
      rows_with_index: 1600,
      cost_now: null,
    },
    recommended: true,
    ...over,
  };
}

function report(indexes: IndexAdvice[]): IndexReport {
  return { applicable: true, summary: "", checkpoints: 5_000_000, table_bytes: 1, indexes, others: [] };
}

describe("index advice", () => {
  it("says what a scan reads today and with the index", () => {
    const a = advice();
    expect(count(5_000_000)).toBe("5,000,000");
    expect(estimateLine(a.estimate!)).toBe("the 200 most recently active threads: reads all 5,000,000 rows today, ≈ 1,600 with it");
    expect(estimateLine({ ...a.estimate!, uses_index: true, scans: false, rows_now: 1600 })).toBe(
      "the 200 most recently active threads: uses it (≈ 1,600 rows)",
    );
    expect(sizeLine(a)).toBe("≈ 350.0 MB, ≈ 12.5 s to build");
    expect(sizeLine(advice({ size_bytes: 2_000_000, state: "present" }))).toBe("2.0 MB");
    expect(stateLabel(advice({ state: "invalid" }))).toContain("failed build");
  });

  it("hints only when an index is recommended", () => {
    expect(hintLine(report([advice()]))).toContain("5,000,000 checkpoints");
    expect(hintLine(report([advice({ recommended: false })]))).toBeNull();
    expect(hintLine({ ...report([]), applicable: false })).toBeNull();
  });

  it("creates what is not there, and times before and after", () => {
    const r = report([advice(), advice({ name: "flashback_x", state: "present", recommended: false }), advice({ name: "flashback_y", state: "invalid" })]);
    expect(creatable(r)).toEqual(["flashback_checkpoints_recent", "flashback_y"]);
    const applied = {
      dry_run: false,
      plan: { action: "create", names: [], statements: [], estimated_bytes: 0, estimated_seconds: 0, note: "" },
      seconds: 1,
      before: [{ read: "page", millis: 2345.4, threads: 200 }],
      after: [{ read: "page", millis: 12.2, threads: 200 }],
      advice: null,
    } as IndexApplyReport;
    expect(timingLines(applied)).toEqual(["page: 2345 ms → 12 ms"]);
    expect(planLine({ ...applied.plan, estimated_bytes: 1500, estimated_seconds: 2 })).toBe("≈ 1.5 kB, ≈ 2.0 s to build");
  });
});
