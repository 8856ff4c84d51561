// The thread list's filter bar at work: the threads found on the backend (a page at a time,
// newest match first, "More" follows the last thread's cursor) and the metadata keys to
// suggest (sampled once per database). The logic of chips, requests and the URL is in
// metafilter.ts.

import type { MetadataKey, ThreadsRequest, ThreadSummary } from "../ipc/bindings";
import { toFailure, type Failure } from "../ipc/api";
import { latest } from "./latest";
import { EMPTY_FIND, findRequest, isActive, type ThreadFind } from "./metafilter";

/** Threads a page of the found list holds. */
export const FIND_PAGE = 200;

export class ThreadFinder {
  /** What the bar finds by. */
  find = $state<ThreadFind>(EMPTY_FIND);
  /** The threads found so far (null: not found yet, or no filter). Replaced whole. */
  threads = $state.raw<ThreadSummary[] | null>(null);
  /** The last page was full: more threads may match. */
  more = $state(false);
  loading = $state(false);
  error = $state<Failure | null>(null);
  /** The metadata keys present (sampled), for suggestions. */
  keys = $state.raw<MetadataKey[]>([]);

  private readonly gate = latest();
  private keysOf: string | null = null;

  constructor(
    private readonly list: (req: ThreadsRequest) => Promise<ThreadSummary[]>,
    private readonly sample: (db: string) => Promise<MetadataKey[]>,
  ) {}

  get active(): boolean {
    return isActive(this.find);
  }

  /** Find by `find` (the first page); no filter: nothing found, the whole list shows. */
  async set(db: string, find: ThreadFind) {
    this.find = find;
    this.threads = null;
    this.more = false;
    this.error = null;
    if (!isActive(find)) {
      this.loading = false;
      return;
    }
    await this.page(db, undefined);
  }

  /** The next page, after the last thread found. */
  async next(db: string) {
    const last = this.threads?.at(-1)?.cursor;
    if (!this.more || !last) return;
    await this.page(db, last);
  }

  private async page(db: string, after: string | undefined) {
    this.loading = true;
    const before = after ? (this.threads ?? []) : [];
    await this.gate(
      this.list(findRequest(db, this.find, FIND_PAGE, after)),
      (page) => {
        this.threads = [...before, ...page];
        this.more = page.length >= FIND_PAGE;
        this.loading = false;
      },
      (e) => {
        this.error = toFailure(e);
        this.loading = false;
      },
    );
  }

  /** The keys to suggest, read once per database. */
  async loadKeys(db: string) {
    if (this.keysOf === db) return;
    this.keysOf = db;
    try {
      this.keys = await this.sample(db);
    } catch {
      // Suggestions only: the bar works without them.
      this.keys = [];
    }
  }
}
