// The chips a DAG row shows beside its id (components/DagRowLabel.svelte): one chip per
// meaning. A branch's tip that Flashback wrote carries both the branch's label (how the branch
// was made: the engine's layout, as the CLI prints it) and the action that wrote it; they say
// the same thing, so the row shows the label once, marked as Flashback's, with the action in
// its title. A merge is one chip with where it took from (`merge ⤙ 1f0e-…`).

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
  const from = r.merged_from_row !== null && r.merged_from_row !== undefined ? rows[r.merged_from_row] : undefined;
  // A merge says so once, with where it took from: its action and its branch's label (when it
  // is the tip) are that same chip.
  const mergeChip = from !== undefined;
  const label = mergeChip && r.branch_label === "merge" ? null : r.branch_label;
  const act = mergeChip && action === "merge" ? null : action;
  // The tip's label says what the action says: one chip.
  const same = act !== null && label !== null && actionBranchLabel(act) === label;
  if (r.head) chips.push({ key: "head", text: "HEAD", cls: "head", title: "The thread's head: where the next run starts" });
  if (from) {
    const tip = r.branch_label === "merge" ? "; this branch's tip" : "";
    chips.push({ key: "merge", text: `merge ⤙ ${shortId(from.id)}`, cls: "fb", title: `Merged by Flashback: took channels from ${from.id}${tip}`, testid: "merge-from" });
  }
  if (label) {
    chips.push({
      key: "branch",
      text: label,
      cls: same ? "branch fb" : "branch",
      title: same ? `Written by Flashback (${actionText(act!)}); this branch's tip: how the branch was made` : "This branch's tip: how the branch was made",
      testid: "branch-label",
      data: same ? { action: act! } : undefined,
    });
  }
  if (r.fork_point) chips.push({ key: "fork-point", text: "fork point", cls: "", title: "Fork point: two or more branches start here" });
  if (act && !same) chips.push({ key: "action", text: actionText(act), cls: "fb", title: "Written by Flashback", data: { action: act } });
  for (const m of r.marks) {
    chips.push({ key: `mark-${m}`, text: markText(m, r.mark_nodes), cls: MARKS[m].cls, title: MARKS[m].title, testid: "dag-mark", data: { mark: m } });
  }
  if (problem) chips.push({ key: "problem", text: "⚠ unreadable", cls: "failed", title: problem, testid: "row-problem" });
  if (r.orphan_parent) chips.push({ key: "orphan", text: "orphan", cls: "failed", title: `Parent ${r.orphan_parent} is missing` });
  // Whatever else comes to say the same words says it once.
  const seen = new Set<string>();
  return chips.filter((c) => !seen.has(c.text) && (seen.add(c.text), true));
}
