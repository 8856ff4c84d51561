// Search inside values: runs the backend's `start_search` job for the thread list, following
// its progress and results, with Cancel. A new search replaces the one running (which is
// cancelled, and whatever it still reports is dropped).

import type { ValueSearchRequest, ValueSearchSummary } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob } from "../ipc/api";
import { JobRun, type JobBackend } from "./jobrun.svelte";
import { canSearch, resultsOf, summaryOf, type SearchResult } from "./valuesearch";

/** What the search runs on (the IPC commands; fakes in tests). */
export type SearchBackend = JobBackend<ValueSearchRequest>;

export const ipcSearch: SearchBackend = {
  start: (req) => call(commands.startSearch(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 150, onUpdate }),
  cancel: cancelJob,
};

export class ValueSearch extends JobRun<ValueSearchRequest> {
  /** The text searched for (null: no search to show). */
  query = $state<string | null>(null);
  /** Matching threads, in the order found (newest thread first). */
  results = $state.raw<SearchResult[]>([]);
  /** How the search ended (null while it runs, or when it failed or was cancelled). */
  summary = $state<ValueSearchSummary | null>(null);

  constructor(backend: SearchBackend = ipcSearch) {
    super(backend);
  }

  /** Search the threads of database `db` for `text` (blank: nothing happens). */
  async start(db: string, text: string): Promise<void> {
    if (!canSearch(text)) return;
    const query = text.trim();
    const req = { db, query, limit: null, threads: null };
    this.query = query;
    this.results = [];
    this.summary = null;
    await this.run(
      req,
      "the search failed",
      (s) => {
        const found = resultsOf(s.events);
        if (found.length > 0) this.results = [...this.results, ...found];
      },
      (result) => {
        this.summary = summaryOf(result);
      },
    );
  }

  /** Stop and forget the search (the panel closes). */
  clear() {
    this.stop();
    this.query = null;
    this.progress = null;
    this.results = [];
    this.summary = null;
    this.cancelled = false;
    this.error = null;
  }
}
