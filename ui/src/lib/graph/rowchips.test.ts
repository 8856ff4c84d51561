import { describe, expect, it } from "vitest";
import { actionBranchLabel, rowChips } from "./rowchips";
import { shortId } from "./lanes";
import { row } from "./testrows";

const texts = (chips: { text: string }[]) => chips.map((c) => c.text);

describe("a DAG row's chips", () => {
  it("says a merge once, with where it took from, on its tip and below it", () => {
    const rows = [
      row("m1", 0, { head: true, source: "update", flashback_action: "merge", branch_label: "merge", merged_from_row: 2, parent_row: 3 }),
      row("m0", 0, { source: "update", flashback_action: "merge", merged_from_row: 2, parent_row: 3 }),
      row("1ef0a1b2-c3d4-6e5f-8a9b-0c1d2e3f4a5b", 1),
      row("a0", 0),
    ];
    const tip = rowChips(rows, 0);
    expect(texts(tip)).toEqual(["HEAD", `merge ⤙ ${shortId("1ef0a1b2-c3d4-6e5f-8a9b-0c1d2e3f4a5b")}`]);
    expect(tip[1].testid).toBe("merge-from");
    expect(tip[1].title).toContain("1ef0a1b2-c3d4-6e5f-8a9b-0c1d2e3f4a5b");
    expect(tip[1].title).toContain("tip");
    expect(texts(tip).join(" ").match(/merge/g)).toHaveLength(1);
    const below = rowChips(rows, 1);
    expect(texts(below)).toEqual([tip[1].text]);
    expect(below[0].title).not.toContain("tip");
  });

  it("keeps a label that is not the merge's on a merge row", () => {
    const rows = [row("m", 0, { flashback_action: "merge", branch_label: "re-run", merged_from_row: 1 }), row("b", 1)];
    expect(texts(rowChips(rows, 0))).toEqual([`merge ⤙ ${shortId("b")}`, "re-run"]);
  });

  it("does not show `edit fork` beside the `edit` it labels", () => {
    const chips = rowChips([row("e1", 0, { head: true, source: "update", flashback_action: "edit_fork", branch_label: "edit" })], 0);
    expect(texts(chips)).toEqual(["HEAD", "edit"]);
    expect(chips[1].data).toEqual({ action: "edit_fork" });
    expect(chips[1].title).toContain("edit fork");
  });

  it("keeps the action where the label says something else, and on rows that are not a tip", () => {
    const rows = [row("t", 0, { branch_label: "re-run", flashback_action: "edit_fork" }), row("r", 0, { flashback_action: "rerun" })];
    expect(texts(rowChips(rows, 0))).toEqual(["re-run", "edit fork"]);
    expect(texts(rowChips(rows, 1))).toEqual(["re-run"]);
    expect(rowChips(rows, 1)[0].testid).toBeUndefined();
  });

  it("maps each action to the label the engine gives its branch", () => {
    expect(["copy_fork", "edit_fork", "rerun", "merge", "unknown"].map(actionBranchLabel)).toEqual(["fork", "edit", "re-run", "merge", "fork"]);
    const copy = rowChips([row("c", 0, { head: true, flashback_action: "copy_fork", branch_label: "fork", fork_point: false })], 0);
    expect(texts(copy)).toEqual(["HEAD", "fork"]);
    expect(copy[1].data).toEqual({ action: "copy_fork" });
  });

  it("lists fork points, marks, problems and orphans, each once", () => {
    const chips = rowChips([row("x", 0, { fork_point: true, marks: ["failed"], mark_nodes: ["fetch"], orphan_parent: "p0" })], 0, "bad blob");
    expect(texts(chips)).toEqual(["fork point", "✕ fetch raised", "⚠ unreadable", "orphan"]);
    expect(chips.map((c) => c.key)).toEqual(["fork-point", "mark-failed", "problem", "orphan"]);
    expect(chips[2].title).toBe("bad blob");
  });

  it("never repeats a text", () => {
    const rows = [row("x", 0, { branch_label: "fork", flashback_action: "fork" })];
    // `fork` as an action (not one Flashback names) maps to the label `fork`: the same chip.
    expect(texts(rowChips(rows, 0))).toEqual(["fork"]);
    const odd = [row("y", 0, { branch_label: "update", flashback_action: "update" })];
    expect(texts(rowChips(odd, 0))).toEqual(["update"]);
  });
});
