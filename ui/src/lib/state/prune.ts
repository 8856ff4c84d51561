// The prune dialog's pure logic: what goes per thread, and the words a destructive prune asks
// to be typed (as Delete thread asks for the thread id).

import type { PruneStrategy, PruneSummary } from "../ipc/bindings";

export interface ThreadShare {
  thread_id: string;
  /** Checkpoints removed from this thread. */
  checkpoints: number;
  /** Subgraph namespaces among them. */
  namespaces: number;
}

/** The preview per thread, in the order the threads were chosen (threads with nothing to remove included). */
export function breakdown(threadIds: string[], preview: PruneSummary): ThreadShare[] {
  const per = new Map<string, { checkpoints: number; ns: Set<string> }>(threadIds.map((t) => [t, { checkpoints: 0, ns: new Set() }]));
  for (const k of preview.checkpoints) {
    let s = per.get(k.thread_id);
    if (!s) {
      s = { checkpoints: 0, ns: new Set() };
      per.set(k.thread_id, s);
    }
    s.checkpoints += 1;
    if (k.checkpoint_ns) s.ns.add(k.checkpoint_ns);
  }
  return [...per].map(([thread_id, s]) => ({ thread_id, checkpoints: s.checkpoints, namespaces: s.ns.size }));
}

/**
 * What must be typed before a prune runs: nothing for keep_latest (each thread keeps its
 * state); for deleting whole threads, the thread id (one thread) or "delete N threads".
 */
export function confirmPhrase(strategy: PruneStrategy, threadIds: string[]): string | null {
  if (strategy !== "delete") return null;
  return threadIds.length === 1 ? threadIds[0] : `delete ${threadIds.length} threads`;
}
