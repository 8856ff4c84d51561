import { describe, expect, it } from "vitest";
import type { ThreadSummary } from "../ipc/bindings";
import byteUnits from "../../../../tests/fixtures/byte_units.json";
import { ago, errorTitle, formatBytes, formatTs, formatVersion, interruptText } from "./format";
import { byActivity, countText, filterThreads, statusCounts } from "./threadfilter";

const t = (id: string, status: ThreadSummary["status"], ts: string, extra: Partial<ThreadSummary> = {}): ThreadSummary => ({
  thread_id: id,
  namespaces: [""],
  checkpoint_count: 3,
  latest_checkpoint_id: null,
  latest_ts: ts,
  latest_step: 1,
  status,
  interrupts: [],
  error: null,
  next: [],
  problem: null,
  locked: false,
  ...extra,
});

describe("format", () => {
  it("formats times and sizes", () => {
    expect(formatTs("2026-11-22T06:57:07.072901+00:00")).toBe("2026-11-22 06:57:07");
    expect(formatTs(null)).toBe("—");
    const now = Date.parse("2026-11-22T07:00:00Z");
    expect(ago("2026-11-22T06:59:30+00:00", now)).toBe("30s ago");
    expect(ago("2026-11-22T05:00:00+00:00", now)).toBe("2h ago");
    expect(ago("2026-11-20T07:00:00+00:00", now)).toBe("2d ago");
    // The cases the Rust side (flashback_codec::units) is checked against too.
    const cases = byteUnits as [number, string][];
    expect(cases.length).toBeGreaterThan(10);
    for (const [n, want] of cases) expect(formatBytes(n), String(n)).toBe(want);
  });

  it("searches and filters threads", () => {
    const list = [
      t("chat", "finished", "2026-01-01"),
      t("ask-human", "interrupted", "2026-01-03", { interrupts: [{ $type: "langgraph.types.Interrupt", value: "Approve the refund?" }] }),
      t("broken", "failed", "2026-01-02", { next: ["tool_node"] }),
    ];
    expect(filterThreads(list, "", "interrupted").map((x) => x.thread_id)).toEqual(["ask-human"]);
    expect(filterThreads(list, "refund", "all").map((x) => x.thread_id)).toEqual(["ask-human"]);
    expect(filterThreads(list, "TOOL_node", "all").map((x) => x.thread_id)).toEqual(["broken"]);
    expect(statusCounts(list)).toEqual({ all: 3, finished: 1, interrupted: 1, failed: 1, pending: 0, unknown: 0 });
    // A locked database: no status is known, so no chip claims none are waiting or failed.
    const locked = [t("a", null, "2026-11-22T06:57:07+00:00", { locked: true }), t("b", null, "2026-11-22T06:57:07+00:00", { locked: true })];
    const lc = statusCounts(locked);
    expect(lc.unknown).toBe(2);
    expect([countText(lc, "all"), countText(lc, "interrupted"), countText(lc, "failed"), countText(lc, "unknown")]).toEqual(["2", "—", "—", "2"]);
    expect(filterThreads(locked, "", "unknown").length).toBe(2);
    expect(filterThreads(list, "", "unknown").length).toBe(0);
    // Some known: their counts are counts.
    expect(countText(statusCounts([...list, ...locked]), "failed")).toBe("1");
    expect([...list].sort(byActivity).map((x) => x.thread_id)).toEqual(["ask-human", "broken", "chat"]);
    const interrupt = (value: unknown) => ({ $type: "langgraph.types.Interrupt", value, id: "x" });
    expect(interruptText(interrupt("Approve?"))).toBe("Approve?");
    expect(interruptText(interrupt({ q: 1 }))).toBe('{"q":1}');
    expect(interruptText(interrupt({ question: "Approve the draft?", draft: "…" }))).toBe("Approve the draft? (draft)");
  });
});

describe("formatVersion", () => {
  it("shows a channel version as its step-like number", () => {
    expect(formatVersion("00000000000000000000000000000005.0.23693094738966614")).toBe("5");
    expect(formatVersion("00000000000000000000000000000000.0.1")).toBe("0");
    expect(formatVersion("12")).toBe("12");
  });
});

describe("errorTitle", () => {
  it("titles a refusal of serve's policy as such", () => {
    expect(errorTitle("not_allowed")).toBe("Not allowed here.");
    expect(errorTitle("something_new")).toBe("Something went wrong.");
  });
});
