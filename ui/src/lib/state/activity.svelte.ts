// What the threads' whole histories say beyond their latest checkpoints (thread_activity: the
// tasks that raised, then recovered on a retry, the nodes that ran, and the tokens the thread
// used), looked up for the rows in view — a batch per pause in scrolling, each thread once — and,
// while the list is searched, for every thread (its nodes are searched), a batch at a time.

import type { ThreadActivity, TokenUsage } from "../ipc/bindings";

export type ActivityLoad = (threadIds: string[]) => Promise<ThreadActivity[]>;

/** The API's limit per call. */
export const ACTIVITY_BATCH = 500;

export class ThreadActivities {
  /** Each looked-up thread's recovered nodes (absent: not looked up yet). Replaced whole. */
  recovered = $state.raw(new Map<string, string[]>());
  /** Each looked-up thread's tokens (null: no message carried usage). Replaced whole. */
  tokens = $state.raw(new Map<string, TokenUsage | null>());
  /** Each looked-up thread's nodes that ran (the search matches them). Replaced whole. */
  nodes = $state.raw(new Map<string, string[]>());
  /** Threads still to look up for a search (wantAll). */
  backlog = $state(0);

  private readonly asked = new Set<string>();
  private wanted: string[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private generation = 0;
  private queue: string[] = [];
  private draining = false;

  constructor(
    private readonly load: ActivityLoad,
    private readonly delay = 150,
  ) {}

  /** The rows in view: look up those not asked for yet, once scrolling pauses. */
  want(threadIds: string[]) {
    const fresh = threadIds.filter((id) => !this.asked.has(id));
    if (!fresh.length) return;
    this.wanted.push(...fresh);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), this.delay);
  }

  /** Look up what is wanted now (tests call it directly). */
  async flush() {
    this.timer = null;
    const ids = [...new Set(this.wanted)].filter((id) => !this.asked.has(id)).slice(0, ACTIVITY_BATCH);
    this.wanted = [];
    await this.lookup(ids);
  }

  /** Every thread (the list is searched, and the search matches the nodes that ran): those not
   * looked up yet, a batch at a time, one call at a time. Resolves when all are in (or the list
   * was reloaded). */
  async wantAll(threadIds: string[]) {
    const queued = new Set(this.queue);
    this.queue.push(...threadIds.filter((id) => !this.asked.has(id) && !queued.has(id)));
    this.backlog = this.queue.length;
    if (this.draining) return;
    this.draining = true;
    const generation = this.generation;
    try {
      while (this.queue.length && generation === this.generation) {
        const batch = this.queue.splice(0, ACTIVITY_BATCH).filter((id) => !this.asked.has(id));
        this.backlog = this.queue.length;
        if (batch.length) await this.lookup(batch);
      }
    } finally {
      if (generation === this.generation) this.draining = false;
    }
  }

  private async lookup(ids: string[]) {
    if (!ids.length) return;
    ids.forEach((id) => this.asked.add(id));
    const generation = this.generation;
    let found: ThreadActivity[];
    try {
      found = await this.load(ids);
    } catch {
      // A mark the list can do without: asked again when the rows come into view again.
      ids.forEach((id) => this.asked.delete(id));
      return;
    }
    if (generation !== this.generation) return;
    const next = new Map(this.recovered);
    const tokens = new Map(this.tokens);
    const nodes = new Map(this.nodes);
    for (const a of found) {
      next.set(a.thread_id, a.recovered);
      tokens.set(a.thread_id, a.tokens ?? null);
      nodes.set(a.thread_id, a.nodes ?? []);
    }
    this.recovered = next;
    this.tokens = tokens;
    this.nodes = nodes;
  }

  /** A reloaded list: everything is looked up again. */
  reset() {
    this.generation++;
    this.asked.clear();
    this.wanted = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.recovered = new Map();
    this.tokens = new Map();
    this.nodes = new Map();
    this.queue = [];
    this.backlog = 0;
    this.draining = false;
  }
}

/** The badge's title: which nodes raised and then recovered. */
export function retriedTitle(nodes: string[]): string {
  const names = [...new Set(nodes)];
  const n = nodes.length === 1 ? "a task" : `${nodes.length} tasks`;
  return `Raised, then recovered on retry: ${n} (${names.join(", ")}) failed on the way and finished when run again`;
}
