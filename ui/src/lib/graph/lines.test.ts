import { describe, expect, it } from "vitest";
import type { GraphRow } from "../ipc/bindings";
import { drawWindow, mergeLinks } from "./draw";
import { branchColor, branchColors, laneX, PALETTE_SIZE, ROW_HEIGHT, rowY } from "./lanes";
import { LineIndex } from "./lines";
import { linked, row } from "./testrows";

/** The rows whose line shows in rows [start, end), by brute force. */
function brute(rows: readonly GraphRow[], start: number, end: number): number[] {
  return rows.flatMap((r, i) => (r.parent_row !== null && r.parent_row > i && i < end && r.parent_row >= start ? [i] : []));
}

/** A small reproducible generator. */
function lcg(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % Math.max(1, n);
  };
}

/** One checkpoint forked `n` times: rows f(n-1) … f0 on lanes 1…n (the head f(n) on lane 0), then the fork point. */
function siblings(n: number): GraphRow[] {
  const rows = Array.from({ length: n + 1 }, (_, i) => row(`f${n - i}`, i, { parent_row: n + 1 }));
  rows.push(row("a", 0, { fork_point: true }));
  return linked(rows);
}

describe("LineIndex", () => {
  it("finds the lines crossing a window as brute force does", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = lcg(seed);
      const n = 1 + rand(120);
      const rows = Array.from({ length: n }, (_, i) =>
        row(`r${i}`, 0, { parent_row: i + 1 < n && rand(8) > 0 ? i + 1 + rand(Math.min(n - i - 1, 1 + rand(40))) : null }),
      );
      const index = new LineIndex(rows);
      for (let q = 0; q < 20; q++) {
        const start = rand(n + 2);
        const end = start + rand(n + 2);
        expect(index.crossing(start, end)).toEqual(brute(rows, start, end));
      }
    }
  });

  it("handles no rows, no lines and windows past either end", () => {
    expect(new LineIndex([]).crossing(0, 10)).toEqual([]);
    const chain = linked([row("b", 0, { parent_row: 1 }), row("a", 0)]);
    const index = new LineIndex(chain);
    expect(index.crossing(0, 1)).toEqual([0]);
    expect(index.crossing(1, 2)).toEqual([0]); // the line ends at row 1, coming in from above
    expect(index.crossing(2, 10)).toEqual([]);
    expect(index.crossing(-5, 0)).toEqual([]);
  });

  it("finds 5,000 sibling lines only where they are", () => {
    const rows = siblings(5_000);
    const index = new LineIndex(rows);
    // Near the top: the lines started in view or above it and still open (row i's line ends at the fork point).
    expect(index.crossing(0, 40)).toHaveLength(40);
    expect(index.crossing(2_000, 2_040)).toHaveLength(2_040);
    expect(index.crossing(5_001, 5_002)).toHaveLength(5_001);
  });
});

describe("drawWindow", () => {
  // 0 * c (lane 1)
  // 1 | * b (lane 0)
  //   |/
  // 2 * a
  const rows = linked([row("c", 1, { parent_row: 2 }), row("b", 0, { parent_row: 2 }), row("a", 0, { fork_point: true })]);

  it("draws each line as a straight run down its lane, then a curve into its parent's lane", () => {
    const d = drawWindow(rows, new LineIndex(rows), 0, 3, [0, 10]);
    const [y0, y1, y2] = [rowY(0), rowY(1), rowY(2)];
    const byColor = Object.fromEntries(d.paths.map((p) => [p.color, p.d]));
    expect(byColor[1]).toBe(`M${laneX(1)} ${y0}V${y1}M${laneX(1)} ${y1}C${laneX(1)} ${y1 + ROW_HEIGHT / 2} ${laneX(0)} ${y1 + ROW_HEIGHT / 2} ${laneX(0)} ${y2}`);
    expect(byColor[0]).toBe(`M${laneX(0)} ${y1}V${y2}`);
    expect(d.dots.map((x) => [x.row, x.cx, x.cy, x.fork])).toEqual([
      [0, laneX(1), y0, false],
      [1, laneX(0), y1, false],
      [2, laneX(0), y2, true],
    ]);
  });

  it("colours by branch, not lane: the trunk slot 0, the others 1…7 in the order they were made, never sharing a slot (issue 33)", () => {
    // Seven branches off the trunk, their keys out of order in the rows: slots follow the keys.
    const keys = ["k3", "k1", "k7", "k2", "k5", "k4", "k6"];
    const many = linked([...keys.map((k, i) => row(`b${k}`, i + 1, { parent_row: keys.length, branch_key: k })), row("a", 0, { branch_key: "t" })]);
    const slots = branchColors(many);
    expect(slots.get("t")).toBe(0);
    expect(["k1", "k2", "k3", "k4", "k5", "k6", "k7"].map((k) => slots.get(k))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // A newer branch (a later key) comes last: the others keep their colours; an eighth wraps.
    const grown = linked([row("b8", 8, { parent_row: 8, branch_key: "k8" }), ...many.map((r) => ({ ...r, parent_row: r.parent_row === null ? null : r.parent_row + 1 }))]);
    const again = branchColors(grown);
    expect(["k1", "k2", "k3", "k4", "k5", "k6", "k7"].every((k) => again.get(k) === slots.get(k))).toBe(true);
    expect(again.get("k8")).toBe(1);
    // The same rows, the same map (computed once).
    expect(branchColors(many)).toBe(slots);
    // A branch moved to another lane keeps its colour.
    const moved = linked([row("c", 3, { parent_row: 2, branch_key: "k1" }), row("b", 0, { parent_row: 2 }), row("a", 0)]);
    const d = drawWindow(moved, new LineIndex(moved), 0, 3, [0, 10]);
    expect(d.dots[0].color).toBe(1);
    expect(d.dots[2].color).toBe(0);
    // The hash, for a key the rows do not hold: the same every time, never the trunk's slot.
    expect(branchColor("anything", true)).toBe(0);
    const a = branchColor("1f1e641e-e93a-6d53-8001-9d3db27f99b4", false);
    expect(a).toBe(branchColor("1f1e641e-e93a-6d53-8001-9d3db27f99b4", false));
    expect(a).toBeGreaterThan(0);
    expect(a).toBeLessThan(PALETTE_SIZE);
  });

  it("links a merge to the checkpoint it took from, dashed in that branch's colour", () => {
    // 0 * m (lane 0, merge from b)   1 | * b (lane 1)   2 * a
    const r = linked([
      row("m", 0, { parent_row: 2, merged_from_row: 1 }),
      row("b", 1, { parent_row: 2, branch_key: "kb" }),
      row("a", 0, { fork_point: true }),
    ]);
    const links = mergeLinks(r);
    expect(links).toEqual([[0, 1]]);
    const d = drawWindow(r, new LineIndex(r), 0, 3, [0, 10], links);
    const dashed = d.paths.find((p) => p.dashed)!;
    expect(dashed.color).toBe(1);
    expect(dashed.d.startsWith(`M${laneX(0)} ${rowY(0)}C`)).toBe(true);
    expect(dashed.d.endsWith(`${laneX(1)} ${rowY(1)}`)).toBe(true);
    // Out of view: not drawn.
    expect(drawWindow(r, new LineIndex(r), 0, 3, [5, 10], links).paths.some((p) => p.dashed)).toBe(false);
  });

  it("dashes subgraph links", () => {
    const r = linked([row("s", 1, { parent_row: 1, parent_kind: "subgraph", ns: "sub:1" }), row("p", 0)]);
    const d = drawWindow(r, new LineIndex(r), 0, 2, [0, 10]);
    expect(d.paths).toHaveLength(1);
    expect(d.paths[0].dashed).toBe(true);
    expect(d.paths[0].color).toBe(1);
  });

  it("cuts long lines to the rows in view, at whole dash periods", () => {
    const r = linked([row("b", 0, { parent_row: 1_000, parent_kind: "subgraph" }), ...Array.from({ length: 999 }, (_, i) => row(`x${i}`, 1)), row("a", 0)]);
    const d = drawWindow(r, new LineIndex(r), 500, 520, [0, 10]);
    const line = d.paths.find((p) => p.dashed)!;
    const [, y0, y1] = /^M\S+ (\d+)V(\d+)$/.exec(line.d)!.map(Number);
    expect(y0).toBeLessThanOrEqual(499 * ROW_HEIGHT);
    expect(y0).toBeGreaterThan(499 * ROW_HEIGHT - 6);
    expect((y0 - rowY(0)) % 6).toBe(0);
    expect(y1).toBe(521 * ROW_HEIGHT);
  });

  it("keeps the DOM small for 5,000 siblings: one path per colour, only the lanes in view", () => {
    const rows = siblings(5_000);
    const index = new LineIndex(rows);
    // At the fork point every sibling's line curves into lane 0 (the head's runs straight down
    // it): all 5,000 curves reach lanes 0…21, in at most one path per colour.
    const atFork = drawWindow(rows, index, 4_980, 5_002, [0, 21]);
    expect(atFork.paths.length).toBeLessThanOrEqual(8);
    expect(atFork.paths.reduce((n, p) => n + p.d.split("C").length - 1, 0)).toBe(5_000);
    expect(atFork.dots.length).toBeLessThanOrEqual(22);
    // Near the top, scrolled sideways to lane 3,000: the lines of lanes 2,990…3,010 only.
    const top = drawWindow(rows, index, 2_980, 3_020, [2_990, 3_010]);
    expect(top.paths.reduce((n, p) => n + p.d.split("M").length - 1, 0)).toBe(21);
    expect(top.dots.map((x) => x.row)).toEqual(Array.from({ length: 21 }, (_, k) => 2_990 + k));
  });
});
