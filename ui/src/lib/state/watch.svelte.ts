// The Watch panel's state: the watched path, the changes the backend found (`watch_key`, along
// the selected branch's line, then branch by branch), their groups, and jumping between them (a
// click, prev/next) by selecting their checkpoints in the thread view.

import type { GraphRow, WatchReport, WatchRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, toFailure, type Failure } from "../ipc/api";
import { latest } from "./latest";
import { cursorOf, neighbour, visibleChanges, watchGroups } from "./watch";
import { branchColor } from "../graph/lanes";

/** What the watch needs from the thread view. */
export interface WatchHost {
  readonly threadId: string;
  /** The open database's handle, null when none is open. */
  db(): string | null;
  /** The selected checkpoint's id (null: none). */
  selectedId(): string | null;
  /** Select a checkpoint. */
  select(key: { ns: string; id: string }): void;
  /** The trunk's branch key in the graph (its colour is the first lane's). */
  trunk?(): string;
  /** The graph's colour slot of each branch (graph/lanes.ts `branchColors`). */
  colors?(): Map<string, number>;
  /** The tip of the selected checkpoint's branch in namespace `ns` (null: none): the line
   * listed first. */
  along?(ns: string): string | null;
  /** The graph's rows (the groups' names and fork points). */
  rows?(): readonly GraphRow[];
}

export type WatchLoad = (req: WatchRequest) => Promise<WatchReport>;

export const backendWatch: WatchLoad = (req) => call(commands.watchKey(req));

export class Watch {
  /** The watched path (null: nothing watched, the panel is closed). */
  path = $state<string | null>(null);
  /** The namespace watched in. */
  ns = $state("");
  report = $state.raw<WatchReport | null>(null);
  error = $state<Failure | null>(null);
  loading = $state(false);
  /** List only the changes on the head's branch. */
  headOnly = $state(false);
  /** The change last jumped to (prev/next go on from there when the selection is elsewhere). */
  private last = $state(-1);
  /** The tip of the line the report was read along (null: the head's). */
  along = $state<string | null>(null);

  readonly changes = $derived(visibleChanges(this.report?.changes ?? [], this.headOnly));
  /** The list's headings: the line first, then each other branch. */
  readonly groups = $derived.by(() => watchGroups(this.changes, this.host.rows?.() ?? [], this.along, this.trunk));
  /** The listed change at the selected checkpoint (-1: none). */
  readonly cursor = $derived.by(() => cursorOf(this.changes, this.host.selectedId()));

  private readonly loads = latest();

  constructor(
    private readonly host: WatchHost,
    private readonly load: WatchLoad = backendWatch,
  ) {}

  /** Watch `path` in namespace `ns`. */
  async start(path: string, ns: string) {
    this.path = path;
    this.ns = ns;
    this.report = null;
    this.last = -1;
    await this.reload();
  }

  /** Ask the backend again (after a fork, a re-run, …), along the selected branch. */
  async reload() {
    const db = this.host.db();
    if (!db || this.path === null) return;
    this.loading = true;
    this.error = null;
    const along = this.host.along?.(this.ns) ?? null;
    const done = await this.loads(
      this.load({ db, thread_id: this.host.threadId, checkpoint_ns: this.ns, path: this.path, max_value_bytes: null, along }),
      (r) => {
        this.report = r;
        this.along = along;
        this.error = null;
      },
      (e) => {
        this.report = null;
        this.error = toFailure(e);
      },
    );
    if (done) this.loading = false;
  }

  /** Stop watching. */
  close() {
    this.path = null;
    this.report = null;
    this.error = null;
    this.loading = false;
    this.last = -1;
    // Supersede a load still in flight.
    void this.loads(Promise.resolve(null), () => {}, () => {});
  }

  /** Select the checkpoint of listed change `i`. */
  jump(i: number) {
    const c = this.changes[i];
    if (!c) return;
    this.last = i;
    this.host.select({ ns: this.report?.checkpoint_ns ?? this.ns, id: c.checkpoint_id });
  }

  /** The trunk's branch key, for colouring the changes as the graph colours their branches. */
  get trunk(): string {
    return this.host.trunk?.() ?? "";
  }

  /** The colour slot of a change's branch: the graph's, else one from its key. */
  colorOf(branchKey: string): number {
    return this.host.colors?.().get(branchKey) ?? branchColor(branchKey, branchKey === this.trunk);
  }

  /** Where prev (-1) or next (+1) would go (null: nowhere). */
  target(dir: -1 | 1): number | null {
    return neighbour(this.changes.length, this.cursor >= 0 ? this.cursor : this.last, dir);
  }

  prev() {
    const to = this.target(-1);
    if (to !== null) this.jump(to);
  }

  next() {
    const to = this.target(1);
    if (to !== null) this.jump(to);
  }
}
