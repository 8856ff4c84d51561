// The thread list's search box and status chips: which threads match, how many of each
// status, and the list's default order.

import type { ThreadStatus, ThreadSummary } from "../ipc/bindings";
import { serverSearchText } from "./devserver";

/** A status chip: every thread, one status, or the threads whose status is unknown (an
 * encrypted database opened without its key, a latest checkpoint that does not read). */
export type StatusFilter = "all" | ThreadStatus | "unknown";

/** Threads matching a search text (thread id, next nodes, interrupt text; a server's status,
 * graph and metadata) and a status. */
export function filterThreads(
  threads: readonly ThreadSummary[],
  query: string,
  status: StatusFilter,
): ThreadSummary[] {
  const q = query.trim().toLowerCase();
  return threads.filter((t) => {
    if (status === "unknown" ? t.status !== null : status !== "all" && t.status !== status) return false;
    if (!q) return true;
    const hay = [t.thread_id, ...t.next, ...t.namespaces, JSON.stringify(t.interrupts), serverSearchText(t)].join(" ").toLowerCase();
    return hay.includes(q);
  });
}

/** Status counts for the filter chips (`unknown`: threads without a status). */
export function statusCounts(threads: readonly ThreadSummary[]): Record<StatusFilter, number> {
  const c: Record<StatusFilter, number> = { all: threads.length, finished: 0, interrupted: 0, failed: 0, pending: 0, unknown: 0 };
  for (const t of threads) c[t.status ?? "unknown"]++;
  return c;
}

/** A chip's count as shown: a status no thread is known to have reads `—`, not `0`, when no
 * thread's status is known (a locked database's threads may all be waiting for a human). */
export function countText(c: Record<StatusFilter, number>, key: StatusFilter): string {
  const known = c.all - c.unknown;
  return known === 0 && key !== "all" && key !== "unknown" ? "—" : String(c[key]);
}

/** Newest activity first, then by id. */
export function byActivity(a: ThreadSummary, b: ThreadSummary): number {
  const ta = a.latest_ts ?? "";
  const tb = b.latest_ts ?? "";
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.thread_id.localeCompare(b.thread_id);
}
