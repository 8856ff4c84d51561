// Test helper: a graph row with defaults.
import type { GraphRow } from "../ipc/bindings";

export function row(id: string, lane: number, edges: [number, number][], extra: Partial<GraphRow> = {}): GraphRow {
  return {
    id,
    ns: "",
    parent_id: null,
    lane,
    depth: 0,
    branch: 0,
    fork_point: false,
    head: false,
    ns_head: false,
    parent_row: null,
    parent_lane: null,
    parent_kind: null,
    orphan_parent: null,
    broken_parent: null,
    edges: edges.map(([from, to]) => ({ from, to, kind: "parent" })),
    step: null,
    source: "loop",
    ts: "",
    subgraphs: [],
    flashback_action: null,
    ...extra,
  };
}
