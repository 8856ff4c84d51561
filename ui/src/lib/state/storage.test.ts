import { describe, expect, it } from "vitest";
import {
  byteStep,
  channelBars,
  growthBars,
  growthNamespaces,
  growthTitle,
  nodeBars,
  orphansText,
  quadraticText,
  reportOf,
  storageProgressText,
  taskName,
  threadBars,
  totalsLines,
  usageParts,
  valueKind,
  valueRoute,
} from "./storage";
import { report, size, usage } from "./teststorage";

describe("storage report shaping", () => {
  it("splits a usage into its four parts", () => {
    expect(usageParts(usage(10, 2, 3, 4)).map((p) => [p.label, p.bytes])).toEqual([
      ["Documents", 10],
      ["Metadata", 2],
      ["Blobs", 3],
      ["Writes", 4],
    ]);
  });

  it("charts bytes by thread, stacked, leaving out empty parts; a bar opens its thread", () => {
    const b = threadBars(report());
    expect(b.labels).toEqual(["big", "small"]);
    expect(b.series.map((s) => s.label)).toEqual(["Documents", "Metadata", "Writes"]);
    expect(b.series[0].values).toEqual([2000, 1000]);
    expect(b.totals).toEqual([2460, 1140]);
    expect(b.opens[1]).toEqual({ screen: "thread", thread: "small" });
  });

  it("charts bytes by channel; a channel opens its largest value", () => {
    const b = channelBars(report());
    expect(b.labels).toEqual(["messages", "last"]);
    expect(b.series.map((s) => s.label)).toEqual(["Inline (documents)", "Writes"]);
    expect(b.totals).toEqual([2300, 60]);
    expect(b.opens[0]).toEqual({ screen: "thread", thread: "big", checkpoint: { ns: "", id: "c2" }, tab: "state" });
    expect(b.opens[1]).toEqual({ screen: "thread", thread: "big", checkpoint: { ns: "", id: "c1" }, tab: "writes" });
  });

  it("charts bytes by node, naming the empty task path", () => {
    const b = nodeBars(report());
    expect(b.labels).toEqual(["agent", "(no task path)"]);
    expect(b.totals).toEqual([300, 5]);
    expect(b.opens).toEqual([null, null]);
  });

  it("charts the growth of one namespace, oldest first; a bar opens its checkpoint", () => {
    const r = report({ thread_id: "t1", growth: [size("c1", "", 100), size("s1", "sub:1", 50), size("c2", "", 300, 20)] });
    expect(growthNamespaces(r)).toEqual(["", "sub:1"]);
    const b = growthBars(r, "");
    expect(b.labels).toEqual(["1", "2"]);
    expect(b.series.map((s) => s.label)).toEqual(["Document", "Metadata", "Writes"]);
    expect(b.totals).toEqual([110, 330]);
    expect(b.opens[1]).toEqual({ screen: "thread", thread: "t1", checkpoint: { ns: "", id: "c2" }, tab: "state" });
    expect(growthBars(r, "sub:1").labels).toEqual(["1"]);
  });

  it("sorts the root namespace first", () => {
    const r = report({ growth: [size("a", "z", 1), size("b", "", 1), size("c", "m", 1)] });
    expect(growthNamespaces(r)).toEqual(["", "m", "z"]);
  });

  it("says where values open and how they are stored", () => {
    const [inline, write, orphan] = report().largest_values;
    expect(valueRoute(orphan)).toBeNull();
    expect(valueRoute(write)?.tab).toBe("writes");
    expect(valueKind(inline)).toBe("inline");
    expect(valueKind(write)).toBe("write by agent");
    expect(valueKind(orphan)).toBe("blob v3");
    expect(taskName("~__pregel_push, 3, false")).toBe("Send");
    expect(taskName("__interrupt__")).toBe("__interrupt__");
    expect(taskName("")).toBe("(no task path)");
  });

  it("lists the totals with human units and the free pages", () => {
    const lines = totalsLines(report());
    expect(lines.map((l) => l.label)).toEqual(["Total", "Threads", "Checkpoints", "Metadata", "Blobs", "Writes", "File"]);
    expect(lines[0].value).toBe("3.5 KB");
    expect(lines[6].value).toBe("40.0 KB · 8.0 KB free (a VACUUM returns it)");
    const pg = totalsLines(
      report({ thread_id: "t", space: { sqlite: null, relations: [{ table: "checkpoint_blobs", total_bytes: 3 << 20, table_bytes: 1 << 20, toast_bytes: 1 << 20, index_bytes: 1 << 20 }] } }),
    );
    expect(pg.map((l) => l.label)).not.toContain("Threads");
    expect(pg[pg.length - 1].value).toBe("3.0 MB on disk (table 1.0 MB, TOAST 1.0 MB, indexes 1.0 MB)");
  });

  it("says what is orphaned, and what grows quadratically", () => {
    expect(orphansText(report())).toBeNull();
    const r = report({ orphans: { writes: { count: 2, bytes: 2048 }, blobs: { count: 1, bytes: 10 } } });
    expect(orphansText(r)).toBe("Orphaned: 2 writes (2.0 KB) whose checkpoint is gone; 1 blob (10 B) no checkpoint names.");
    expect(quadraticText(report().quadratic[0])).toBe("stored whole 5 times: 4.9 KB in all, 1.5 KB stored once");
  });

  it("steps byte axes in round units", () => {
    expect(byteStep(341 * 1024)).toBe(100 * 1024);
    expect(byteStep(3.4 * 1024)).toBe(1024);
    expect(byteStep(700)).toBe(200);
    expect(byteStep(135 * 1024 ** 3)).toBe(50 * 1024 ** 3);
    expect(byteStep(0)).toBe(1);
    expect(byteStep(3)).toBe(1);
  });

  it("reads progress and results", () => {
    expect(storageProgressText(null)).toBe("Measuring…");
    expect(storageProgressText({ done: 3, total: 1200, label: "threads" })).toBe("Measuring 3 of 1,200 threads…");
    expect(storageProgressText({ done: 0, total: 0, label: "tables" })).toBe("tables…");
    expect(reportOf(null)).toBeNull();
    expect(reportOf({ layout: 3 })).toBeNull();
    expect(reportOf(report() as never)?.thread_count).toBe(2);
    expect(growthTitle(size("c9", "", 1014), 2)).toBe("#3 c9: 1.0 KB");
  });
});
