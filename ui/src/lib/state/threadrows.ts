// The thread list's rows: sorted by a column, and runs of many similar threads (`bulk-000001`,
// `bulk-000002`, … — the backend says which, `ThreadSummary.group`) folded into one group row
// so that they do not bury the rest. Pure, for the virtualised table.

import type { ThreadSummary } from "../ipc/bindings";

export type SortKey = "thread" | "status" | "checkpoints" | "activity";
export type SortDir = "asc" | "desc";

export type DisplayRow =
  | { kind: "thread"; thread: ThreadSummary }
  | { kind: "group"; prefix: string; count: number; open: boolean };

const STATUS_ORDER: Record<string, number> = { failed: 0, interrupted: 1, pending: 2, finished: 3 };

function compare(key: SortKey, a: ThreadSummary, b: ThreadSummary): number {
  switch (key) {
    case "thread":
      return a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0;
    case "status":
      return (STATUS_ORDER[a.status ?? ""] ?? 9) - (STATUS_ORDER[b.status ?? ""] ?? 9);
    case "checkpoints":
      return a.checkpoint_count - b.checkpoint_count;
    case "activity": {
      const ta = a.latest_ts ?? "";
      const tb = b.latest_ts ?? "";
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    }
  }
}

/** Sorted by `key` (ties: newest activity, then id), without changing `threads`. */
export function sortThreads(threads: readonly ThreadSummary[], key: SortKey, dir: SortDir): ThreadSummary[] {
  const sign = dir === "asc" ? 1 : -1;
  return [...threads].sort(
    (a, b) => sign * compare(key, a, b) || -compare("activity", a, b) || compare("thread", a, b),
  );
}

/**
 * The rows to show: threads in `sorted` order, except that the threads of a group (the
 * backend's `ThreadSummary.group`: a run of similar ids, flashback_api::groups) become one
 * group row at its first member's place, followed by its threads when its prefix is in
 * `open` — or when `unfold` (a search: its matches are shown, not hidden behind a group).
 */
export function displayRows(sorted: readonly ThreadSummary[], open: ReadonlySet<string>, unfold = false): DisplayRow[] {
  const members = new Map<string, ThreadSummary[]>();
  const order: (ThreadSummary | string)[] = [];
  for (const t of sorted) {
    const p = unfold ? null : (t.group ?? null);
    if (p !== null) {
      if (!members.has(p)) {
        members.set(p, []);
        order.push(p);
      }
      members.get(p)!.push(t);
    } else {
      order.push(t);
    }
  }
  const rows: DisplayRow[] = [];
  for (const item of order) {
    if (typeof item !== "string") {
      rows.push({ kind: "thread", thread: item });
      continue;
    }
    const list = members.get(item)!;
    const isOpen = open.has(item);
    rows.push({ kind: "group", prefix: item, count: list.length, open: isOpen });
    if (isOpen) for (const t of list) rows.push({ kind: "thread", thread: t });
  }
  return rows;
}
