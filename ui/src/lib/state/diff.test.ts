import { describe, expect, it } from "vitest";
import type { ChannelDiff, ItemDiff } from "../ipc/bindings";
import { channelSummary, collapseUnchanged, textChange, tokens, wordDiff } from "./diff";

const item = (change: ItemDiff["change"], i: number): ItemDiff => ({ change, a_index: i, b_index: i, id: null, a: null, b: i });

describe("diff presentation", () => {
  it("diffs words, keeping whitespace", () => {
    expect(tokens("add(2, 3)")).toEqual(["add", "(", "2", ",", " ", "3", ")"]);
    expect(wordDiff("the sum is 5", "the sum is 10")).toEqual([
      { op: "=", text: "the sum is " },
      { op: "-", text: "5" },
      { op: "+", text: "10" },
    ]);
    expect(wordDiff("a b c", "a c")).toEqual([
      { op: "=", text: "a " },
      { op: "-", text: "b " },
      { op: "=", text: "c" },
    ]);
    expect(wordDiff("same", "same")).toEqual([{ op: "=", text: "same" }]);
    expect(wordDiff("", "")).toEqual([]);
  });

  it("falls back to a whole replace for huge texts", () => {
    const a = Array.from({ length: 1000 }, (_, i) => `a${i}`).join(" ");
    const b = Array.from({ length: 1000 }, (_, i) => `b${i}`).join(" ");
    const d = wordDiff(a, b);
    expect(d.map((p) => p.op)).toEqual(["-", "+"]);
  });

  it("summarises channel changes", () => {
    const c = (x: Partial<ChannelDiff>): ChannelDiff => ({ channel: "c", change: "changed", version_a: null, version_b: null, a: null, b: null, items: null, control: false, ...x });
    expect(channelSummary(c({ change: "added", b: 5 }))).toBe("added: 5");
    expect(channelSummary(c({ change: "removed", a: "x" }))).toBe('removed (was "x")');
    expect(channelSummary(c({ a: 1, b: 2 }))).toBe("1 → 2");
    expect(channelSummary(c({ items: [item("added", 0), item("added", 1), item("changed", 2)] }))).toBe("2 added, 1 changed");
  });

  it("shows text changes inside messages", () => {
    const m = (content: string) => ({ $type: "langchain_core.messages.ai.AIMessage", content });
    expect(textChange(m("it is 5"), m("it is 10"))?.filter((p) => p.op !== "=")).toEqual([
      { op: "-", text: "5" },
      { op: "+", text: "10" },
    ]);
    expect(textChange(1, 2)).toBeNull();
    expect(textChange(m("x"), m("x"))).toBeNull();
  });

  it("collapses long unchanged runs", () => {
    const items = [0, 1, 2, 3, 4, 5, 6].map((i) => item(i === 5 ? "added" : "unchanged", i));
    const rows = collapseUnchanged(items);
    expect(rows.map((r) => (r.kind === "skipped" ? `…${r.count}` : r.item.change[0]))).toEqual(["…4", "u", "a", "u"]);
  });
});
