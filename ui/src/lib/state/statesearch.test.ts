import { describe, expect, it } from "vitest";
import { buildTree, type Json } from "./tree";
import { channelMarks, fullPath, highlight, markOf, searchState, skippedNote, stepIndex, valueText } from "./statesearch";

const state = (values: Record<string, Json>) => Object.entries(values).map(([channel, v]) => ({ channel, tree: buildTree(v) }));

const customer: Json = {
  $type: "fixture_types.Customer",
  name: "Ada",
  address: { $type: "fixture_types.Address", street: "1 Loop Rd", city: "Lovelace" },
  customer_id: { $type: "uuid.UUID", $value: "12345678123456781234567812345678" },
  labels: ["vip", "beta"],
};

describe("searching the state", () => {
  it("finds channel names, nested keys and scalar values, in the order shown", () => {
    const r = searchState(state({ customer, label: "a love letter", count: 3 }), "LOVE");
    expect(r.matches.map((m) => [m.channel, m.path, m.part])).toEqual([
      ["customer", "address.city", "value"],
      ["label", "", "value"],
    ]);
    expect(r.matches[0].ancestors).toEqual(["", "address"]);
    expect(r.perChannel).toEqual(new Map([["customer", 1], ["label", 1]]));
    const keys = searchState(state({ customer, count: 3 }), "c");
    expect(keys.matches.map((m) => `${m.channel}:${m.path}:${m.part}`)).toEqual([
      "customer::key",
      "customer:address.city:key",
      "customer:address.city:value",
      "customer:customer_id:key",
      "count::key",
    ]);
  });

  it("matches values as shown (dashed UUIDs, Python literals) and long strings in full", () => {
    expect(searchState(state({ customer }), "5678-1234").matches.map((m) => m.path)).toEqual(["customer_id"]);
    expect(searchState(state({ ok: true, none: null }), "true").matches.map((m) => m.channel)).toEqual(["ok"]);
    expect(searchState(state({ none: null }), "none").matches.map((m) => m.part)).toEqual(["key", "value"]);
    const long = `${"word ".repeat(100)}needle`;
    expect(buildTree(long).folded).toBe(true);
    expect(searchState(state({ text: long }), "needle").matches).toHaveLength(1);
  });

  it("does not match list indices or constructor positions as keys", () => {
    const r = searchState(state({ xs: [10, 20, 30], send: { $type: "langgraph.types.Send", $args: ["w", { k: 1 }] } }), "1");
    expect(r.matches.map((m) => `${m.channel}:${m.path}`)).toEqual(["xs:[0]", "send:$args[1].k"]);
  });

  it("lists what was not searched", () => {
    const big = { $too_large: { bytes: 9e8, reason: "value" }, $type: "str", $message: "too large: 858.3 MB" };
    const r = searchState(
      state({
        big_text: big,
        secret: { $type: "pydantic.types.SecretStr", $value: "**********", $secret: true },
        blob: { $type: "pickle", $opaque: true, size: 4 },
        ok: "fine",
      }),
      "x",
    );
    expect(r.skipped.map((s) => s.reason)).toEqual(["too large", "masked", "locked"]);
    expect(skippedNote(r)).toBe("Not searched: big_text (too large), secret (masked), blob (locked).");
    expect(skippedNote(searchState(state({ ok: "fine" }), "x"))).toBeNull();
    // The key of a value left out still matches.
    expect(searchState(state({ big_text: { deep: big } }), "deep").matches).toHaveLength(1);
  });

  it("finds nothing for an empty query", () => {
    expect(searchState(state({ customer }), "  ").matches).toEqual([]);
  });
});

describe("search marks and stepping", () => {
  it("marks every match of a channel and the current one", () => {
    const r = searchState(state({ a: { x: "vip", y: "vip" }, b: "vip" }), "vip");
    const m = channelMarks(r, "vip", "a", r.matches[1]);
    expect(markOf(m, "x", "value")).toBe("hit");
    expect(markOf(m, "y", "value")).toBe("current");
    expect(markOf(m, "y", "key")).toBeNull();
    expect(channelMarks(r, "vip", "c", null)).toBeUndefined();
    expect(markOf(undefined, "x", "value")).toBeNull();
  });

  it("steps forwards and backwards, wrapping", () => {
    expect(stepIndex(0, 3, 1)).toBe(1);
    expect(stepIndex(2, 3, 1)).toBe(0);
    expect(stepIndex(0, 3, -1)).toBe(2);
    expect(stepIndex(5, 0, 1)).toBe(0);
  });

  it("cuts text into matching parts", () => {
    expect(highlight("Love and LOVE", "love")).toEqual([
      { text: "Love", hit: true },
      { text: " and ", hit: false },
      { text: "LOVE", hit: true },
    ]);
    expect(highlight("abc", "")).toEqual([{ text: "abc", hit: false }]);
    expect(highlight("aaaa", "a", 2).map((p) => p.text)).toEqual(["a", "a", "aa"]);
  });

  it("names paths with their channel and gives the searchable text", () => {
    expect(fullPath("customer", "address.city")).toBe("customer.address.city");
    expect(fullPath("xs", "[0]")).toBe("xs[0]");
    expect(fullPath("count", "")).toBe("count");
    expect(valueText(buildTree({ a: 1 }))).toBeNull();
    expect(valueText(buildTree(false))).toBe("False");
  });
});
