// Checkpoints the backend could not read in full (a corrupt blob, a bad row): where the UI marks
// them. The backend keeps going past them; these helpers only decide what the badges say.
import { plural } from "./format";
import type { CheckpointProblem } from "../ipc/bindings";

/** The key a DAG row is found by: namespace and id. */
export function rowKey(ns: string, id: string): string {
  return `${ns}\u0000${id}`;
}

/** Problems by row key, for the DAG's per-row badge. */
export function problemIndex(unreadable: CheckpointProblem[] | undefined | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of unreadable ?? []) out.set(rowKey(p.checkpoint_ns, p.checkpoint_id), p.problem);
  return out;
}

/** One line above the DAG: how many checkpoints are damaged, naming the first. */
export function unreadableSummary(unreadable: CheckpointProblem[] | undefined | null): string | null {
  const list = unreadable ?? [];
  if (list.length === 0) return null;
  const first = list[0];
  const n = list.length;
  const head = `${plural(n, "checkpoint")} could not be read in full and ${n === 1 ? "is" : "are"} marked ⚠; the rest of the thread is usable.`;
  return `${head} First: ${first.checkpoint_id}: ${first.problem}`;
}
