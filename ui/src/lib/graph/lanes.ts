// The geometry of the lane layout the engine computed (flashback_engine::layout): rows newest
// first, each with its dot's lane and its line down to its parent's row (draw.ts draws the
// lines crossing the rows in view; lines.ts finds them).
//
//   y = i·H          ┌───────────────┐  row i's box
//   y = i·H + H/2    │   ●           │  row i's dot
//   y = (i+1)·H      └───────────────┘
//
// The graph column shows at most MAX_LANES_SHOWN lanes; a wider graph scrolls sideways
// inside it (a thread forked 5,000 times has 5,001 lanes), so the labels stay in view and only
// the lanes in view are drawn.

import type { GraphRow } from "../ipc/bindings";

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

/**
 * The colour slot of a branch from its key alone (a hash): the fallback for a key the thread's
 * rows do not hold. The trunk keeps slot 0. Two branches may share a slot: `branchColors` gives
 * the slots the graph uses.
 */
export function branchColor(key: string, trunk: boolean): number {
  if (trunk) return 0;
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return 1 + ((h >>> 0) % (PALETTE_SIZE - 1));
}

const slotsOf = new WeakMap<readonly GraphRow[], Map<string, number>>();

/**
 * The colour slot of every branch of a thread's rows (issue 33: two branches hashed to one
 * colour read as one). The trunk — the branch of the oldest row in lane 0 — has slot 0; the
 * other branches take slots 1…7 in the order of their keys (the id of their first checkpoint:
 * LangGraph's ids sort by time, so in the order they were made). So up to seven branches never
 * share a colour, and a branch keeps its colour when the thread grows (a new branch is newer,
 * so it comes last) and whatever lane it is drawn in.
 */
export function branchColors(rows: readonly GraphRow[]): Map<string, number> {
  let slots = slotsOf.get(rows);
  if (slots) return slots;
  let trunk: string | null = null;
  for (let i = rows.length - 1; i >= 0 && trunk === null; i--) if (rows[i].lane === 0) trunk = rows[i].branch_key;
  const others = [...new Set(rows.map((r) => r.branch_key))].filter((k) => k !== trunk).sort();
  slots = new Map(others.map((k, i) => [k, 1 + (i % (PALETTE_SIZE - 1))]));
  if (trunk !== null) slots.set(trunk, 0);
  slotsOf.set(rows, slots);
  return slots;
}

/** The most lanes the graph column shows at once. */
export const MAX_LANES_SHOWN = 12;

/** Width of the graph column on screen: the graph's width, up to MAX_LANES_SHOWN lanes. */
export function columnWidth(width: number): number {
  return Math.min(graphWidth(width), graphWidth(MAX_LANES_SHOWN));
}

/** y of row `i`'s dot. */
export function rowY(i: number): number {
  return i * ROW_HEIGHT + ROW_HEIGHT / 2;
}

/** The lanes [first, last] at least partly inside a sideways view of the graph column. */
export function laneWindow(scrollLeft: number, viewWidth: number): [number, number] {
  // One lane of margin each side: a fork ring reaches half a lane past its centre.
  const first = Math.floor((scrollLeft - LANE_PAD) / LANE_WIDTH) - 1;
  const last = Math.ceil((scrollLeft + viewWidth - LANE_PAD) / LANE_WIDTH) + 1;
  return [Math.max(0, first), Math.max(0, last)];
}

/** The scrollLeft that brings lane `lane` into a sideways view (unchanged when it already is). */
export function scrollToLane(lane: number, scrollLeft: number, viewWidth: number): number {
  const left = laneX(lane) - LANE_PAD;
  const right = laneX(lane) + LANE_PAD;
  if (left < scrollLeft) return Math.max(0, left);
  if (right > scrollLeft + viewWidth) return right - viewWidth;
  return scrollLeft;
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
