// How the writes panel names a task's writes: by the node that ran (Send tasks by their target,
// `tools`), the null task as the input or `update_state`, a task id only when nothing else is
// known; and which tasks' writes the live view folded into the values.
import type { AppliedWrites, WriteGroup } from "../ipc/bindings";

/** LangGraph's null task: the writes of an input or `update_state`. */
export const NULL_TASK = "00000000-0000-0000-0000-000000000000";

/** The name a task's writes go by. */
export function groupLabel(g: Pick<WriteGroup, "node" | "task_id">): string {
  if (g.node) return g.node;
  if (g.task_id === NULL_TASK) return "input / update_state";
  return `task ${g.task_id.slice(0, 8)}`;
}

/** The tasks whose writes are part of the values shown (the live view's finished tasks, the
 * null task's in both views). */
export function appliedTasks(applied: AppliedWrites[] | null | undefined): Set<string> {
  return new Set((applied ?? []).map((a) => a.task_id));
}
