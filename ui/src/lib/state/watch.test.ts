import { describe, expect, it } from "vitest";
import { branchTip, changedBy, changeText, cursorOf, neighbour, trunkKey, visibleChanges, watchGroups, watchPath } from "./watch";
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

describe("the watch list's groups", () => {
  // 1 ─ 2 ─ 3 ─ 6 ─ 7      main line (key r), 7 the head
  //         └─ 4 ─ 5      a fork of 3 (key f)
  // └─ 8                  an edit of 1 (key e)
  const id = (n: number) => `1f0a0000-000${n}-6000-8000-${n}00000000000`;
  const [R, F, E] = [id(1), id(4), id(8)];
  const row = (n: number, parent: number | null, key: string, step: number, over: object = {}) => ({
    id: id(n),
    parent_id: parent === null ? null : id(parent),
    branch_key: key,
    branch_label: null as string | null,
    step,
    ns_head: false,
    ...over,
  });
  const rows = [
    row(8, 1, E, 1, { branch_label: "edit" }),
    row(7, 6, R, 4, { ns_head: true }),
    row(6, 3, R, 3),
    row(5, 4, F, 4, { branch_label: "fork" }),
    row(4, 3, F, 3),
    row(3, 2, R, 2),
    row(2, 1, R, 1),
    row(1, null, R, 0),
  ];
  const ch = (n: number, key: string, head: boolean) => change(id(n), { branch_key: key, on_head_branch: head });
  const names = (gs: ReturnType<typeof watchGroups>) => gs.map((g) => `${g.name}${g.fork ? ` (${g.fork})` : ""}: ${g.start}+${g.count}`);

  it("reads the head's line, then each branch named as the graph names it, with where it forks", () => {
    // As the backend lists them along the head's line.
    const list = [ch(1, R, true), ch(3, R, true), ch(6, R, true), ch(7, R, true), ch(4, F, false), ch(5, F, false), ch(8, E, false)];
    expect(names(watchGroups(list, rows, id(7), R))).toEqual([
      "Head's line: 0+4",
      "fork 0004-6000-4000 (forks at step 2 · 0003-6000-3000): 4+2",
      "edit 0008-6000-8000 (forks at step 0 · 0001-6000-1000): 6+1",
    ]);
  });

  it("reads the selected branch's line first; the main line after the fork point is a branch of its own", () => {
    const list = [ch(1, R, true), ch(3, R, true), ch(4, F, false), ch(5, F, false), ch(6, R, true), ch(7, R, true), ch(8, E, false)];
    const g = watchGroups(list, rows, id(5), R);
    expect(names(g)).toEqual([
      "Selected branch: 0+4",
      "main line (forks at step 2 · 0003-6000-3000): 4+2",
      "edit 0008-6000-8000 (forks at step 0 · 0001-6000-1000): 6+1",
    ]);
    expect(g.map((x) => x.line)).toEqual([true, false, false]);
    expect(g[0].key).toBe(F);
  });

  it("without rows, the head's branch is the line", () => {
    const list = [ch(1, R, true), ch(4, F, false), ch(5, F, false)];
    expect(names(watchGroups(list, [], null, R))).toEqual(["Head's line: 0+1", "branch 0004-6000-4000: 1+2"]);
    expect(watchGroups([], rows, id(7), R)).toEqual([]);
  });

  it("finds the tip of the selected branch in the watched namespace", () => {
    const r = [
      { id: "sub", ns: "s:1" },
      { id: "b", ns: "" },
      { id: "a", ns: "" },
    ];
    expect(branchTip(r, [2, 1, 0], "")).toBe("b");
    expect(branchTip(r, [2, 1, 0], "s:1")).toBe("sub");
    expect(branchTip(r, [], "")).toBeNull();
  });
});
