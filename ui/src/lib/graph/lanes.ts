// Drawing the lane layout the engine computed (flashback_engine::layout): rows newest first,
// each with its dot's lane and the line segments from it down to the next row.
//
// Every row is drawn on its own (so only visible rows are drawn, however long the thread):
// its SVG shows the lower half of the previous row's segments and the upper half of its own.
//
//   y=-H/2 ·· prev row's dot        (previous row's segments start here)
//   y=0    ┌───────────────┐        this row's box
//   y=H/2  │   ●           │        this row's dot; its own segments start here
//   y=H    └───────────────┘
//   y=3H/2 ·· next row's dot

import type { Edge, GraphRow } from "../ipc/bindings";

export const ROW_HEIGHT = 28;
export const LANE_WIDTH = 16;
export const LANE_PAD = 12;
export const PALETTE_SIZE = 8;

/** x of a lane's centre. */
export function laneX(lane: number): number {
  return LANE_PAD + lane * LANE_WIDTH;
}

/** Width of the graph column for `width` lanes. */
export function graphWidth(width: number): number {
  return LANE_PAD * 2 + Math.max(0, width - 1) * LANE_WIDTH;
}

/** The colour slot of a lane (CSS var --lane-N). */
export function laneColor(lane: number): number {
  return lane % PALETTE_SIZE;
}

export interface Segment {
  /** SVG path in the row's own coordinates. */
  d: string;
  /** Dashed (a subgraph's link to the checkpoint that spawned it). */
  dashed: boolean;
  /** Colour slot. */
  color: number;
}

function path(edge: Edge, y0: number, y1: number): string {
  const x0 = laneX(edge.from);
  const x1 = laneX(edge.to);
  if (x0 === x1) return `M${x0} ${y0}V${y1}`;
  const mid = (y0 + y1) / 2;
  return `M${x0} ${y0}C${x0} ${mid} ${x1} ${mid} ${x1} ${y1}`;
}

function segment(edge: Edge, y0: number): Segment {
  return {
    d: path(edge, y0, y0 + ROW_HEIGHT),
    dashed: edge.kind === "subgraph",
    color: laneColor(edge.from === edge.to ? edge.from : Math.max(edge.from, edge.to)),
  };
}

/** Everything to draw in row `i`'s box (its incoming and outgoing halves). */
export function rowSegments(rows: readonly GraphRow[], i: number): Segment[] {
  const out: Segment[] = [];
  if (i > 0) {
    for (const e of rows[i - 1].edges) out.push(segment(e, -ROW_HEIGHT / 2));
  }
  for (const e of rows[i].edges) out.push(segment(e, ROW_HEIGHT / 2));
  return out;
}

/** The rows to render for a scroll position: [start, end) with some overscan. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  total: number,
  overscan = 10,
  rowHeight = ROW_HEIGHT,
): [number, number] {
  // A scroll position past the end (the list just shrank; the browser clamps it a moment later)
  // counts as the end, so the window never starts beyond the last row.
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, total * rowHeight - viewportHeight));
  const first = Math.floor(top / rowHeight);
  const last = Math.ceil((top + viewportHeight) / rowHeight);
  return [Math.max(0, first - overscan), Math.min(total, last + overscan)];
}

/** The scrollTop that brings row `i` into view (unchanged when it already is). */
export function scrollToRow(i: number, scrollTop: number, viewportHeight: number): number {
  const top = i * ROW_HEIGHT;
  if (top < scrollTop) return top;
  if (top + ROW_HEIGHT > scrollTop + viewportHeight) return top + ROW_HEIGHT - viewportHeight;
  return scrollTop;
}

/** What kind of dot a row gets. */
export type DotKind = "head" | "fork" | "flashback" | "subgraph" | "plain";

export function dotKind(row: GraphRow): DotKind {
  if (row.head) return "head";
  if (row.flashback_action) return "flashback";
  if (row.source === "fork" || row.source === "update") return "fork";
  if (row.ns !== "") return "subgraph";
  return "plain";
}

/** A short label for a checkpoint id (uuid6: the time part changes, the rest repeats). */
export function shortId(id: string): string {
  const parts = id.split("-");
  return parts.length === 5 ? `${parts[1]}-${parts[2]}-${parts[4].slice(0, 4)}` : id.slice(0, 14);
}
