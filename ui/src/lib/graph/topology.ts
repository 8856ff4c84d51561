// The topology view's layout, pure: each graph's nodes in layers by the step they are first
// reached at from `__start__` (`__end__` last), boxes centred per layer, a sub-agent's graph
// drawn inside the box of the node that ran it, and each transition as a line — down to a later
// layer, or round the right-hand side back up (a loop: model → tools → model).

import type { ThreadTopology, TopoGraph, TopoNode } from "../ipc/bindings";
import { nodeLabel as hookLabel } from "./rowinfo";

export const START = "__start__";
export const END = "__end__";

/** Sizes (px). */
const CHAR_W = 7.2;
const NODE_H = 40;
const MIN_W = 76;
const PAD = 12;
/** The name and counts line at the top of a box that holds a sub-agent's graph. */
const HEAD_H = 40;
const GAP_X = 28;
const GAP_Y = 46;
/** Room on the right for lines going back up. */
const LOOP_W = 44;

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

export interface TopoLine {
  graph: string;
  from: string;
  to: string;
  count: number;
  /** Down to a later layer (false: round the side, back up or across). */
  down: boolean;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
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

/** What the box says of a node: `START`, `END`, a middleware hook as "Summarization · before model", or its name. */
export function nodeLabel(name: string): string {
  return name === START ? "START" : name === END ? "END" : hookLabel(name);
}

/** "×4 · ✕ 1 · ⏸ 2": runs, then failures, retries and interrupts when there were any. */
export function countsLabel(n: TopoNode): string {
  const parts = [`×${n.runs}`];
  if (n.failed) parts.push(`✕ ${n.failed}`);
  if (n.recovered) parts.push(`↻ ${n.recovered}`);
  if (n.interrupted + n.resumed) parts.push(`⏸ ${n.interrupted + n.resumed}`);
  return parts.join(" · ");
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
    lines: p.lines.map((l) => ({ ...l, x1: l.x1 + dx, y1: l.y1 + dy, x2: l.x2 + dx, y2: l.y2 + dy })),
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
    const text = Math.max(nodeLabel(n.name).length, countsLabel(n).length) * CHAR_W + 2 * PAD;
    const sub = inner.get(n.name);
    const w = Math.max(MIN_W, Math.ceil(text), sub ? sub.w + 2 * PAD : 0);
    return { w, h: sub ? HEAD_H + sub.h + PAD : NODE_H };
  };
  const sizes = new Map(g.nodes.map((n) => [n.name, size(n)]));
  const rowW = (r: TopoNode[] = []) => r.reduce((s, n) => s + (sizes.get(n.name)?.w ?? 0), 0) + GAP_X * Math.max(0, r.length - 1);
  const inside = Math.max(0, ...rows.map(rowW));
  const boxes: TopoBox[] = [];
  const nested: Placed[] = [];
  let y = 0;
  for (const r of rows) {
    if (!r) continue;
    let x = (inside - rowW(r)) / 2;
    const h = Math.max(...r.map((n) => sizes.get(n.name)?.h ?? NODE_H));
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
  let loops = false;
  for (const e of g.edges) {
    const a = at.get(e.from);
    const b = at.get(e.to);
    if (!a || !b) continue;
    const down = (layer.get(e.to) ?? 0) > (layer.get(e.from) ?? 0);
    loops ||= !down;
    const base = { graph: g.path, from: e.from, to: e.to, count: e.count, down };
    lines.push(
      down
        ? { ...base, x1: a.x + a.w / 2, y1: a.y + a.h, x2: b.x + b.w / 2, y2: b.y }
        : { ...base, x1: a.x + a.w, y1: a.y + a.h / 2, x2: b.x + b.w, y2: b.y + b.h / 2 },
    );
  }
  const all = [{ w: inside, h: 0, boxes, lines }, ...nested];
  return {
    w: inside + (loops ? LOOP_W : 0),
    h: Math.max(0, y - GAP_Y),
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

/** The SVG path of a line: a curve down, or a bow out to the right for a line going back. */
export function linePath(l: TopoLine): string {
  if (l.down) {
    const my = (l.y1 + l.y2) / 2;
    return `M ${l.x1} ${l.y1} C ${l.x1} ${my} ${l.x2} ${my} ${l.x2} ${l.y2}`;
  }
  const out = Math.max(l.x1, l.x2) + 30;
  return `M ${l.x1} ${l.y1} C ${out} ${l.y1} ${out} ${l.y2} ${l.x2} ${l.y2}`;
}

/** Where a line's `×n` goes. */
export function labelAt(l: TopoLine): { x: number; y: number } {
  if (l.down) return { x: (l.x1 + l.x2) / 2 + 6, y: (l.y1 + l.y2) / 2 };
  return { x: Math.max(l.x1, l.x2) + 24, y: (l.y1 + l.y2) / 2 };
}
