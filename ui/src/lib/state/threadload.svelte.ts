// How the thread list loads, bounded however many threads a database holds: first the
// FIRST_PAGE most recently active threads (one aggregate over the primary key: seconds on a
// database of a million threads without indexes), then at most LIST_MAX of them — every
// thread when there are fewer — instead of a million rows into the page. While a read runs
// it says what it reads and for how long, and can be stopped (its answer is then dropped;
// what is shown stays). Threads beyond LIST_MAX are found with the filter bar (on the server).

import type { ThreadSummary, ThreadsRequest } from "../ipc/bindings";
import { latest } from "./latest";

/** The first page: the most recently active threads, shown while the rest loads. */
export const FIRST_PAGE = 200;
/** The most threads the list holds (the most recently active ones). */
export const LIST_MAX = 100_000;

/** What is being read. */
export type LoadPhase = "first" | "rest";

/** The request for each phase. */
export function loadRequest(db: string, phase: LoadPhase, max = LIST_MAX): ThreadsRequest {
  return { db, limit: phase === "first" ? FIRST_PAGE : max };
}

/** Whether an answer of the rest may have left older threads out. */
export function isCapped(list: readonly unknown[], max = LIST_MAX): boolean {
  return list.length >= max;
}

/** The progress line of a read that runs. */
export function progressText(phase: LoadPhase, seconds: number): string {
  const what = phase === "first" ? "Reading the most recently active threads" : "Loading all threads";
  return seconds >= 1 ? `${what}… ${Math.floor(seconds)} s` : `${what}…`;
}

/** The note over a list that does not hold every thread, or null. */
export function partialNote(shown: number, s: { capped: boolean; partial: boolean; stopped: boolean }, max = LIST_MAX): string | null {
  if (s.capped) {
    return `Showing the ${max.toLocaleString("en-US")} most recently active threads; find older ones with the filter bar (metadata, time).`;
  }
  if (!s.partial) return null;
  const n = shown.toLocaleString("en-US");
  return s.stopped
    ? `Showing the ${n} most recently active threads (loading all threads was stopped).`
    : `Showing the ${n} most recently active threads; loading all threads…`;
}

export class ThreadListLoad {
  /** The list shown (null: nothing yet). Replaced whole, never mutated. */
  threads = $state.raw<ThreadSummary[] | null>(null);
  /** The read that runs now, if any. */
  phase = $state<LoadPhase | null>(null);
  /** Seconds the running read has taken (updated each second). */
  seconds = $state(0);
  /** The last read was stopped before its answer came. */
  stopped = $state(false);
  /** The list holds LIST_MAX threads: older ones were left out. */
  capped = $state(false);

  private readonly gate = latest();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly list: (req: ThreadsRequest) => Promise<ThreadSummary[]>,
    private readonly max = LIST_MAX,
  ) {}

  /** The list holds only the first page (the rest is loading, or was stopped). */
  partial = $state(false);

  /** Read the list: the first page when nothing is shown, then the rest. `apply` gets each
   * answer (and decides what to do with it); `fail` a failure. Resolves when done, stopped
   * or superseded. */
  async load(db: string, apply: (list: ThreadSummary[], phase: LoadPhase) => void, fail: (e: unknown) => void) {
    this.stopped = false;
    if (this.threads === null) {
      let first = 0;
      const ok = await this.read(db, "first", (page) => {
        if (this.threads !== null) return;
        first = page.length;
        this.threads = page;
        this.partial = page.length >= FIRST_PAGE;
        apply(page, "first");
      }, fail);
      // Fewer than a page: that is every thread.
      if (!ok || this.stopped || first < FIRST_PAGE) return;
    }
    await this.read(db, "rest", (list) => {
      this.threads = list;
      this.partial = false;
      this.capped = isCapped(list, this.max);
      apply(list, "rest");
    }, fail);
  }

  /** Show `list` (a poll's merge, a cached list) without reading. */
  show(list: ThreadSummary[] | null) {
    this.threads = list;
  }

  /** Stop waiting for the running read: its answer is dropped, what is shown stays. */
  stop() {
    if (this.phase === null) return;
    this.stopped = true;
    this.end();
    void this.gate(Promise.resolve(null), () => {}, () => {});
  }

  /** Run `load()` through the same gate as the list's reads (a poll): only the newest
   * applies. Not while a read runs (false: nothing was asked). */
  async through<T>(load: () => Promise<T>, apply: (value: T) => void, fail: (e: unknown) => void): Promise<boolean> {
    if (this.phase !== null) return false;
    return this.gate(load(), apply, fail);
  }

  /** Stop the timer for good (the screen goes). */
  dispose() {
    this.end();
  }

  private async read(db: string, phase: LoadPhase, apply: (list: ThreadSummary[]) => void, fail: (e: unknown) => void): Promise<boolean> {
    this.begin(phase);
    let applied = false;
    await this.gate(
      this.list(loadRequest(db, phase, this.max)),
      (list) => {
        applied = true;
        this.end();
        apply(list);
      },
      (e) => {
        this.end();
        fail(e);
      },
    );
    return applied;
  }

  private begin(phase: LoadPhase) {
    this.end();
    this.phase = phase;
    this.seconds = 0;
    const t0 = Date.now();
    this.timer = setInterval(() => (this.seconds = (Date.now() - t0) / 1000), 1000);
  }

  private end() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.phase = null;
  }
}
