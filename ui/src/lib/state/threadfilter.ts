// The thread list's search box and status chips: which threads match (by what the row shows,
// the nodes that ran, and what a value search found), how many of each status, and the list's
// default order.

import type { ThreadStatus, ThreadSummary } from "../ipc/bindings";
import { serverSearchText } from "./devserver";
import { errorLine } from "./errorvalue";
import { interruptText } from "./format";
import type { Json } from "./tree";

/** A status chip: every thread, one status, or the threads whose status is unknown (an
 * encrypted database opened without its key, a latest checkpoint that does not read). */
export type StatusFilter = "all" | ThreadStatus | "unknown";

/** What the search matches beyond a thread's summary. */
export interface FilterContext {
  /** The nodes that ran in each thread's history (`thread_activity`, for the threads looked
   * up so far). */
  nodes?: ReadonlyMap<string, readonly string[]>;
  /** The threads a value search found for this very text (its results panel is shown). */
  found?: ReadonlySet<string>;
}

/** The error or interrupt text a thread's row shows (what the search also finds). */
export function rowNoteText(t: Pick<ThreadSummary, "status" | "interrupts" | "error">): string {
  if (t.status === "interrupted" && t.interrupts.length) return interruptText(t.interrupts[0]);
  if (t.status === "failed" && t.error) return errorLine(t.error as Json, 90);
  return "";
}

/** Threads matching a search text (thread id, nodes due next and nodes that ran, the row's
 * error or interrupt text — and the whole error and interrupts —; a server's status, graph and
 * metadata; or found by the value search for it) and a status. */
export function filterThreads(
  threads: readonly ThreadSummary[],
  query: string,
  status: StatusFilter,
  ctx: FilterContext = {},
): ThreadSummary[] {
  const q = query.trim().toLowerCase();
  return threads.filter((t) => {
    if (status === "unknown" ? t.status !== null : status !== "all" && t.status !== status) return false;
    if (!q || ctx.found?.has(t.thread_id)) return true;
    const hay = [
      t.thread_id,
      ...t.next,
      ...(ctx.nodes?.get(t.thread_id) ?? []),
      ...t.namespaces,
      rowNoteText(t),
      ...t.interrupts.map(interruptText),
      JSON.stringify(t.interrupts),
      t.error === null ? "" : JSON.stringify(t.error),
      serverSearchText(t),
    ]
      .join(" ")
      .toLowerCase();
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
