import { describe, expect, it } from "vitest";
import { problemIndex, rowKey, unreadableSummary } from "./problems";

const p = (ns: string, id: string, problem: string) => ({ checkpoint_ns: ns, checkpoint_id: id, problem });

describe("problems", () => {
  it("indexes problems by namespace and id", () => {
    const idx = problemIndex([p("", "a", "corrupt checkpoint"), p("sub:1", "a", "bad blob")]);
    expect(idx.get(rowKey("", "a"))).toBe("corrupt checkpoint");
    expect(idx.get(rowKey("sub:1", "a"))).toBe("bad blob");
    expect(idx.get(rowKey("", "b"))).toBeUndefined();
    expect(problemIndex(undefined).size).toBe(0);
  });

  it("summarises none, one and many", () => {
    expect(unreadableSummary([])).toBeNull();
    expect(unreadableSummary(null)).toBeNull();
    expect(unreadableSummary([p("", "x", "not msgpack")])).toBe(
      "1 checkpoint could not be read in full and is marked ⚠; the rest of the thread is usable. First: x: not msgpack",
    );
    expect(unreadableSummary([p("", "x", "a"), p("", "y", "b")])).toMatch(/^2 checkpoints .* are marked ⚠/);
  });
});
