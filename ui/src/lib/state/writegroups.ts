// How the writes panel names a task's writes: by the node that ran (Send tasks by their target,
// `tools`; middleware hooks as the DAG rows say them), the null task as the input or
// `update_state`, a task id only when nothing else is known; whose writes a checkpoint shows
// (its own pending writes are the *next* step's; the ones that made it are its parent's); and
// which tasks' writes the live view folded into the values.
import type { AppliedWrites, WriteGroup } from "../ipc/bindings";
import { nodeName } from "../graph/rowinfo";

/** LangGraph's null task: the writes of an input or `update_state`. */
export const NULL_TASK = "00000000-0000-0000-0000-000000000000";

/** The name a task's writes go by. */
export function groupLabel(g: Pick<WriteGroup, "node" | "task_id">): string {
  if (g.node) return nodeName(g.node);
  if (g.task_id === NULL_TASK) return "input / update_state";
  return `task ${g.task_id.slice(0, 8)}`;
}

/** The tasks whose writes are part of the values shown (the live view's finished tasks, the
 * null task's in both views). */
export function appliedTasks(applied: AppliedWrites[] | null | undefined): Set<string> {
  return new Set((applied ?? []).map((a) => a.task_id));
}

/** Who wrote a set of groups: each name once, in task order ("agent", "fetch_ok, fetch_bad"). */
export function writers(groups: readonly Pick<WriteGroup, "node" | "task_id">[]): string {
  return [...new Set(groups.map(groupLabel))].join(", ");
}

/** The heading over the writes that made a checkpoint: "handle_greeting wrote". */
export function madeByHeading(groups: readonly Pick<WriteGroup, "node" | "task_id">[]): string {
  return `${writers(groups)} wrote`;
}

/** The heading over a checkpoint's own pending writes: "Writes of the next step:
 * generate_response" (the tasks that run from it wrote them). */
export function nextStepHeading(groups: readonly Pick<WriteGroup, "node" | "task_id">[]): string {
  return groups.length ? `Writes of the next step: ${writers(groups)}` : "Writes of the next step";
}

/** Why no step's writes made a checkpoint, by how it was made (`metadata.source`). */
export function notMadeByAStep(source: string | null, hasParent: boolean): string {
  switch (source) {
    case "input":
      return "This checkpoint holds an input: no step made it (the input's writes are below, for the step that starts from it).";
    case "update":
      return "update_state made this checkpoint: its values were set directly, not written by a step.";
    case "fork":
      return "A fork made this checkpoint (a copy): no step's writes made it.";
    default:
      return hasParent ? "No writes of the step that made this checkpoint are stored on its parent." : "The first checkpoint of its line: no step made it.";
  }
}
