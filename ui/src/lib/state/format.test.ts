import { describe, expect, it } from "vitest";
import type { ThreadSummary } from "../ipc/bindings";
import { ago, errorTitle, formatBytes, formatTs, formatVersion, interruptText } from "./format";
import { byActivity, filterThreads, statusCounts } from "./threadfilter";

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
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(135 * 1024 ** 3)).toBe("135.0 GB");
    expect(formatBytes(2 * 1024 ** 4)).toBe("2.0 TB");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB");
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
    expect(statusCounts(list)).toEqual({ all: 3, finished: 1, interrupted: 1, failed: 1, pending: 0 });
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
