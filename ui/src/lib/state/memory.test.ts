import { describe, expect, it } from "vitest";
import {
  buildNamespaceTree,
  checkKey,
  checkTtl,
  checkValue,
  duration,
  formatMinutes,
  formatNamespace,
  homeScreen,
  isUnder,
  itemId,
  parseNamespace,
  sameItem,
  totalItems,
  ttlBadge,
  vectorsBadge,
  type NsNode,
} from "./memory";

const ns = (path: string, items: number) => ({ namespace: path.split("/"), items });
const shape = (nodes: NsNode[]): unknown => nodes.map((n) => [n.label, n.own, n.total, ...(n.children.length ? [shape(n.children)] : [])]);

describe("namespace tree", () => {
  it("nests labels, rolls counts up to parents and sorts siblings", () => {
    const tree = buildNamespaceTree([ns("users/u-2", 1), ns("users/u-1/prefs", 2), ns("docs", 4), ns("users/u-1", 3), ns("agents/a/b", 1)]);
    expect(shape(tree)).toEqual([
      ["agents", 0, 1, [["a", 0, 1, [["b", 1, 1]]]]],
      ["docs", 4, 4],
      ["users", 0, 6, [["u-1", 3, 5, [["prefs", 2, 2]]], ["u-2", 1, 1]]],
    ]);
    expect(tree[2].children[0].children[0].path).toEqual(["users", "u-1", "prefs"]);
    expect(totalItems([ns("a", 2), ns("a/b", 5)])).toBe(7);
  });

  it("is empty for an empty store, and sorts by code point (not locale)", () => {
    expect(buildNamespaceTree([])).toEqual([]);
    expect(buildNamespaceTree([ns("b", 1), ns("B", 1), ns("a", 1)]).map((n) => n.label)).toEqual(["B", "a", "b"]);
  });
});

describe("namespace paths", () => {
  it("parses and formats users/u-1 ⇄ [users, u-1]", () => {
    expect(parseNamespace("users/u-1")).toEqual({ ok: true, namespace: ["users", "u-1"] });
    expect(parseNamespace(" /users / u-1/ ")).toEqual({ ok: true, namespace: ["users", "u-1"] });
    expect(formatNamespace(["users", "u-1"])).toBe("users/u-1");
  });

  it("refuses what a put refuses, with the reason", () => {
    expect(parseNamespace("  ")).toEqual({ ok: false, message: "The namespace cannot be empty." });
    expect(parseNamespace("users//u-1")).toEqual({ ok: false, message: "Label 2 of the namespace is empty." });
    const dot = parseNamespace("users/u.1");
    expect(dot.ok).toBe(false);
    expect(!dot.ok && dot.message).toContain('"u.1" contains a dot');
    expect(parseNamespace("langgraph/x").ok).toBe(false);
    expect(parseNamespace("x/langgraph").ok).toBe(true);
  });

  it("matches prefixes on whole labels and compares items", () => {
    expect(isUnder(["users", "u-1"], ["users"])).toBe(true);
    expect(isUnder(["users", "u-1"], [])).toBe(true);
    expect(isUnder(["users2"], ["users"])).toBe(false);
    expect(isUnder(["users"], ["users", "u-1"])).toBe(false);
    const a = { namespace: ["users", "u-1"], key: "k" };
    expect(sameItem(a, { namespace: ["users", "u-1"], key: "k" })).toBe(true);
    expect(sameItem(a, { namespace: ["users"], key: "k" })).toBe(false);
    expect(sameItem(a, { namespace: ["users", "u-1"], key: "j" })).toBe(false);
    expect(sameItem(null, a)).toBe(false);
    expect(itemId({ namespace: ["a/b"], key: "k" })).not.toBe(itemId({ namespace: ["a", "b"], key: "k" }));
    expect(itemId(a)).toBe(itemId({ namespace: ["users", "u-1"], key: "k" }));
  });
});

describe("badges", () => {
  const now = Date.parse("2026-03-10T12:00:00Z");

  it("says when an item expires, relative to now", () => {
    expect(ttlBadge({ expires_at: "2026-03-10T15:00:00+00:00", expired: false, ttl_minutes: 240 }, now)).toEqual({
      text: "expires in 3 h",
      kind: "ttl",
      title: "TTL 4 h; expires at 2026-03-10T15:00:00+00:00",
    });
    expect(ttlBadge({ expires_at: "2026-03-10T12:00:40Z", expired: false }, now)?.text).toBe("expires in 40 s");
    expect(ttlBadge({ expires_at: "2026-03-10T12:30:00Z", expired: false }, now)?.text).toBe("expires in 30 min");
  });

  it("says how long ago an expired item expired; none without a TTL", () => {
    expect(ttlBadge({ expires_at: "2026-03-08T11:00:00Z", expired: true, ttl_minutes: 60 }, now)).toMatchObject({
      text: "expired 2 d ago",
      kind: "expired",
    });
    // Past by the clock although the backend said not yet (read a moment ago).
    expect(ttlBadge({ expires_at: "2026-03-10T11:59:00Z", expired: false }, now)?.kind).toBe("expired");
    expect(ttlBadge({ expires_at: null, expired: false }, now)).toBeNull();
    expect(ttlBadge({ expired: false }, now)).toBeNull();
  });

  it("formats durations and TTL minutes", () => {
    expect(duration(59_999)).toBe("59 s");
    expect(duration(-7_200_000)).toBe("2 h");
    expect(duration((2 * 60 + 59) * 60_000)).toBe("3 h"); // a 3 h TTL set a minute ago
    expect(duration(45 * 60_000 + 20_000)).toBe("45 min");
    expect(duration(89 * 60_000)).toBe("1 h");
    expect(duration(36 * 3600_000)).toBe("2 d");
    expect(formatMinutes(1440)).toBe("1 d");
    expect(formatMinutes(180)).toBe("3 h");
    expect(formatMinutes(90)).toBe("90 min");
  });

  it("names the vectors and their dimensions", () => {
    expect(vectorsBadge(undefined)).toBeNull();
    expect(vectorsBadge([])).toBeNull();
    expect(vectorsBadge([{ field: "$", dims: 8 }])).toEqual({ text: "embedding · 8 dims", title: "$ (the whole value): 8 dims" });
    expect(vectorsBadge([{ field: "text", dims: 8 }, { field: "tags.0", dims: 8 }])?.text).toBe("2 embeddings · 8 dims");
    expect(vectorsBadge([{ field: "text", dims: 8 }, { field: "x", dims: 4 }])?.text).toBe("2 embeddings");
    expect(vectorsBadge([{ field: "text", dims: null }])?.text).toBe("embedding");
  });
});

describe("checking a put", () => {
  it("accepts a JSON object", () => {
    expect(checkValue('{"theme": "dark", "n": [1, 2]}')).toEqual({ ok: true, value: { theme: "dark", n: [1, 2] } });
  });

  it("gives one line with the position for bad JSON", () => {
    const r = checkValue('{\n  "a": 1,\n  "b": }');
    expect(r).toEqual({ ok: false, error: "JSON error at line 3, column 8: unexpected character \"}\"" });
    expect(checkValue('{"a": 1,}')).toMatchObject({ ok: false });
  });

  it("refuses a value that is not an object", () => {
    expect(checkValue("[1]")).toEqual({ ok: false, error: "The value must be a JSON object ({…}), not a list: LangGraph's store keeps dicts." });
    expect(checkValue("null")).toMatchObject({ ok: false, error: expect.stringContaining("not null") });
    expect(checkValue('"x"')).toMatchObject({ ok: false, error: expect.stringContaining("not string") });
  });

  it("checks the TTL and the key", () => {
    expect(checkTtl("")).toEqual({ ok: true, ttl: null });
    expect(checkTtl(" 90 ")).toEqual({ ok: true, ttl: 90 });
    expect(checkTtl("0.5")).toEqual({ ok: true, ttl: 0.5 });
    for (const bad of ["0", "-5", "abc", "1e3", "Infinity"]) expect(checkTtl(bad).ok).toBe(false);
    expect(checkTtl("600000000")).toMatchObject({ ok: false, error: expect.stringContaining("thousand years") });
    expect(checkKey(" ")).toBe("The key cannot be empty.");
    expect(checkKey("prefs")).toBeNull();
  });
});

describe("home screen", () => {
  it("opens a store-only database on its Memory, others on their threads", () => {
    expect(homeScreen({ holds: "store" })).toBe("memory");
    expect(homeScreen({ holds: "mixed" })).toBe("threads");
    expect(homeScreen({ holds: "checkpoints" })).toBe("threads");
  });
});
