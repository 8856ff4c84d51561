import { describe, expect, it } from "vitest";
import { columnWidth, dotKind, graphWidth, laneWindow, laneX, MAX_LANES_SHOWN, ROW_HEIGHT, rowY, scrollToLane, scrollToRow, shortId, visibleRange } from "./lanes";
import { row } from "./testrows";

describe("lanes", () => {
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
    expect(rowY(2)).toBe(2.5 * ROW_HEIGHT);
    expect(dotKind(row("h", 0, { head: true }))).toBe("head");
    expect(dotKind(row("f", 0, { flashback_action: "copy_fork" }))).toBe("flashback");
    expect(dotKind(row("u", 0, { source: "update" }))).toBe("fork");
    expect(dotKind(row("s", 0, { ns: "sub:1" }))).toBe("subgraph");
    expect(dotKind(row("p", 0))).toBe("plain");
    expect(shortId("1f1e641e-e3fb-6285-8003-dc4c38d1bc83")).toBe("e3fb-6285-dc4c");
    expect(shortId("abc")).toBe("abc");
  });

  it("caps the graph column and scrolls a wide graph sideways", () => {
    // A thread forked 5,000 times has 5,001 lanes; the column shows MAX_LANES_SHOWN of them.
    expect(columnWidth(3)).toBe(graphWidth(3));
    expect(columnWidth(5_001)).toBe(graphWidth(MAX_LANES_SHOWN));
    const view = columnWidth(5_001);
    // At the left edge: lanes 0 … MAX_LANES_SHOWN - 1, the next one partly, and a lane of margin.
    expect(laneWindow(0, view)).toEqual([0, MAX_LANES_SHOWN + 1]);
    // Scrolled to lane 4,000.
    const [first, last] = laneWindow(laneX(4_000) - 12, view);
    expect(first).toBeLessThanOrEqual(4_000);
    expect(first).toBeGreaterThanOrEqual(3_998);
    expect(last - first).toBeLessThanOrEqual(MAX_LANES_SHOWN + 3);
    // Selecting a row on lane 4,000 scrolls just enough to show it, and back.
    const s = scrollToLane(4_000, 0, view);
    expect(laneX(4_000) + 12).toBe(s + view);
    expect(scrollToLane(4_000, s, view)).toBe(s);
    expect(scrollToLane(0, s, view)).toBe(0);
    expect(scrollToLane(3, 0, view)).toBe(0);
  });
});
