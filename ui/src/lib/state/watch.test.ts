import { describe, expect, it } from "vitest";
import { changedBy, changeText, cursorOf, neighbour, trunkKey, visibleChanges, watchPath } from "./watch";
import { buildTree } from "./tree";
import { change } from "./testwatch";

describe("watchPath", () => {
  it("joins a channel and a tree path in the backend's syntax", () => {
    expect(watchPath("messages")).toBe("messages");
    expect(watchPath("messages", "[2].content")).toBe("messages[2].content");
    expect(watchPath("plan", "steps")).toBe("plan.steps");
    expect(watchPath("plan", '["a.b"]')).toBe('plan["a.b"]');
    expect(watchPath("branch:to:agent")).toBe("branch:to:agent");
    expect(watchPath("my channel", "x")).toBe('["my channel"].x');
  });

  it("takes the paths the value tree gives its nodes", () => {
    const tree = buildTree({ steps: [{ title: "a" }], "a.b": 1 });
    const paths = tree.children.flatMap((c) => [c.path, ...c.children.flatMap((g) => [g.path, ...g.children.map((x) => x.path)])]);
    expect(paths.map((p) => watchPath("plan", p))).toEqual(["plan.steps", "plan.steps[0]", "plan.steps[0].title", 'plan["a.b"]']);
  });
});

describe("the watch list", () => {
  const list = [change("a"), change("b", { on_head_branch: false }), change("c")];

  it("lists every change, or those on the head's branch", () => {
    expect(visibleChanges(list, false).map((c) => c.checkpoint_id)).toEqual(["a", "b", "c"]);
    expect(visibleChanges(list, true).map((c) => c.checkpoint_id)).toEqual(["a", "c"]);
  });

  it("finds the selected change", () => {
    expect(cursorOf(list, "b")).toBe(1);
    expect(cursorOf(list, "zz")).toBe(-1);
    expect(cursorOf(list, null)).toBe(-1);
  });

  it("steps to the previous and next change, stopping at the ends", () => {
    expect(neighbour(3, 1, 1)).toBe(2);
    expect(neighbour(3, 1, -1)).toBe(0);
    expect(neighbour(3, 2, 1)).toBeNull();
    expect(neighbour(3, 0, -1)).toBeNull();
    expect(neighbour(3, -1, 1)).toBe(0);
    expect(neighbour(3, -1, -1)).toBe(2);
    expect(neighbour(0, -1, 1)).toBeNull();
  });

  it("says who made a change and what it left", () => {
    const w = (node: string | null) => ({ task_id: "t", node, idx: 0, channel: "x", value: { value: 1, truncated: false, size: 1, preview: "1" } });
    expect(changedBy(change("a", { writes: [w("agent"), w("agent"), w("tools")] }))).toBe("agent, tools");
    expect(changedBy(change("a", { writes: [w(null)] }))).toBe("?");
    expect(changedBy(change("a", { source: "update" }))).toBe("(update)");
    expect(changedBy(change("a", { source: null }))).toBe("–");
    expect(changeText(change("a"))).toBe("1");
    expect(changeText(change("a", { kind: "removed", value: null }))).toBe("(removed)");
  });
});

describe("trunkKey", () => {
  it("is the branch of lane 0 at the oldest row", () => {
    expect(trunkKey([{ lane: 1, branch_key: "f" }, { lane: 0, branch_key: "t" }, { lane: 0, branch_key: "r" }])).toBe("r");
    expect(trunkKey([])).toBe("");
  });
});
