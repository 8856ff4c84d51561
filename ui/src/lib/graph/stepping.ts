// Moving the selection through the graph's rows (newest first):
//
//   j / k   older / newer along the branch (the parent, for a subgraph root the spawning
//           checkpoint; the child on the same lane, else the newest child)
//   ↑ / ↓   the row above / below in the list (newer / older in time, any branch)
//   ← / →   across branches: the nearest checkpoint on the next lane left / right
//   Home/End the branch's root / tip
//
// and the branch as a list (root → tip) for the scrubber and the replay animation.

import type { GraphRow } from "../ipc/bindings";

export type Step = "older" | "newer" | "up" | "down" | "left" | "right" | "root" | "tip";

/** Children of each row (row indices), computed once per layout. */
export function childIndex(rows: readonly GraphRow[]): number[][] {
  const children: number[][] = rows.map(() => []);
  rows.forEach((r, i) => {
    if (r.parent_row !== null && r.parent_row < rows.length) children[r.parent_row].push(i);
  });
  return children;
}

function newerOf(rows: readonly GraphRow[], children: number[][], i: number): number | null {
  const kids = children[i];
  if (kids.length === 0) return null;
  const sameNs = kids.filter((k) => rows[k].ns === rows[i].ns);
  const pool = sameNs.length > 0 ? sameNs : kids;
  // Stay on the lane when a child continues it; otherwise the newest child (lowest row).
  const onLane = pool.find((k) => rows[k].lane === rows[i].lane);
  return onLane ?? Math.min(...pool);
}

/** The row reached from row `i` by `step` (or `i` itself when there is nowhere to go). */
export function move(
  rows: readonly GraphRow[],
  children: number[][],
  i: number,
  step: Step,
): number {
  if (rows.length === 0) return i;
  if (i < 0 || i >= rows.length) return 0;
  switch (step) {
    case "older":
      return rows[i].parent_row ?? i;
    case "newer":
      return newerOf(rows, children, i) ?? i;
    case "up":
      return Math.max(0, i - 1);
    case "down":
      return Math.min(rows.length - 1, i + 1);
    case "root": {
      let j = i;
      while (rows[j].parent_row !== null && rows[rows[j].parent_row!].ns === rows[i].ns) {
        j = rows[j].parent_row!;
      }
      return j;
    }
    case "tip": {
      let j = i;
      for (let next = newerOf(rows, children, j); next !== null; next = newerOf(rows, children, j)) {
        j = next;
      }
      return j;
    }
    case "left":
    case "right": {
      const dir = step === "left" ? -1 : 1;
      let best: number | null = null;
      let bestLane = Infinity;
      let bestDist = Infinity;
      rows.forEach((r, j) => {
        const laneGap = (r.lane - rows[i].lane) * dir;
        if (laneGap <= 0) return;
        const dist = Math.abs(j - i);
        if (laneGap < bestLane || (laneGap === bestLane && dist < bestDist)) {
          best = j;
          bestLane = laneGap;
          bestDist = dist;
        }
      });
      return best ?? i;
    }
  }
}

/**
 * The branch through row `i`: from its root up to the tip reached by always stepping newer
 * (root first). The scrubber walks this list.
 */
export function branchOf(rows: readonly GraphRow[], children: number[][], i: number): number[] {
  if (i < 0 || i >= rows.length) return [];
  const older: number[] = [];
  for (let j: number | null = i; j !== null; j = rows[j].parent_row) {
    if (rows[j].ns !== rows[i].ns) break;
    older.push(j);
  }
  older.reverse();
  const newer: number[] = [];
  for (let j = newerOf(rows, children, i); j !== null; j = newerOf(rows, children, j)) {
    newer.push(j);
  }
  return [...older, ...newer];
}

/** The key → step mapping (null for keys that are not stepping keys). */
export function stepForKey(key: string): Step | null {
  switch (key) {
    case "j":
      return "older";
    case "k":
      return "newer";
    case "ArrowUp":
      return "up";
    case "ArrowDown":
      return "down";
    case "ArrowLeft":
      return "left";
    case "ArrowRight":
      return "right";
    case "Home":
      return "root";
    case "End":
      return "tip";
    default:
      return null;
  }
}
