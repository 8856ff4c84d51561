// Live refresh of a running server's threads: which sessions poll, how often (a backoff that
// slows down while nothing changes and speeds up when something does or a run is in progress),
// whether a poll found anything new, and the poller itself (one request at a time, paused while
// the window is hidden, stopped for good on close). Pure: timers and visibility are injected.

import type { DbInfo, GraphRow, ServerThread, ThreadGraph, ThreadSummary } from "../ipc/bindings";

/** The first and fastest interval (ms). */
export const FAST_MS = 1500;
/** The slowest interval (ms), reached while nothing changes. */
export const SLOW_MS = 30_000;

/**
 * Whether a session's threads change under it, so its screens poll: an Agent Server's API,
 * or a `langgraph dev` folder whose server runs now.
 */
export function pollsLive(info: Pick<DbInfo, "kind" | "server"> | null | undefined): boolean {
  if (!info) return false;
  if (info.kind === "agentserver") return true;
  return info.kind === "devserver" && info.server?.running === true;
}

/** A thread the server runs now (`status == "busy"`). */
export function isBusy(server: Pick<ServerThread, "status"> | null | undefined): boolean {
  return server?.status === "busy";
}

/** Whether any thread of a list runs now. */
export function anyBusy(threads: readonly Pick<ThreadSummary, "server">[] | null | undefined): boolean {
  return (threads ?? []).some((t) => isBusy(t.server));
}

/** The accessible label of the "running" mark. */
export function busyLabel(threadId: string): string {
  return `Thread ${threadId} is running now`;
}

/**
 * The wait before the next poll: fast after a change or while a run is in progress, else
 * twice the last wait, up to {@link SLOW_MS}.
 */
export function nextDelay(previous: number | null, changed: boolean, busy: boolean): number {
  if (previous === null || changed || busy) return FAST_MS;
  return Math.min(previous * 2, SLOW_MS);
}

/** What a thread list shows, reduced to what a poll compares (order kept). */
export function threadsSignature(threads: readonly ThreadSummary[] | null | undefined): string {
  if (!threads) return "";
  return threads
    .map((t) => {
      const s = t.server;
      const runs = s ? s.runs.map((r) => `${r.run_id}:${r.status ?? ""}:${r.updated_at ?? ""}`).join(",") : "";
      return [t.thread_id, t.latest_checkpoint_id ?? "", t.checkpoint_count, t.status ?? "", t.next.join(","), s?.status ?? "", s?.updated_at ?? "", runs].join("|");
    })
    .join("\n");
}

/** How many of the most recently active threads a list poll asks for. */
export const POLL_PAGE = 200;

/**
 * A list poll's answer (the `limit` most recently active threads) applied to the list shown: a
 * thread that changed is among the most recently active, so those replace their rows and new
 * ones are added; the rest stay. A page shorter than its limit is the whole list (then threads
 * gone from the server go from the list too).
 */
export function mergePage(current: readonly ThreadSummary[], page: readonly ThreadSummary[], limit: number): ThreadSummary[] {
  if (page.length < limit) return [...page];
  const fresh = new Map(page.map((t) => [t.thread_id, t]));
  const merged = current.map((t) => fresh.get(t.thread_id) ?? t);
  const known = new Set(current.map((t) => t.thread_id));
  return [...merged, ...page.filter((t) => !known.has(t.thread_id))];
}

function rowKey(r: GraphRow): string {
  return `${r.ns}/${r.id}:${r.head ? "h" : ""}${r.ns_head ? "n" : ""}:${r.marks.join(",")}:${r.ran.join(",")}`;
}

/** A thread's DAG, reduced to what a poll compares: its checkpoints, heads and step marks. */
export function graphSignature(graph: ThreadGraph | null | undefined): string {
  if (!graph) return "";
  return `${graph.rows.map(rowKey).join(";")}#${graph.warnings.join(";")}`;
}

/** What one poll found. */
export interface TickResult {
  changed: boolean;
  busy: boolean;
}

/** What the poller runs on (the browser's timers and page visibility; fakes in tests). */
export interface PollEnv {
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** The window is hidden (a minimised window or a background tab). */
  hidden(): boolean;
  /** Call `fn` when the window is shown or hidden; returns the unsubscribe. */
  onVisibility(fn: () => void): () => void;
}

export const browserEnv: PollEnv = {
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  hidden: () => typeof document !== "undefined" && document.visibilityState === "hidden",
  onVisibility: (fn) => {
    if (typeof document === "undefined") return () => {};
    document.addEventListener("visibilitychange", fn);
    return () => document.removeEventListener("visibilitychange", fn);
  },
};

/**
 * Calls `tick` again and again with the {@link nextDelay} backoff: never two at once (the next
 * wait starts when a tick ends), none while the window is hidden (a fast one when it shows
 * again), none after {@link Poller.stop}. A tick that throws counts as "nothing changed".
 */
export class Poller {
  /** The wait before the poll now scheduled (null: none scheduled). */
  delay: number | null = null;
  private timer: unknown = null;
  private running = false;
  private stopped = false;
  private unlisten: (() => void) | null = null;

  constructor(
    private readonly tick: () => Promise<TickResult>,
    private readonly env: PollEnv = browserEnv,
  ) {}

  /** Start polling (the first poll after {@link FAST_MS}); returns {@link stop}. */
  start(): () => void {
    this.unlisten = this.env.onVisibility(() => this.visibility());
    this.schedule(FAST_MS);
    return () => this.stop();
  }

  stop() {
    this.stopped = true;
    this.clear();
    this.unlisten?.();
    this.unlisten = null;
  }

  /** Something changed here (a fork, a refresh): poll fast again. */
  poke() {
    if (this.stopped || this.running) return;
    this.schedule(FAST_MS);
  }

  private clear() {
    if (this.timer !== null) this.env.clearTimer(this.timer);
    this.timer = null;
    this.delay = null;
  }

  private schedule(ms: number) {
    this.clear();
    if (this.stopped) return;
    this.delay = ms;
    this.timer = this.env.setTimer(() => void this.run(), ms);
  }

  private visibility() {
    if (this.stopped) return;
    if (this.env.hidden()) this.clear();
    else if (!this.running) this.schedule(FAST_MS);
  }

  private async run() {
    const previous = this.delay;
    this.timer = null;
    this.delay = null;
    if (this.stopped || this.running || this.env.hidden()) return;
    this.running = true;
    let result: TickResult = { changed: false, busy: false };
    try {
      result = await this.tick();
    } catch {
      // A failed poll: try again later, more slowly (the screen shows its own errors).
    } finally {
      this.running = false;
    }
    if (this.stopped || this.env.hidden()) return;
    this.schedule(nextDelay(previous, result.changed, result.busy));
  }
}
