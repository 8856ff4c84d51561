// The chips a DAG row shows beside its id (components/DagRowLabel.svelte): one chip per
// meaning. A branch's tip that Flashback wrote carries both the branch's label (how the branch
// was made: the engine's layout, as the CLI prints it) and the action that wrote it; they say
// the same thing, so the row shows the label once, marked as Flashback's, with the action in
// its title.

import type { GraphRow } from "../ipc/bindings";
import { shortId } from "./lanes";
import { MARKS, markText } from "./rowinfo";

export interface RowChip {
  /** Unique within the row (the keyed each). */
  key: string;
  text: string;
  /** The badge's classes besides `badge`. */
  cls: string;
  title: string;
  testid?: string;
  /** Extra data attributes (without the `data-` prefix). */
  data?: Record<string, string>;
}

/** The branch label the engine gives a tip Flashback wrote with `action` (layout/lanes.rs). */
export function actionBranchLabel(action: string): string {
  switch (action) {
    case "edit_fork":
      return "edit";
    case "rerun":
      return "re-run";
    case "merge":
      return "merge";
    default:
      return "fork";
  }
}

/** A Flashback action as words: `edit_fork` → `edit fork`, `rerun` → `re-run`. */
export const actionText = (action: string) => (action === "rerun" ? "re-run" : action.replace(/_/g, " "));

/** The chips of row `i`, in the order shown, no two with one meaning (nor one text).
 * `problem`: why the row's checkpoint could not be read, if it could not. */
export function rowChips(rows: GraphRow[], i: number, problem?: string): RowChip[] {
  const r = rows[i];
  const chips: RowChip[] = [];
  const action = r.flashback_action;
  // The tip's label says what the action says: one chip.
  const same = action !== null && r.branch_label !== null && actionBranchLabel(action) === r.branch_label;
  if (r.head) chips.push({ key: "head", text: "HEAD", cls: "head", title: "The thread's head: where the next run starts" });
  if (r.branch_label) {
    chips.push({
      key: "branch",
      text: r.branch_label,
      cls: same ? "branch fb" : "branch",
      title: same ? `Written by Flashback (${actionText(action!)}); this branch's tip: how the branch was made` : "This branch's tip: how the branch was made",
      testid: "branch-label",
      data: same ? { action: action! } : undefined,
    });
  }
  const from = r.merged_from_row;
  if (from !== null && from !== undefined && rows[from]) {
    chips.push({ key: "merge-from", text: `⤙ ${shortId(rows[from].id)}`, cls: "fb", title: `Took channels from ${rows[from].id}`, testid: "merge-from" });
  }
  if (r.fork_point) chips.push({ key: "fork-point", text: "fork point", cls: "", title: "Fork point: two or more branches start here" });
  if (action && !same) chips.push({ key: "action", text: actionText(action), cls: "fb", title: "Written by Flashback", data: { action } });
  for (const m of r.marks) {
    chips.push({ key: `mark-${m}`, text: markText(m, r.mark_nodes), cls: MARKS[m].cls, title: MARKS[m].title, testid: "dag-mark", data: { mark: m } });
  }
  if (problem) chips.push({ key: "problem", text: "⚠ unreadable", cls: "failed", title: problem, testid: "row-problem" });
  if (r.orphan_parent) chips.push({ key: "orphan", text: "orphan", cls: "failed", title: `Parent ${r.orphan_parent} is missing` });
  // Whatever else comes to say the same words says it once.
  const seen = new Set<string>();
  return chips.filter((c) => !seen.has(c.text) && (seen.add(c.text), true));
}
