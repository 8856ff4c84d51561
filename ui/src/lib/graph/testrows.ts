// Test helpers: graph rows with defaults.
import type { GraphRow } from "../ipc/bindings";

export function row(id: string, lane: number, extra: Partial<GraphRow> = {}): GraphRow {
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
    step: null,
    source: "loop",
    ts: "",
    subgraphs: [],
    flashback_action: null,
    branch_key: `k${lane}`,
    branch_label: null,
    merged_from_row: null,
    ran: [],
    marks: [],
    mark_nodes: [],
    models: [],
    tokens: null,
    ...extra,
  };
}

/** Fill in each row's `parent_lane` (and `parent_kind`, "parent" unless set) from its `parent_row`. */
export function linked(rows: GraphRow[]): GraphRow[] {
  return rows.map((r) =>
    r.parent_row === null ? r : { ...r, parent_lane: rows[r.parent_row].lane, parent_kind: r.parent_kind ?? "parent" },
  );
}
