import { describe, expect, it } from "vitest";
import type { ThreadSummary } from "../ipc/bindings";
import { displayRows, sortThreads } from "./threadrows";

const t = (thread_id: string, extra: Partial<ThreadSummary> = {}): ThreadSummary =>
  ({ thread_id, status: "finished", checkpoint_count: 1, latest_ts: "2026-01-01T00:00:00+00:00", namespaces: [""], ...extra }) as ThreadSummary;

describe("thread rows", () => {
  it("sorts by a column either way, ties by newest activity then id", () => {
    const list = [
      t("b", { checkpoint_count: 5, status: "failed", latest_ts: "2026-01-02" }),
      t("a", { checkpoint_count: 5, status: "interrupted", latest_ts: "2026-01-03" }),
      t("c", { checkpoint_count: 1, status: "finished", latest_ts: "2026-01-01" }),
    ];
    const ids = (key: Parameters<typeof sortThreads>[1], dir: Parameters<typeof sortThreads>[2]) => sortThreads(list, key, dir).map((x) => x.thread_id);
    expect(ids("thread", "asc")).toEqual(["a", "b", "c"]);
    expect(ids("thread", "desc")).toEqual(["c", "b", "a"]);
    expect(ids("checkpoints", "desc")).toEqual(["a", "b", "c"]);
    expect(ids("checkpoints", "asc")).toEqual(["c", "a", "b"]);
    expect(ids("status", "asc")).toEqual(["b", "a", "c"]);
    expect(ids("activity", "desc")).toEqual(["a", "b", "c"]);
    expect(list.map((x) => x.thread_id)).toEqual(["b", "a", "c"]);
  });

  it("folds many similar threads into one group row, opened on demand", () => {
    // The backend marks the members of a run (flashback_api::groups, tested there).
    const sorted = [t("chat-tools"), ...Array.from({ length: 25 }, (_, i) => t(`bulk-${String(i).padStart(4, "0")}`, { group: "bulk-" })), t("t-1"), t("forked")];
    const closed = displayRows(sorted, new Set());
    expect(closed.map((r) => (r.kind === "group" ? `${r.prefix}*${r.count}` : r.thread.thread_id))).toEqual(["chat-tools", "bulk-*25", "t-1", "forked"]);
    const opened = displayRows(sorted, new Set(["bulk-"]));
    expect(opened.length).toBe(29);
    expect(opened[1]).toEqual({ kind: "group", prefix: "bulk-", count: 25, open: true });
    expect(opened[2].kind === "thread" && opened[2].thread.thread_id).toBe("bulk-0000");
    // Threads the backend does not group are never folded; a search shows its matches unfolded.
    expect(displayRows([t("t-1"), t("t-2")], new Set()).every((r) => r.kind === "thread")).toBe(true);
    expect(displayRows(sorted, new Set(), true).every((r) => r.kind === "thread")).toBe(true);
  });
});
