import { describe, expect, it } from "vitest";
import type { ChannelDiff, ItemDiff } from "../ipc/bindings";
import { channelSummary, collapseUnchanged, itemLabel, meetingText, messageShortId, textChange, tokens, wordDiff } from "./diff";

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

describe("message lines and where the branches meet", () => {
  const msg = (id: string | null, content: string, extra: object = {}) => ({
    $type: "langchain_core.messages.ai.AIMessage",
    type: "ai",
    content,
    ...(id ? { id } : {}),
    ...extra,
  });

  it("reads a message by its role and text first, its id shortened after (the full id kept)", () => {
    const id = "run-8b6a1f3e-6c2d-4e5f-9a7b-0c1d2e3f4a5b";
    const l = itemLabel({ a: null, b: msg(id, "The sum is 5.") });
    expect(l).toEqual({ role: "ai", text: "The sum is 5.", shortId: "8b6a1f3e", id });
    expect(l.text.startsWith(id)).toBe(false);
    const calls = itemLabel({ a: msg("m1", ""), b: null });
    expect(calls).toEqual({ role: "ai", text: "", shortId: "m1", id: "m1" });
    const tools = itemLabel({ a: null, b: msg(null, "", { tool_calls: [{ name: "add", args: {}, id: "c" }] }) });
    expect(tools).toEqual({ role: "ai", text: "[calls add]", shortId: "", id: "" });
    expect(itemLabel({ a: null, b: { x: 1 } })).toEqual({ role: null, text: "{1 key}", shortId: "", id: "" });
  });

  it("shortens message ids as the CLI's diff does", () => {
    expect(messageShortId("human-1")).toBe("human-1");
    expect(messageShortId("8b6a1f3e-6c2d-4e5f-9a7b-0c1d2e3f4a5b")).toBe("8b6a1f3e");
    expect(messageShortId("lc_run--0199aabb-cc")).toBe("0199aabb");
    expect(messageShortId("ai-turn2-final")).toBe("ai-turn2");
  });

  it("says where A's and B's lines meet", () => {
    const a = "1f0a0000-0001-6000-8000-100000000000";
    const b = "1f0a0000-0002-6000-8000-200000000000";
    const m = "1f0a0000-0003-6000-8000-300000000000";
    expect(meetingText({ a_id: a, b_id: b, common_ancestor: { checkpoint_id: m, step: 3 } })).toBe("branches meet at 0003-6000-3000 step 3");
    expect(meetingText({ a_id: a, b_id: b, common_ancestor: { checkpoint_id: a, step: 1 } })).toBe("B descends from A (one line)");
    expect(meetingText({ a_id: a, b_id: b, common_ancestor: { checkpoint_id: b, step: 1 } })).toBe("A descends from B (one line)");
    expect(meetingText({ a_id: a, b_id: b, common_ancestor: null })).toBeNull();
  });
});
