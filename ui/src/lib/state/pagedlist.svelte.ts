// One paged list of a checkpoint (a channel whose list `checkpoint_detail` shows in part):
// the page shown, going to another, and the server's search over the whole list, stepping
// from hit to hit (each on its page). The paging arithmetic is paging.ts.

import type { PageHit, StatePage, StatePageRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, toFailure } from "../ipc/api";
import type { Json } from "./json";
import { channelPath, clampOffset, pageOffset, PAGE_SIZE, stepHit, unfolded } from "./paging";

/** The command a paged list calls (tests pass a fake). */
export type PageCall = (req: StatePageRequest) => Promise<StatePage>;
export const backendPage: PageCall = (req) => call(commands.statePage(req));

/** Where the list is: the checkpoint and the channel. */
export interface PagedWhere {
  db: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  channel: string;
  live: boolean;
  reveal_secrets: boolean;
}

export class PagedList {
  offset = $state(0);
  items = $state<Json[]>([]);
  total = $state(0);
  loading = $state(false);
  error = $state<string | null>(null);
  /** The last query searched, its hits (items holding it) and the one chosen. */
  query = $state("");
  hits = $state<PageHit[]>([]);
  hitCount = $state(0);
  hit = $state<number | null>(null);
  /** The folded strings being fetched whole (by path). */
  unfolding = $state<string[]>([]);
  /** The strings fetched whole, by the item that holds them (shown beside it: a message's
   * bubble does not show every part of it). Dropped with the page. */
  whole = $state.raw<{ index: number; path: string; text: string }[]>([]);
  private seq = 0;

  constructor(
    readonly where: PagedWhere,
    first: { items: Json[]; total: number; offset: number },
    private readonly page: PageCall = backendPage,
    readonly limit: number = PAGE_SIZE,
  ) {
    this.items = first.items;
    this.total = first.total;
    this.offset = first.offset;
  }

  /** The index (in the whole list) of the hit chosen, or null. */
  get current(): number | null {
    return this.hit === null ? null : (this.hits[this.hit]?.index ?? null);
  }

  private request(offset: number, query: string | null): StatePageRequest {
    const w = this.where;
    return {
      db: w.db,
      thread_id: w.thread_id,
      checkpoint_ns: w.checkpoint_ns,
      checkpoint_id: w.checkpoint_id,
      path: channelPath(w.channel),
      offset,
      limit: this.limit,
      query,
      live: w.live,
      reveal_secrets: w.reveal_secrets,
    };
  }

  /** Show the page that starts at (or holds) `offset`. */
  async go(offset: number) {
    const at = clampOffset(offset, this.limit, this.total);
    const seq = ++this.seq;
    this.loading = true;
    try {
      const p = await this.page(this.request(at, null));
      if (seq !== this.seq) return;
      this.apply(p);
      this.error = null;
    } catch (e) {
      if (seq === this.seq) this.error = toFailure(e).message;
    } finally {
      if (seq === this.seq) this.loading = false;
    }
  }

  /** Search the whole list for `query` (empty: clear), then go to the first hit's page. */
  async search(query: string) {
    const q = query.trim();
    // Nothing searched and nothing to clear: a page being read stays the one that lands.
    if (!q && !this.query && !this.hits.length) return;
    const seq = ++this.seq;
    if (!q) {
      this.query = "";
      this.hits = [];
      this.hitCount = 0;
      this.hit = null;
      this.loading = false;
      return;
    }
    this.loading = true;
    try {
      const p = await this.page(this.request(this.offset, q));
      if (seq !== this.seq) return;
      this.query = q;
      this.hits = p.hits;
      this.hitCount = p.hit_count;
      this.hit = null;
      this.apply(p);
      this.error = null;
    } catch (e) {
      if (seq === this.seq) this.error = toFailure(e).message;
    } finally {
      if (seq === this.seq) this.loading = false;
    }
    if (seq === this.seq && this.hits.length) await this.step(1);
  }

  /** Choose the next or previous hit and show its page. */
  async step(dir: 1 | -1) {
    this.hit = stepHit(this.hit, this.hits.length, dir);
    const index = this.current;
    if (index === null) return;
    const start = pageOffset(index, this.limit);
    if (start !== this.offset) await this.go(start);
  }

  /** Fetch the folded string at `path` (inside item `index`) whole and show it in place. */
  async unfold(index: number, path: string) {
    if (this.unfolding.includes(path)) return;
    const seq = this.seq;
    this.unfolding = [...this.unfolding, path];
    try {
      const p = await this.page({ ...this.request(0, null), path, limit: null, fold: 0 });
      const i = index - this.offset;
      // Still the page that holds it (not moved on meanwhile).
      if (seq !== this.seq || i < 0 || i >= this.items.length || typeof p.value !== "string") return;
      this.items[i] = unfolded(this.items[i], path, p.value);
      this.whole = [...this.whole, { index, path, text: p.value }];
      this.error = null;
    } catch (e) {
      if (seq === this.seq) this.error = toFailure(e).message;
    } finally {
      this.unfolding = this.unfolding.filter((x) => x !== path);
    }
  }

  private apply(p: StatePage) {
    if (p.offset !== this.offset) this.whole = [];
    this.items = p.items as Json[];
    this.offset = p.offset;
    this.total = p.total ?? this.total;
  }
}
