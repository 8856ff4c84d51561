// Watch a key (the `watch_key` command): the path of a value in the state view, and the pure
// parts of the Watch panel — which change is selected, where prev/next go, how a change reads,
// and the groups the list falls into (the line it was read along, then branch by branch).

import type { GraphRow, WatchChange } from "../ipc/bindings";
import { shortId } from "../graph/lanes";

/** A channel name or key the path syntax writes bare (else as a JSON string in brackets). */
const PLAIN = /^[\p{L}\p{N}_$:-]+$/u;

/**
 * The watch path of a node of a channel's value tree: the channel, then the node's path inside
 * the value as `state/tree.ts` writes it (`[1].content`, `steps`, `["a.b"]`; "" for the whole
 * value). The backend parses it (`messages[1].content`, `plan.steps`, `plan["a.b"]`).
 */
export function watchPath(channel: string, treePath = ""): string {
  const head = PLAIN.test(channel) ? channel : `[${JSON.stringify(channel)}]`;
  if (treePath === "") return head;
  return treePath.startsWith("[") ? `${head}${treePath}` : `${head}.${treePath}`;
}

/** The changes the panel lists: all of them, or only those on the head's branch. */
export function visibleChanges(changes: WatchChange[], headOnly: boolean): WatchChange[] {
  return headOnly ? changes.filter((c) => c.on_head_branch) : changes;
}

/** The listed change at the selected checkpoint (-1: the selection is not one of them). */
export function cursorOf(changes: WatchChange[], selectedId: string | null): number {
  return selectedId === null ? -1 : changes.findIndex((c) => c.checkpoint_id === selectedId);
}

/**
 * Where prev (-1) or next (+1) goes from `at` (the selected change, or the last one jumped to;
 * -1 for none) among `count` changes: null at either end. From nowhere, next is the first
 * change and prev the last.
 */
export function neighbour(count: number, at: number, dir: -1 | 1): number | null {
  if (count === 0) return null;
  if (at < 0 || at >= count) return dir > 0 ? 0 : count - 1;
  const to = at + dir;
  return to >= 0 && to < count ? to : null;
}

/** Who made a change: the nodes whose writes produced it, else how its checkpoint was made. */
export function changedBy(c: WatchChange): string {
  const nodes = [...new Set(c.writes.map((w) => w.node ?? "?"))];
  if (nodes.length) return nodes.join(", ");
  return c.source ? `(${c.source})` : "–";
}

/** The value a change left, on one line. */
export function changeText(c: WatchChange): string {
  return c.value ? c.value.preview : "(removed)";
}

/** The branch key of the trunk (lane 0, the run as it first went) in graph rows, for colours. */
export function trunkKey(rows: readonly { lane: number; branch_key: string }[]): string {
  for (let i = rows.length - 1; i >= 0; i--) if (rows[i].lane === 0) return rows[i].branch_key;
  return "";
}

/** The newest checkpoint of namespace `ns` on a branch (row indexes, root first: ThreadView's
 * `branch`): the tip of the line the watch lists first. Null when the branch has none there. */
export function branchTip(rows: readonly { id: string; ns: string }[], branch: readonly number[], ns: string): string | null {
  for (let k = branch.length - 1; k >= 0; k--) if (rows[branch[k]]?.ns === ns) return rows[branch[k]].id;
  return null;
}

/** A run of the watch list under one heading: the line read along, or another branch. */
export interface WatchGroup {
  /** Index of its first change in the list. */
  start: number;
  /** Its changes. */
  count: number;
  /** The line read along (from the root), or another branch's changes. */
  line: boolean;
  /** The branch key (the line's: that of its last change), for its colour. */
  key: string;
  /** "Selected branch", "Head's line", "fork 7f9a-6f8b-3e7c", "main line". */
  name: string;
  /** Where it leaves the line: "forks at step 3 · 2b1c-6f8b-3e7c" ("" for the line). */
  fork: string;
}

type Row = Pick<GraphRow, "id" | "parent_id" | "branch_key" | "branch_label" | "step" | "ns_head">;

/**
 * The headings of the watch list (`changes` as the backend orders them: the line from the root
 * to `along` first, then each other branch's, grouped). The line is `along`'s ancestors in
 * `rows` (without rows or `along`: the changes on the head's branch); a branch is named as the
 * graph names it (the trunk "main line", else its label and first checkpoint), with the
 * checkpoint where it leaves the line or the branch before it.
 */
export function watchGroups(changes: readonly WatchChange[], rows: readonly Row[], along: string | null, trunk: string): WatchGroup[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const line = new Set<string>();
  for (let r = along ? byId.get(along) : undefined; r && !line.has(r.id); r = r.parent_id ? byId.get(r.parent_id) : undefined) line.add(r.id);
  const onLine = (c: WatchChange) => (line.size ? line.has(c.checkpoint_id) : c.on_head_branch);
  const labels = new Map<string, string>();
  for (const r of rows) if (r.branch_label && !labels.has(r.branch_key)) labels.set(r.branch_key, r.branch_label);
  const groups: WatchGroup[] = [];
  changes.forEach((c, i) => {
    const isLine = onLine(c);
    const last = groups[groups.length - 1];
    if (last && last.line === isLine && (isLine || last.key === c.branch_key)) {
      last.count++;
      if (isLine) last.key = c.branch_key;
      return;
    }
    const head = !line.size || (along !== null && byId.get(along)?.ns_head === true);
    groups.push({
      start: i,
      count: 1,
      line: isLine,
      key: c.branch_key,
      name: isLine ? (head ? "Head's line" : "Selected branch") : c.branch_key === trunk ? "main line" : `${labels.get(c.branch_key) ?? "branch"} ${shortId(c.branch_key)}`,
      fork: isLine ? "" : forkText(byId, c, line),
    });
  });
  return groups;
}

/** "forks at step 3 · 2b1c-6f8b-3e7c": the first ancestor of `c` off its own branch's run
 * (on the line, or on another branch); "" when the rows do not reach it. */
function forkText(byId: Map<string, Row>, c: WatchChange, line: Set<string>): string {
  let r = byId.get(c.checkpoint_id);
  const seen = new Set<string>();
  while (r && r.branch_key === c.branch_key && !line.has(r.id) && !seen.has(r.id)) {
    seen.add(r.id);
    r = r.parent_id ? byId.get(r.parent_id) : undefined;
  }
  if (!r || (r.branch_key === c.branch_key && !line.has(r.id))) return "";
  return `forks at step ${r.step ?? "?"} · ${shortId(r.id)}`;
}
