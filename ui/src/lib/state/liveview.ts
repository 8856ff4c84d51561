// Which view of a checkpoint the head shows, as Python's `get_state` has two: the live view
// (`graph.get_state(config)` without an id: the finished tasks' writes applied) and the step
// record (`get_state` with the id, `get_state_history`); the snapshot's status; which row a
// thread opens on; and where inside a sub-agent a thread waits.

import type { AppliedWrites, CheckpointDetail, GraphRow, TaskSet, ThreadStatus } from "../ipc/bindings";

/** The status of a snapshot, as the head says it. */
export function statusText(status: ThreadStatus): string {
  switch (status) {
    case "interrupted":
      return "waiting for a human";
    case "failed":
      return "failed";
    case "finished":
      return "finished";
    case "pending":
      return "pending";
  }
}

/** The nodes whose writes the live view applied, in order (`tools ×2`; the null task is the
 * input or `update_state`). */
export function appliedNodes(applied: AppliedWrites[]): string[] {
  const counts = new Map<string, number>();
  for (const a of applied) {
    const name = a.node ?? "input / update_state";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name));
}

export interface ViewNote {
  kind: "live" | "step";
  /** The badge. */
  label: string;
  /** The sentence beside it. */
  text: string;
}

/** What the head says about the view the detail is. */
export function viewNote(detail: Pick<CheckpointDetail, "live"> & Partial<Pick<CheckpointDetail, "applied">>): ViewNote {
  if (detail.live) {
    const nodes = appliedNodes(detail.applied ?? []);
    const text = nodes.length
      ? `as get_state shows it now — includes the writes of finished tasks: ${nodes.join(", ")}`
      : "as get_state shows it now";
    return { kind: "live", label: "live", text };
  }
  return { kind: "step", label: "step record", text: "as the step started: every task of the step, every interrupt raised (get_state with this checkpoint id)" };
}

/**
 * The row a thread opens on: the thread's head (its latest root checkpoint, the one a program
 * resumes), not a newer sub-agent checkpoint a wait inside it wrote last; -1 for no rows.
 */
export function openingRow(rows: Pick<GraphRow, "head">[]): number {
  if (rows.length === 0) return -1;
  const head = rows.findIndex((r) => r.head);
  return head >= 0 ? head : 0;
}

/** A wait inside a sub-agent: the task whose subgraph waits, and where. */
export interface InsideWait {
  /** The task's node (`tools`, `task`…). */
  node: string;
  /** The task's subgraph namespace (`tools:…`). */
  ns: string;
  /** The checkpoint that waits: the deepest waiting one under `ns` among the rows, if shown. */
  at: { ns: string; id: string } | null;
}

/**
 * Where a checkpoint's waiting tasks wait inside their subgraphs: each interrupted task that
 * ran a subgraph, and the deepest latest checkpoint under it that waits (marked `interrupted`).
 */
export function waitsInside(tasks: TaskSet | null | undefined, rows: Pick<GraphRow, "ns" | "id" | "ns_head" | "marks">[]): InsideWait[] {
  if (!tasks) return [];
  return tasks.tasks
    .filter((t) => !t.finished && t.status === "interrupted" && t.state)
    .map((t) => {
      const ns = t.state as string;
      const depth = (n: string) => n.split("|").length;
      const under = rows.filter((r) => r.ns_head && (r.ns === ns || r.ns.startsWith(`${ns}|`)));
      const waiting = under.filter((r) => r.marks.includes("interrupted")).sort((a, b) => depth(b.ns) - depth(a.ns));
      const pick = waiting[0] ?? under.find((r) => r.ns === ns) ?? null;
      return { node: t.name, ns, at: pick ? { ns: pick.ns, id: pick.id } : null };
    });
}
