import { describe, expect, it } from "vitest";
import {
  branchText,
  byteStep,
  channelBars,
  growthBars,
  growthEntries,
  growthLabel,
  growthNamespaces,
  growthTitle,
  kindToken,
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
import { row } from "../graph/testrows";
import { formatBytes } from "./format";

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

  it("charts the sizes of one namespace oldest first without the DAG; a bar selects its checkpoint on the Storage tab", () => {
    const r = report({ thread_id: "t1", growth: [size("c1", "", 100), size("s1", "sub:1", 50), size("c2", "", 300, 20)] });
    expect(growthNamespaces(r)).toEqual(["", "sub:1"]);
    const b = growthBars(r, "");
    expect(b.labels).toEqual(["c1", "c2"]);
    expect(b.series.map((s) => s.label)).toEqual(["Document", "Metadata", "Writes"]);
    expect(b.totals).toEqual([110, 330]);
    expect(b.opens[1]).toEqual({ screen: "thread", thread: "t1", checkpoint: { ns: "", id: "c2" }, tab: "storage" });
    expect(growthBars(r, "sub:1").labels).toEqual(["s1"]);
  });

  it("puts the bars in the DAG's row order, labelled as the rows, naming node and branch (issue 33)", () => {
    // A thread forked at step 1: the DAG shows the fork's tip on top, then main's tip, then
    // their common parent — while time order interleaves the branches.
    const id = (n: number) => `1f0a0000-000${n}-6000-8000-${n}abc00000000`;
    const r = report({ thread_id: "t1", growth: [size(id(1), "", 100), size(id(2), "", 200), size(id(3), "", 300), size(id(4), "", 400)] });
    const rows = [
      row(id(4), 1, { step: 2, ran: ["tools"], branch_key: id(4), branch_label: "fork", source: "loop" }),
      row(id(2), 0, { step: 2, ran: ["agent"], branch_key: id(1) }),
      row(id(1), 0, { step: 1, source: "input", branch_key: id(1) }),
    ];
    const entries = growthEntries(r, "", rows);
    expect(entries.map((e) => e.size.checkpoint_id)).toEqual([id(4), id(2), id(1), id(3)]);
    expect(entries.map(growthLabel)).toEqual(["2 tools 0004-6000-4abc", "2 agent 0002-6000-2abc", "1 input 0001-6000-1abc", "0003-6000-3abc"]);
    expect(growthBars(r, "", rows).totals).toEqual([410, 210, 110, 310]);
    expect(branchText(rows[1], rows)).toBe("main branch");
    expect(branchText(rows[0], rows)).toBe("fork branch starting at 0004-6000-4abc");
    expect(growthTitle(entries[0], rows)).toBe(`tools · step 2 · fork branch starting at 0004-6000-4abc · 0004-6000-4abc: ${formatBytes(410)}`);
    expect(growthTitle(entries[2], rows)).toBe(`source input · step 1 · main branch · 0001-6000-1abc: ${formatBytes(110)}`);
    expect(growthTitle(entries[3], rows)).toBe(`0003-6000-3abc: ${formatBytes(310)} (not shown in the graph)`);
    // A row of another namespace is not a bar of this one.
    expect(growthEntries(r, "", [row(id(2), 0, { ns: "sub:1" })]).map((e) => e.row)).toEqual([null, null, null, null]);
  });

  it("gives every series a data kind: the same bytes, the same colour, in every chart (issue 33)", () => {
    const kinds = (b: { series: { label: string; kind: string }[] }) => Object.fromEntries(b.series.map((s) => [s.label, s.kind]));
    const r = report({ thread_id: "t1", totals: usage(1, 1, 1, 1), growth: [{ ...size("c1", "", 100, 5), blobs: { count: 1, bytes: 7 } }] });
    expect(kinds(threadBars(report({ by_thread: [{ key: "a", usage: usage(1, 2, 3, 4) }] })))).toEqual({ Documents: "document", Metadata: "metadata", Blobs: "blob", Writes: "write" });
    expect(kinds(growthBars(r, ""))).toEqual({ Document: "document", Metadata: "metadata", "Blobs introduced": "blob", Writes: "write" });
    expect(kinds(channelBars(report()))).toEqual({ "Inline (documents)": "document", Writes: "write" });
    expect(kinds(nodeBars(report()))).toEqual({ Writes: "write" });
    expect(usageParts(usage(1, 1, 1, 1)).map((p) => kindToken(p.kind))).toEqual(["--kind-document", "--kind-metadata", "--kind-blob", "--kind-write"]);
    expect(totalsLines(report()).map((l) => l.kind ?? null)).toEqual([null, null, "document", "metadata", "blob", "write", null]);
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
    expect(lines.map((l) => l.label)).toEqual(["Total", "Threads", "Documents", "Metadata", "Blobs", "Writes", "File"]);
    expect(lines[0].value).toBe("3.6 kB");
    expect(lines[6].value).toBe("41.0 kB · 8.2 kB free (a VACUUM returns it)");
    const pg = totalsLines(
      report({ thread_id: "t", space: { sqlite: null, relations: [{ table: "checkpoint_blobs", total_bytes: 3 << 20, table_bytes: 1 << 20, toast_bytes: 1 << 20, index_bytes: 1 << 20 }] } }),
    );
    expect(pg.map((l) => l.label)).not.toContain("Threads");
    expect(pg[pg.length - 1].value).toBe("3.1 MB on disk (table 1.0 MB, TOAST 1.0 MB, indexes 1.0 MB)");
  });

  it("says what is orphaned, and what grows quadratically", () => {
    expect(orphansText(report())).toBeNull();
    const r = report({ orphans: { writes: { count: 2, bytes: 2048 }, blobs: { count: 1, bytes: 10 } } });
    expect(orphansText(r)).toBe("Orphaned: 2 writes (2.0 kB) whose checkpoint is gone; 1 blob (10 B) no checkpoint names.");
    expect(quadraticText(report().quadratic[0])).toBe("stored whole 5 times: 5.0 kB in all, 1.5 kB stored once");
  });

  it("steps byte axes in round decimal units (1 kB = 1000 B)", () => {
    expect(byteStep(341_000)).toBe(100_000);
    expect(byteStep(3400)).toBe(1000);
    expect(byteStep(700)).toBe(200);
    expect(byteStep(135e9)).toBe(50e9);
    expect(byteStep(1_500_000)).toBe(500_000);
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
  });
});
