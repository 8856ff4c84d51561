// Watch a key (the `watch_key` command): the path of a value in the state view, and the pure
// parts of the Watch panel — which change is selected, where prev/next go, how a change reads.

import type { WatchChange } from "../ipc/bindings";

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
