import { describe, expect, it } from "vitest";
import type { ThreadTopology, TopoGraph, TopoNode } from "../ipc/bindings";
import { boxKey, boxText, countsLabel, graphPath, labelAt, layers, layoutTopology, linePath, nodeClass, nodeLabel } from "./topology";

function node(name: string, extra: Partial<TopoNode> = {}): TopoNode {
  return { name, runs: 1, failed: 0, recovered: 0, interrupted: 0, resumed: 0, checkpoints: [], ...extra };
}

function graph(path: string, edges: string[], extra: Partial<TopoGraph> = {}): TopoGraph {
  const names: string[] = [];
  const parsed = edges.map((e) => {
    const [from, to] = e.split(" > ");
    for (const n of [from, to]) if (!names.includes(n)) names.push(n);
    return { from, to, count: 1 };
  });
  const last = path.split("|").pop() ?? "";
  return {
    path,
    parent: path === "" ? null : path.includes("|") ? path.slice(0, path.lastIndexOf("|")) : "",
    node: path === "" ? null : last,
    calls: 1,
    nodes: names.map((n) => node(n)),
    edges: parsed,
    ...extra,
  };
}

const agent = graph("", ["__start__ > model", "model > tools", "tools > model", "model > __end__"]);
const topo = (...graphs: TopoGraph[]): ThreadTopology => ({ thread_ids: ["t"], graphs, warnings: [] });

describe("topology layers", () => {
  it("puts each node at the step it is first reached, END last", () => {
    expect([...layers(agent)]).toEqual([
      ["__start__", 0],
      ["model", 1],
      ["tools", 2],
      ["__end__", 3],
    ]);
  });

  it("starts from the nodes nothing leads to without an entry, else from the first seen", () => {
    const cycle = graph("", ["a > b", "b > a"]);
    expect(layers(cycle)).toEqual(
      new Map([
        ["a", 0],
        ["b", 1],
      ]),
    );
    cycle.nodes.push(node("lonely"));
    // Nothing leads to it: a root; the cycle is placed after what it reaches.
    expect(layers(cycle)).toEqual(
      new Map([
        ["lonely", 0],
        ["a", 1],
        ["b", 2],
      ]),
    );
    const fan = graph("", ["__start__ > plan", "plan > x", "plan > y", "x > sum", "y > sum"]);
    expect(layers(fan).get("x")).toBe(2);
    expect(layers(fan).get("y")).toBe(2);
    expect(layers(fan).get("sum")).toBe(3);
  });
});

describe("topology layout", () => {
  it("stacks the layers and centres their boxes, without overlaps", () => {
    const fan = graph("", ["__start__ > plan", "plan > x", "plan > y", "x > sum", "y > sum"]);
    const l = layoutTopology(topo(fan));
    const box = (n: string) => l.boxes.find((b) => b.node.name === n)!;
    expect(box("x").y).toBe(box("y").y);
    expect(box("x").x + box("x").w).toBeLessThan(box("y").x);
    expect(box("plan").y).toBeGreaterThan(box("__start__").y + box("__start__").h);
    // The single box of a layer sits in the middle of the widest one.
    const mid = (b: { x: number; w: number }) => b.x + b.w / 2;
    expect(mid(box("plan"))).toBeCloseTo((box("x").x + box("y").x + box("y").w) / 2);
    for (const b of l.boxes) {
      expect(b.x + b.w).toBeLessThanOrEqual(l.width);
      expect(b.y + b.h).toBeLessThanOrEqual(l.height);
    }
  });

  it("draws a line back up round the side, and makes room for it", () => {
    const l = layoutTopology(topo(agent));
    const back = l.lines.find((x) => x.from === "tools" && x.to === "model")!;
    const down = l.lines.find((x) => x.from === "model" && x.to === "tools")!;
    expect(down.down).toBe(true);
    expect(back.down).toBe(false);
    expect(linePath(down)).toMatch(/^M [\d.]+ [\d.]+ C /);
    // Back up round the right of every box, through the gaps between the layers.
    const widest = Math.max(...l.boxes.map((b) => b.x + b.w));
    const side = back.points[2].x;
    expect(side).toBeGreaterThan(widest);
    expect(back.points[3].x).toBe(side);
    expect(labelAt(back).x).toBeGreaterThan(side);
    expect(l.width).toBeGreaterThan(labelAt(back).x);
    const box = (n: string) => l.boxes.find((b) => b.node.name === n)!;
    const [tools, model] = [box("tools"), box("model")];
    expect(back.points[1].y).toBeGreaterThan(tools.y + tools.h);
    expect(back.points[4].y).toBeLessThan(model.y);
    expect(back.points[5].y).toBe(model.y);
    expect(linePath(back)).toMatch(/^M [\d.]+ [\d.]+( L [\d.]+ [\d.]+){5}$/);
    // A line back from the last layer still fits.
    const open = layoutTopology(topo(graph("", ["__start__ > a", "a > b", "b > a"])));
    const last = open.lines.find((x) => !x.down)!;
    expect(open.height).toBeGreaterThan(last.points[1].y);
    expect(last.points[1].y).toBeGreaterThan(Math.max(...open.boxes.map((x) => x.y + x.h)));
  });

  it("draws a sub-agent's graph inside the box of the node that ran it", () => {
    const root = graph("", ["__start__ > model", "model > tools", "tools > model"]);
    const sub = graph("tools", ["__start__ > model", "model > __end__"]);
    const deeper = graph("tools|model", ["__start__ > step"]);
    const l = layoutTopology(topo(root, sub, deeper));
    const host = l.boxes.find((b) => b.key === boxKey("", "tools"))!;
    expect(host.sub).toBe("tools");
    const inner = l.boxes.filter((b) => b.graph === "tools");
    expect(inner.map((b) => b.node.name)).toEqual(["__start__", "model", "__end__"]);
    for (const b of inner) {
      expect(b.x).toBeGreaterThan(host.x);
      expect(b.x + b.w).toBeLessThan(host.x + host.w);
      expect(b.y).toBeGreaterThan(host.y);
      expect(b.y + b.h).toBeLessThan(host.y + host.h);
    }
    const innerHost = l.boxes.find((b) => b.key === boxKey("tools", "model"))!;
    const step = l.boxes.find((b) => b.key === boxKey("tools|model", "step"))!;
    expect(step.y).toBeGreaterThan(innerHost.y);
    // Lines move with their graph.
    const line = l.lines.find((x) => x.graph === "tools" && x.to === "model")!;
    expect(line.points[1].y).toBe(innerHost.y);
  });

  it("lays out nothing without a root graph", () => {
    expect(layoutTopology(topo())).toEqual({ width: 0, height: 0, boxes: [], lines: [] });
  });
});

describe("topology labels", () => {
  it("names graphs by the namespace without task ids", () => {
    expect(graphPath("")).toBe("");
    expect(graphPath("tools:1a2b")).toBe("tools");
    expect(graphPath("tools:1a2b|model:3c4d|1")).toBe("tools|model");
    expect(graphPath("persist")).toBe("persist");
  });

  it("says runs and what went wrong, and colours by the worst", () => {
    expect(nodeLabel("__start__")).toBe("START");
    expect(nodeLabel("__end__")).toBe("END");
    expect(nodeLabel("tools")).toBe("tools");
    expect(nodeLabel("HumanInTheLoopMiddleware.after_model")).toBe("HumanInTheLoop · after model");
    expect(countsLabel(node("a", { runs: 4 }))).toBe("×4");
    expect(boxText(node("a", { runs: 4 }))).toEqual({ name: "a", counts: "×4" });
    expect(boxText(node("__start__", { runs: 1 }))).toEqual({ name: "START", counts: null });
    expect(boxText(node("__end__", { runs: 3 }))).toEqual({ name: "END ×3", counts: null });
    expect(countsLabel(node("a", { runs: 2, failed: 1, recovered: 1, interrupted: 1, resumed: 1 }))).toBe("×2 · ✕ 1 · ↻ 1 · ⏸ 2");
    expect(nodeClass(node("a"))).toBe("");
    expect(nodeClass(node("a", { failed: 1, interrupted: 1 }))).toBe("failed");
    expect(nodeClass(node("a", { interrupted: 1, resumed: 1 }))).toBe("interrupted");
    expect(nodeClass(node("a", { resumed: 1 }))).toBe("recovered");
  });
});
