import { describe, expect, it } from "vitest";
import { row } from "./testrows";
import { branchOf, childIndex, move, stepForKey } from "./stepping";

// Rows newest first:
// 0 * f2   (lane 1, fork branch)
// 1 | * m3 (lane 0)
// 2 * | f1 (lane 1)
// 3 | * m2 (lane 0)
// 4 |/
//   * m1   (lane 0, fork point)
// 5 * m0
const rows = [
  row("f2", 1, { parent_row: 2 }),
  row("m3", 0, { parent_row: 3 }),
  row("f1", 1, { parent_row: 4 }),
  row("m2", 0, { parent_row: 4 }),
  row("m1", 0, { parent_row: 5, fork_point: true }),
  row("m0", 0),
];
const kids = childIndex(rows);

describe("stepping", () => {
  it("goes older and newer along the branch", () => {
    expect(move(rows, kids, 2, "older")).toBe(4);
    expect(move(rows, kids, 4, "older")).toBe(5);
    expect(move(rows, kids, 5, "older")).toBe(5);
    // From the fork point, newer stays on lane 0.
    expect(move(rows, kids, 4, "newer")).toBe(3);
    expect(move(rows, kids, 2, "newer")).toBe(0);
    expect(move(rows, kids, 0, "newer")).toBe(0);
  });

  it("crosses to the nearest checkpoint of the next branch", () => {
    expect(move(rows, kids, 3, "right")).toBe(2);
    expect(move(rows, kids, 1, "right")).toBe(0);
    expect(move(rows, kids, 2, "left")).toBe(1);
    expect(move(rows, kids, 1, "left")).toBe(1);
  });

  it("moves along the list with up and down, stopping at its ends", () => {
    expect(move(rows, kids, 3, "up")).toBe(2);
    expect(move(rows, kids, 0, "up")).toBe(0);
    expect(move(rows, kids, 3, "down")).toBe(4);
    expect(move(rows, kids, rows.length - 1, "down")).toBe(rows.length - 1);
  });

  it("jumps to the root and the tip", () => {
    expect(move(rows, kids, 0, "root")).toBe(5);
    expect(move(rows, kids, 5, "tip")).toBe(1);
  });

  it("lists a branch root first for the scrubber", () => {
    expect(branchOf(rows, kids, 2).map((i) => rows[i].id)).toEqual(["m0", "m1", "f1", "f2"]);
    expect(branchOf(rows, kids, 5).map((i) => rows[i].id)).toEqual(["m0", "m1", "m2", "m3"]);
    expect(branchOf(rows, kids, 9)).toEqual([]);
  });

  it("maps keys", () => {
    expect(stepForKey("j")).toBe("older");
    expect(stepForKey("ArrowRight")).toBe("right");
    expect(stepForKey("ArrowLeft")).toBe("left");
    expect(stepForKey("ArrowDown")).toBe("down");
    expect(stepForKey("ArrowUp")).toBe("up");
    expect(stepForKey("j")).toBe("older");
    expect(stepForKey("k")).toBe("newer");
    expect(stepForKey("x")).toBeNull();
  });

  it("stops at a subgraph's namespace when listing its branch", () => {
    const r = [row("s1", 1, { ns: "sub:1", parent_row: 1 }), row("p", 0)];
    expect(branchOf(r, childIndex(r), 0)).toEqual([0]);
    expect(move(r, childIndex(r), 0, "older")).toBe(1);
  });
});
