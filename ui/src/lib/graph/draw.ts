// What the graph column draws for the rows and lanes in view, in the whole list's coordinates
// (row i's dot at y = rowY(i)): each row's line down to its parent's row as one path — a
// straight run down its lane, then a curve into the parent's lane over the last row — and the
// dots on top.
//
// Lines of one colour and dash share one <path> (many subpaths), so the DOM holds at most
// 2 · PALETTE_SIZE paths plus one dot per row in view, however many lines pass: 5,000 lines
// converging into a fork point are one path per colour, not 5,000 elements.

import type { GraphRow } from "../ipc/bindings";
import { branchColor, branchColors, dotKind, laneX, ROW_HEIGHT, rowY, type DotKind } from "./lanes";
import type { LineIndex } from "./lines";

/** The dash pattern of subgraph links (CSS `stroke-dasharray: 3 3`): one period. */
export const DASH_PERIOD = 6;

export interface LinePath {
  /** SVG path data: one subpath per line. */
  d: string;
  /** Colour slot. */
  color: number;
  /** Dashed (a subgraph's link to the checkpoint that spawned it). */
  dashed: boolean;
}

export interface Dot {
  row: number;
  cx: number;
  cy: number;
  kind: DotKind;
  color: number;
  /** A fork point: drawn with a ring. */
  fork: boolean;
}

export interface Drawing {
  paths: LinePath[];
  dots: Dot[];
}

/**
 * Everything to draw for rows [start, end) and lanes [lanes[0], lanes[1]]. Lines are cut to the
 * rows in view (plus one row each side), at whole dash periods from their start so that dashes
 * stay put while scrolling.
 */
export function drawWindow(
  rows: readonly GraphRow[],
  index: LineIndex,
  start: number,
  end: number,
  lanes: [number, number],
  merges: readonly [number, number][] = [],
): Drawing {
  const slots = branchColors(rows);
  const colorOf = (r: GraphRow) => slots.get(r.branch_key) ?? branchColor(r.branch_key, false);
  const [lo, hi] = lanes;
  const groups = new Map<string, LinePath>();
  const add = (color: number, dashed: boolean, d: string) => {
    const key = `${color}${dashed ? "d" : ""}`;
    const g = groups.get(key);
    if (g) g.d += d;
    else groups.set(key, { d, color, dashed });
  };
  const top = (start - 1) * ROW_HEIGHT;
  const bottom = (end + 1) * ROW_HEIGHT;
  for (const c of index.crossing(start, end)) {
    const r = rows[c];
    const p = r.parent_row!;
    const from = r.lane;
    const to = r.parent_lane ?? from;
    const dashed = r.parent_kind === "subgraph";
    // The straight run: down to the parent's dot when the lane does not change, else to the
    // row above the parent.
    const runEnd = from === to ? p : p - 1;
    const x = laneX(from);
    if (from >= lo && from <= hi && runEnd > c) {
      let y0 = rowY(c);
      if (y0 < top) y0 += Math.floor((top - y0) / DASH_PERIOD) * DASH_PERIOD;
      const y1 = Math.min(rowY(runEnd), bottom);
      if (y1 > y0) add(colorOf(r), dashed, `M${x} ${y0}V${y1}`);
    }
    // The curve into the parent's lane, over the last row.
    if (from !== to && Math.max(from, to) >= lo && Math.min(from, to) <= hi && p - 1 < end) {
      const y0 = rowY(p - 1);
      const y1 = rowY(p);
      const mid = (y0 + y1) / 2;
      const x1 = laneX(to);
      add(colorOf(r), dashed, `M${x} ${y0}C${x} ${mid} ${x1} ${mid} ${x1} ${y1}`);
    }
  }
  // A merge's link to the checkpoint of branch B it took from: dashed, in B's colour.
  for (const [m, b] of merges) {
    if (b < start - 1 || m > end) continue;
    const x0 = laneX(rows[m].lane);
    const x1 = laneX(rows[b].lane);
    const [la, lb] = [rows[m].lane, rows[b].lane];
    if ((la < lo && lb < lo) || (la > hi && lb > hi)) continue;
    const y0 = rowY(m);
    const y1 = rowY(b);
    const mid = (y0 + y1) / 2;
    add(colorOf(rows[b]), true, `M${x0} ${y0}C${x0} ${mid} ${x1} ${mid} ${x1} ${y1}`);
  }
  const dots: Dot[] = [];
  for (let i = start; i < end; i++) {
    const r = rows[i];
    if (r.lane < lo || r.lane > hi) continue;
    dots.push({ row: i, cx: laneX(r.lane), cy: rowY(i), kind: dotKind(r), color: colorOf(r), fork: r.fork_point });
  }
  return { paths: [...groups.values()], dots };
}

/** Merges as [merge row, row it took from], for drawWindow. */
export function mergeLinks(rows: readonly GraphRow[]): [number, number][] {
  const out: [number, number][] = [];
  rows.forEach((r, i) => {
    if (r.merged_from_row !== null && r.merged_from_row !== undefined) out.push([i, r.merged_from_row]);
  });
  return out;
}
