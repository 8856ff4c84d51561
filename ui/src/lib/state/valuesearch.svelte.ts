// Search inside values: runs the backend's `start_search` job for the thread list, following
// its progress and results, with Cancel. A new search replaces the one running (which is
// cancelled, and whatever it still reports is dropped).

import type { JobProgress, JobSnapshot, ValueSearchRequest, ValueSearchSummary } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob, toFailure, type Failure } from "../ipc/api";
import { canSearch, resultsOf, summaryOf, type SearchResult } from "./valuesearch";

/** What the search runs on (the IPC commands; fakes in tests). */
export interface SearchBackend {
  start(req: ValueSearchRequest): Promise<string>;
  follow(job: string, onUpdate: (s: JobSnapshot) => void): Promise<JobSnapshot>;
  cancel(job: string): Promise<void>;
}

export const ipcSearch: SearchBackend = {
  start: (req) => call(commands.startSearch(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 150, onUpdate }),
  cancel: cancelJob,
};

export class ValueSearch {
  /** The text searched for (null: no search to show). */
  query = $state<string | null>(null);
  running = $state(false);
  progress = $state<JobProgress | null>(null);
  /** Matching threads, in the order found (newest thread first). */
  results = $state.raw<SearchResult[]>([]);
  /** How the search ended (null while it runs, or when it failed or was cancelled). */
  summary = $state<ValueSearchSummary | null>(null);
  cancelled = $state(false);
  error = $state<Failure | null>(null);

  private job: string | null = null;
  private generation = 0;
  private stopAsked = false;
  private readonly backend: SearchBackend;

  constructor(backend: SearchBackend = ipcSearch) {
    this.backend = backend;
  }

  /** Search the threads of database `db` for `text` (blank: nothing happens). */
  async start(db: string, text: string): Promise<void> {
    if (!canSearch(text)) return;
    this.stopRunning();
    const gen = ++this.generation;
    const current = () => gen === this.generation;
    this.query = text.trim();
    this.running = true;
    this.progress = null;
    this.results = [];
    this.summary = null;
    this.cancelled = false;
    this.error = null;
    this.job = null;
    this.stopAsked = false;
    try {
      const job = await this.backend.start({ db, query: this.query, limit: null, threads: null });
      if (!current()) return void this.backend.cancel(job);
      this.job = job;
      if (this.stopAsked) void this.backend.cancel(job);
      const final = await this.backend.follow(job, (s) => {
        if (!current()) return;
        this.progress = s.progress;
        const found = resultsOf(s.events);
        if (found.length > 0) this.results = [...this.results, ...found];
      });
      if (!current()) return;
      if (final.state === "succeeded") this.summary = summaryOf(final.result);
      else if (final.state === "cancelled") this.cancelled = true;
      else this.error = toFailure(final.error ?? "the search failed");
    } catch (e) {
      if (current()) this.error = toFailure(e);
    } finally {
      if (current()) {
        this.running = false;
        this.job = null;
      }
    }
  }

  /** Stop the running search (what it found so far stays). */
  cancel() {
    if (!this.running) return;
    this.stopAsked = true;
    if (this.job) void this.backend.cancel(this.job);
  }

  /** Stop and forget the search (the panel closes). */
  clear() {
    this.stopRunning();
    this.generation++;
    this.query = null;
    this.running = false;
    this.progress = null;
    this.results = [];
    this.summary = null;
    this.cancelled = false;
    this.error = null;
  }

  private stopRunning() {
    if (this.running && this.job) void this.backend.cancel(this.job);
    this.job = null;
  }
}
