import { describe, expect, it } from "vitest";
import { dotKind, graphWidth, laneX, ROW_HEIGHT, rowSegments, scrollToRow, shortId, visibleRange } from "./lanes";
import { row } from "./testrows";

describe("lanes", () => {
  // * c (lane 1)   * b (lane 0)
  // |/             converge at a
  // * a
  const rows = [row("c", 1, [[1, 0]]), row("b", 0, [[0, 0]]), row("a", 0, [])];

  it("draws each row's incoming and outgoing halves in its own box", () => {
    const top = rowSegments(rows, 0);
    expect(top).toHaveLength(1);
    expect(top[0].d).toBe(`M${laneX(1)} ${ROW_HEIGHT / 2}C${laneX(1)} ${ROW_HEIGHT} ${laneX(0)} ${ROW_HEIGHT} ${laneX(0)} ${ROW_HEIGHT * 1.5}`);
    const mid = rowSegments(rows, 1);
    // c's curve coming in, b's vertical line going out.
    expect(mid.map((s) => s.d)).toEqual([
      `M${laneX(1)} ${-ROW_HEIGHT / 2}C${laneX(1)} 0 ${laneX(0)} 0 ${laneX(0)} ${ROW_HEIGHT / 2}`,
      `M${laneX(0)} ${ROW_HEIGHT / 2}V${ROW_HEIGHT * 1.5}`,
    ]);
    expect(rowSegments(rows, 2).map((s) => s.d)).toEqual([`M${laneX(0)} ${-ROW_HEIGHT / 2}V${ROW_HEIGHT / 2}`]);
  });

  it("dashes subgraph links and colours converging lines by their branch", () => {
    const r = [row("s", 1, []), row("p", 0, [])];
    r[0].edges = [{ from: 1, to: 0, kind: "subgraph" }];
    const [seg] = rowSegments(r, 0);
    expect(seg.dashed).toBe(true);
    expect(seg.color).toBe(1);
  });

  it("renders only the visible window of a 20k-row thread", () => {
    const [start, end] = visibleRange(10_000 * ROW_HEIGHT, 600, 20_000, 5);
    expect(start).toBe(9_995);
    expect(end).toBe(10_000 + Math.ceil(600 / ROW_HEIGHT) + 5);
    expect(visibleRange(0, 600, 3)).toEqual([0, 3]);
    expect(visibleRange(-50, 100, 100, 0)).toEqual([0, 4]);
  });

  it("windows a list with its own row height (the threads table)", () => {
    // 24,000 threads of 36 px, scrolled to thread 12,000 in a 720 px view: 20 rows + overscan.
    expect(visibleRange(12_000 * 36, 720, 24_000, 15, 36)).toEqual([11_985, 12_035]);
    // Scrolled past the end (the list just shrank): the window is the end of the list.
    expect(visibleRange(99_999 * 36, 720, 30, 15, 36)).toEqual([0, 30]);
    expect(visibleRange(99_999 * 36, 720, 1_000, 0, 36)).toEqual([980, 1_000]);
  });

  it("scrolls just enough to show a row", () => {
    expect(scrollToRow(0, 100, 300)).toBe(0);
    expect(scrollToRow(5, 0, 300)).toBe(0);
    expect(scrollToRow(20, 0, 300)).toBe(21 * ROW_HEIGHT - 300);
  });

  it("sizes the column and classifies dots", () => {
    expect(graphWidth(1)).toBe(24);
    expect(graphWidth(3)).toBe(24 + 32);
    expect(dotKind(row("h", 0, [], { head: true }))).toBe("head");
    expect(dotKind(row("f", 0, [], { flashback_action: "copy_fork" }))).toBe("flashback");
    expect(dotKind(row("u", 0, [], { source: "update" }))).toBe("fork");
    expect(dotKind(row("s", 0, [], { ns: "sub:1" }))).toBe("subgraph");
    expect(dotKind(row("p", 0, []))).toBe("plain");
    expect(shortId("1f1e641e-e3fb-6285-8003-dc4c38d1bc83")).toBe("e3fb-6285-dc4c");
    expect(shortId("abc")).toBe("abc");
  });
});
