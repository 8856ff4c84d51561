// The topology view's layout, pure: each graph's nodes in layers by the step they are first
// reached at from `__start__` (`__end__` last), boxes centred per layer, a sub-agent's graph
// drawn inside the box of the node that ran it, and each transition as a line — down to a later
// layer, or (a loop: model → tools → model) out through the gap below its box, up the graph's
// right-hand side and in through the gap above the target, so that it crosses no box.

import type { ThreadTopology, TopoGraph, TopoNode } from "../ipc/bindings";
import { nodeName } from "./rowinfo";

export const START = "__start__";
export const END = "__end__";

/** Sizes (px). */
const CHAR_W = 7.2;
const NODE_H = 40;
/** START and END: one line. */
const TERM_H = 28;
const MIN_W = 76;
const PAD = 12;
/** The name and counts line at the top of a box that holds a sub-agent's graph. */
const HEAD_H = 40;
const GAP_X = 28;
const GAP_Y = 46;
/** Between the boxes and the first line going back up, between such lines, and after them
 * (for their counts). */
const LOOP_IN = 16;
const LOOP_STEP = 10;
const LOOP_LABEL = 30;

export interface TopoBox {
  /** The graph's path and the node's name (unique). */
  key: string;
  graph: string;
  node: TopoNode;
  x: number;
  y: number;
  w: number;
  h: number;
  /** The path of the sub-agent graph drawn inside it. */
  sub: string | null;
}

export interface Pt {
  x: number;
  y: number;
}

export interface TopoLine {
  graph: string;
  from: string;
  to: string;
  count: number;
  /** Down to a later layer (false: round the side, back up or across). */
  down: boolean;
  /** Down: the two ends (a curve between them); else the corners of the way round. */
  points: Pt[];
}

export interface TopoLayout {
  width: number;
  height: number;
  boxes: TopoBox[];
  lines: TopoLine[];
}

export const boxKey = (graph: string, name: string) => `${graph}\u0000${name}`;

/** A checkpoint namespace as the topology names its graph: task ids and call counters left out
 * (`tools:1a2b|model:3c4d|1` → `tools|model`). */
export function graphPath(ns: string): string {
  return ns
    .split("|")
    .filter((s) => s !== "" && !/^\d+$/.test(s))
    .map((s) => s.split(":")[0])
    .join("|");
}

/** What the box says of a node: `START`, `END` or its name (a middleware hook as
 * `Summarization · before model`). */
export function nodeLabel(name: string): string {
  return name === START ? "START" : name === END ? "END" : nodeName(name);
}

/** "×4 · ✕ 1 · ⏸ 2": runs, then failures, retries and interrupts when there were any. */
export function countsLabel(n: TopoNode): string {
  const parts = [`×${n.runs}`];
  if (n.failed) parts.push(`✕ ${n.failed}`);
  if (n.recovered) parts.push(`↻ ${n.recovered}`);
  if (n.interrupted + n.resumed) parts.push(`⏸ ${n.interrupted + n.resumed}`);
  return parts.join(" · ");
}

/** What a box says: its name and the counts line; START and END one line ("START ×2" after
 * several runs, END with how many finished). */
export function boxText(n: TopoNode): { name: string; counts: string | null } {
  if (n.name !== START && n.name !== END) return { name: nodeLabel(n.name), counts: countsLabel(n) };
  return { name: n.runs > 1 ? `${nodeLabel(n.name)} ×${n.runs}` : nodeLabel(n.name), counts: null };
}

/** The box's colour class: failed over waiting over recovered. */
export function nodeClass(n: TopoNode): string {
  if (n.failed) return "failed";
  if (n.interrupted) return "interrupted";
  if (n.recovered || n.resumed) return "recovered";
  return "";
}

/** Each node's layer: its distance from `__start__` (or from the nodes nothing leads to) along
 * the transitions, first reached first; nodes reached from none go below; `__end__` last. */
export function layers(g: TopoGraph): Map<string, number> {
  const names = g.nodes.map((n) => n.name).filter((n) => n !== END);
  const out = new Map<string, number>();
  const next = new Map<string, string[]>();
  for (const e of g.edges) if (e.to !== END) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const walk = (roots: string[], base: number) => {
    let level = roots.filter((r) => !out.has(r));
    let depth = base;
    while (level.length) {
      level.forEach((n) => out.set(n, depth));
      const seen = new Set<string>();
      level = level.flatMap((n) => next.get(n) ?? []).filter((n) => !out.has(n) && !seen.has(n) && seen.add(n));
      depth++;
    }
  };
  const entered = new Set(g.edges.map((e) => e.to));
  walk(names.includes(START) ? [START] : names.filter((n) => !entered.has(n)), 0);
  for (const n of names) if (!out.has(n)) walk([n], Math.max(-1, ...out.values()) + 1);
  if (g.nodes.some((n) => n.name === END)) out.set(END, Math.max(-1, ...out.values()) + 1);
  return out;
}

interface Placed {
  w: number;
  h: number;
  boxes: TopoBox[];
  lines: TopoLine[];
}

function shift(p: Placed, dx: number, dy: number): Placed {
  return {
    ...p,
    boxes: p.boxes.map((b) => ({ ...b, x: b.x + dx, y: b.y + dy })),
    lines: p.lines.map((l) => ({ ...l, points: l.points.map((q) => ({ x: q.x + dx, y: q.y + dy })) })),
  };
}

function place(t: ThreadTopology, g: TopoGraph, depth: number): Placed {
  const inner = new Map<string, Placed>();
  if (depth < 8) {
    for (const sub of t.graphs) {
      if (sub.parent === g.path && sub.node !== null) inner.set(sub.node, place(t, sub, depth + 1));
    }
  }
  const layer = layers(g);
  const rows: TopoNode[][] = [];
  for (const n of g.nodes) (rows[layer.get(n.name) ?? 0] ??= []).push(n);
  const size = (n: TopoNode) => {
    const t = boxText(n);
    const text = Math.max(t.name.length, t.counts?.length ?? 0) * CHAR_W + 2 * PAD;
    const sub = inner.get(n.name);
    const w = Math.max(MIN_W, Math.ceil(text), sub ? sub.w + 2 * PAD : 0);
    return { w, h: sub ? HEAD_H + sub.h + PAD : t.counts === null ? TERM_H : NODE_H };
  };
  const sizes = new Map(g.nodes.map((n) => [n.name, size(n)]));
  const rowW = (r: TopoNode[] = []) => r.reduce((s, n) => s + (sizes.get(n.name)?.w ?? 0), 0) + GAP_X * Math.max(0, r.length - 1);
  const inside = Math.max(0, ...rows.map(rowW));
  const boxes: TopoBox[] = [];
  const nested: Placed[] = [];
  // Each layer's top and bottom.
  const band = new Map<number, [number, number]>();
  let y = 0;
  for (const [i, r] of rows.entries()) {
    if (!r) continue;
    let x = (inside - rowW(r)) / 2;
    const h = Math.max(...r.map((n) => sizes.get(n.name)?.h ?? NODE_H));
    band.set(i, [y, y + h]);
    for (const n of r) {
      const s = sizes.get(n.name) ?? { w: MIN_W, h: NODE_H };
      const sub = inner.get(n.name);
      const sp = t.graphs.find((x) => x.parent === g.path && x.node === n.name);
      boxes.push({ key: boxKey(g.path, n.name), graph: g.path, node: n, x, y, w: s.w, h: s.h, sub: sub && sp ? sp.path : null });
      if (sub) nested.push(shift(sub, x + (s.w - sub.w) / 2, y + HEAD_H));
      x += s.w + GAP_X;
    }
    y += h + GAP_Y;
  }
  const at = new Map(boxes.map((b) => [b.node.name, b]));
  const lines: TopoLine[] = [];
  let loops = 0;
  let bottom = Math.max(0, y - GAP_Y);
  for (const e of g.edges) {
    const a = at.get(e.from);
    const b = at.get(e.to);
    if (!a || !b) continue;
    const [la, lb] = [layer.get(e.from) ?? 0, layer.get(e.to) ?? 0];
    const base = { graph: g.path, from: e.from, to: e.to, count: e.count };
    if (lb > la) {
      lines.push({ ...base, down: true, points: [{ x: a.x + a.w / 2, y: a.y + a.h }, { x: b.x + b.w / 2, y: b.y }] });
      continue;
    }
    // Out below `a`, up the right-hand side, in above `b`: each such line a lane of its own.
    const k = loops++;
    const side = inside + LOOP_IN + k * LOOP_STEP;
    const below = (band.get(la)?.[1] ?? a.y + a.h) + GAP_Y * 0.3 + (k % 3) * 4;
    const above = (band.get(lb)?.[0] ?? b.y) - GAP_Y * 0.3 - (k % 3) * 4;
    bottom = Math.max(bottom, below + 2);
    const [ax, bx] = [a.x + a.w / 2 + 8, b.x + b.w / 2 + 8];
    lines.push({
      ...base,
      down: false,
      points: [
        { x: ax, y: a.y + a.h },
        { x: ax, y: below },
        { x: side, y: below },
        { x: side, y: above },
        { x: bx, y: above },
        { x: bx, y: b.y },
      ],
    });
  }
  const all = [{ w: inside, h: 0, boxes, lines }, ...nested];
  return {
    w: inside + (loops ? LOOP_IN + (loops - 1) * LOOP_STEP + LOOP_LABEL : 0),
    h: bottom,
    boxes: all.flatMap((p) => p.boxes),
    lines: all.flatMap((p) => p.lines),
  };
}

/** The whole topology laid out from (0, 0): the root graph, sub-agents inside their nodes. */
export function layoutTopology(t: ThreadTopology): TopoLayout {
  const root = t.graphs.find((g) => g.parent === null);
  if (!root) return { width: 0, height: 0, boxes: [], lines: [] };
  const p = place(t, root, 0);
  return { width: p.w, height: p.h, boxes: p.boxes, lines: p.lines };
}

/** The SVG path of a line: a curve down, or the way round for a line going back. */
export function linePath(l: TopoLine): string {
  const [p, q] = [l.points[0], l.points[l.points.length - 1]];
  if (l.down) {
    const my = (p.y + q.y) / 2;
    return `M ${p.x} ${p.y} C ${p.x} ${my} ${q.x} ${my} ${q.x} ${q.y}`;
  }
  return l.points.map((r, i) => `${i ? "L" : "M"} ${r.x} ${r.y}`).join(" ");
}

/** Where a line's `×n` goes: beside the middle of a line down, of the side of one going back. */
export function labelAt(l: TopoLine): Pt {
  const [p, q] = [l.points[0], l.points[l.points.length - 1]];
  if (l.down || l.points.length < 4) return { x: (p.x + q.x) / 2 + 6, y: (p.y + q.y) / 2 };
  const [s, t] = [l.points[2], l.points[3]];
  return { x: s.x + 4, y: (s.y + t.y) / 2 };
}
