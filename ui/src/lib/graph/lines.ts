// Finding the lines to draw in a window of rows.
//
// The engine gives each row only its own line: from the row down to its parent's row
// (`parent_row`), straight down the row's lane and bending into `parent_lane` on the way into
// the parent. The rows do not list the lines passing them (that was O(rows · lanes): 5,000
// siblings of one checkpoint made 12.5 million segments), so the view asks this index which
// lines cross the rows it shows.
//
// The index is a max segment tree over rows: each node holds the furthest parent row of the
// lines starting in its range. A query walks down only into nodes whose lines reach the
// window, so it costs O((k + 1) · log n) for k lines found; building it is O(n).

import type { GraphRow } from "../ipc/bindings";

export class LineIndex {
  /** Leaves start at `size`; node `k` has children `2k` and `2k + 1`. */
  private readonly size: number;
  /** Furthest parent row of the lines starting in each node's range (-1: none). */
  private readonly reach: Int32Array;

  constructor(rows: readonly GraphRow[]) {
    let size = 1;
    while (size < rows.length) size *= 2;
    this.size = size;
    this.reach = new Int32Array(2 * size).fill(-1);
    rows.forEach((r, i) => {
      if (r.parent_row !== null && r.parent_row > i) this.reach[size + i] = r.parent_row;
    });
    for (let k = size - 1; k >= 1; k--) this.reach[k] = Math.max(this.reach[2 * k], this.reach[2 * k + 1]);
  }

  /**
   * The rows whose line shows in rows [start, end): it starts above `end` and ends at or
   * below `start` (a line ending at `start` bends into it from the row above). Ascending.
   */
  crossing(start: number, end: number): number[] {
    const out: number[] = [];
    if (end <= 0 || this.reach[1] < start) return out;
    // Depth-first, left child last on the stack so rows come out in order.
    const stack: number[] = [1, 0, this.size];
    while (stack.length > 0) {
      const hi = stack.pop()!;
      const lo = stack.pop()!;
      const k = stack.pop()!;
      if (lo >= end || this.reach[k] < start) continue;
      if (hi - lo === 1) {
        out.push(lo);
        continue;
      }
      const mid = (lo + hi) / 2;
      stack.push(2 * k + 1, mid, hi, 2 * k, lo, mid);
    }
    return out;
  }
}
