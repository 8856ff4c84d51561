// The thread screen's state: the thread's DAG, the selected checkpoint and the one it is
// compared with, the selected checkpoint's detail and the diff of the two, the replay, and the
// actions that change them. The screen only lays it out.
//
// Loads overlap (fast stepping, a re-run's live tail reloading the DAG per poll): each kind goes
// through a `latest()` gate, so a slow stale answer never overwrites a newer one. A selection
// asked for by a superseded DAG reload is carried over to the one that lands.

import type { CheckpointDetail, CheckpointDiff, Dialect, ForkResult, ReplayStep, ThreadGraph } from "../ipc/bindings";
import { PAGE_SIZE } from "./paging";
import { toFailure, type Failure } from "../ipc/api";
import { branchOf, childIndex, move, type Step } from "../graph/stepping";
import { forkedText } from "./forkhint";
import { app, type Toast } from "./app.svelte";
import { errorTitle } from "./format";
import { latest } from "./latest";
import { Action } from "./action.svelte";
import { Replay } from "./replay.svelte";
import { deltaControls, type DeltaControls } from "./detail";
import { openingRow } from "./liveview";
import { backendApi, type ThreadApi } from "./threadapi";

export type { ThreadApi } from "./threadapi";

/** The dialogs the thread screen opens (one at a time). */
export type ThreadDialog = "edit" | "merge" | "rerun" | "export" | "delete" | "help" | "repair";

/** The tabs of the selected checkpoint's detail. */
export type DetailTab = "state" | "writes" | "tasks" | "meta" | "storage" | "topology";

/** A checkpoint: its namespace and id. */
export type CheckpointKey = { ns: string; id: string };

/** What the view needs from the rest of the app (tests pass fakes). */
export interface ThreadDeps {
  api: ThreadApi;
  /** The open database's handle, null when none is open. */
  db: () => string | null;
  /** Which library wrote it (how its program resumes a fork). */
  dialect: () => Dialect;
  /** The backend has no such database open (any more): back to the open screen. */
  notOpen: () => void;
  toast: (kind: Toast["kind"], text: string, ms?: number) => void;
  /** Remember the reducer of a DeltaChannel for this database (null: inferred). */
  saveReducer: (channel: string, reducer: string | null) => Promise<void>;
}

const appDeps = (): ThreadDeps => ({
  api: backendApi,
  db: () => app.db?.db ?? null,
  dialect: () => app.db?.dialect ?? "python",
  notOpen: () => (app.screen = { name: "open" }),
  toast: (kind, text, ms) => app.toast(kind, text, ms),
  saveReducer: (channel, reducer) => app.setReducer(channel, reducer),
});

const same = (a: CheckpointKey | null, b: CheckpointKey) => a !== null && a.ns === b.ns && a.id === b.id;

export class ThreadView {
  readonly threadId: string;
  // Raw: replaced whole on each reload, never mutated (10k+ rows behind deep proxies are slow).
  graph = $state.raw<ThreadGraph | null>(null);
  graphError = $state<Failure | null>(null);
  /** Subgraph namespaces folded away in the DAG. */
  collapsed = $state<string[]>([]);
  selectedKey = $state<CheckpointKey | null>(null);
  compareKey = $state<CheckpointKey | null>(null);
  /** The next click picks the checkpoint to compare with. */
  pickingCompare = $state(false);
  detail = $state<CheckpointDetail | null>(null);
  detailError = $state<Failure | null>(null);
  diff = $state<CheckpointDiff | null>(null);
  diffError = $state<Failure | null>(null);
  /** Show SecretStr values in plain text. */
  reveal = $state(false);
  /** The next detail load decodes every value, past the decode budget (see openFull). */
  full = false;
  /** DeltaChannels as the saver stores them, instead of rebuilt as the graph sees them. */
  rawDelta = $state(false);
  /** A latest checkpoint as its step record rather than live (as `get_state` shows it now). */
  stepRecord = $state(false);
  /** The state panel's DeltaChannel switches. */
  readonly delta: DeltaControls = deltaControls(this);

  /** Checkpoints this session wrote (forks, a re-run's), highlighted in the DAG. */
  fresh = $state(new Set<string>());
  /** Fork here: one at a time (the button shows it); a failure is a toast. */
  readonly forking = new Action();
  readonly replay: Replay;

  readonly rows = $derived(this.graph?.rows ?? []);
  readonly kids = $derived(childIndex(this.rows));
  /** Row of the selected checkpoint (-1: none). */
  readonly selected = $derived(this.indexOf(this.selectedKey));
  /** Row of the compared checkpoint (null: not comparing). */
  readonly compare = $derived(this.compareKey ? this.indexOf(this.compareKey) : null);
  /** The selected checkpoint's branch, root first. */
  readonly branch = $derived(this.selected >= 0 ? branchOf(this.rows, this.kids, this.selected) : []);
  /** Where the selection is on its branch. */
  readonly position = $derived(this.branch.indexOf(this.selected));
  readonly current = $derived(this.selected >= 0 ? this.rows[this.selected] : null);

  private readonly deps: ThreadDeps;
  private readonly graphLoads = latest();
  private readonly detailLoads = latest();
  private readonly diffLoads = latest();
  private pendingSelect: CheckpointKey | null = null;

  constructor(threadId: string, deps: Partial<ThreadDeps> = {}) {
    this.threadId = threadId;
    this.deps = { ...appDeps(), ...deps };
    this.replay = new Replay(
      this,
      () => this.loadReplay(),
      (f) => this.deps.toast("error", f.message),
    );
  }

  /**
   * Loads the DAG and from then on the detail (on a new selection or the reveal toggle) and
   * the diff (on a new selection or comparison). Returns the cleanup (it also stops Play).
   */
  start(select?: CheckpointKey): () => void {
    const stop = $effect.root(() => {
      $effect(() => {
        void this.selectedKey;
        void this.reveal;
        void this.rawDelta;
        void this.stepRecord;
        this.loadDetail();
      });
      $effect(() => {
        void this.selectedKey;
        void this.compareKey;
        this.loadDiff();
      });
    });
    this.loadGraph(select);
    return () => {
      stop();
      this.replay.stop();
    };
  }

  private indexOf(k: CheckpointKey | null): number {
    return k ? this.rows.findIndex((r) => r.id === k.id && r.ns === k.ns) : -1;
  }

  private keyOf(i: number): CheckpointKey {
    return { ns: this.rows[i].ns, id: this.rows[i].id };
  }

  /** (Re)loads the DAG; `select` is selected once it lands. */
  async loadGraph(select?: CheckpointKey) {
    const db = this.deps.db();
    if (!db) return;
    if (select) this.pendingSelect = select;
    await this.graphLoads(
      this.deps.api.graph({ db, thread_id: this.threadId, collapsed: this.collapsed }),
      (g) => {
        this.graph = g;
        this.graphError = null;
        if (this.pendingSelect) this.selectedKey = this.pendingSelect;
        this.pendingSelect = null;
        // A thread waiting inside a sub-agent opens on its head, the root checkpoint it resumes from.
        if (this.indexOf(this.selectedKey) < 0 && g.rows.length) this.selectedKey = this.keyOf(openingRow(g.rows));
        if (this.compareKey && this.indexOf(this.compareKey) < 0) this.compareKey = null;
      },
      (e) => {
        this.graphError = toFailure(e);
        if (this.graphError.code === "not_open") this.deps.notOpen();
      },
    );
  }

  /** Load the selected checkpoint again with every value decoded, however large (asked for:
   * the state view offers it for values shown as "too large"). Later loads are budgeted. */
  async openFull() {
    this.full = true;
    try {
      await this.loadDetail();
    } finally {
      this.full = false;
    }
  }

  /** Rebuild a DeltaChannel with another reducer (remembered for the database), then reload. */
  async chooseReducer(channel: string, reducer: string | null) {
    const saved = this.deps.saveReducer(channel, reducer).then(() => true);
    if (await saved.catch((e) => (this.deps.toast("error", toFailure(e).message), false))) await this.loadDetail();
  }

  async loadDetail() {
    const db = this.deps.db();
    if (!db || !this.selectedKey) return;
    const key = this.selectedKey;
    await this.detailLoads(
      this.deps.api.detail({
        db,
        thread_id: this.threadId,
        checkpoint_ns: key.ns,
        checkpoint_id: key.id,
        reveal_secrets: this.reveal,
        full: this.full,
        raw: this.rawDelta,
        reducers: {},
        allow_locked: true, // shown locked, beside the Unlock banner
        live: !this.stepRecord, // the latest of its namespace live, as get_state shows it now
        page: PAGE_SIZE, // a long list as its first page, the rest paged (PagedList)
      }),
      (d) => {
        this.detail = d;
        this.detailError = null;
      },
      (e) => {
        this.detailError = toFailure(e);
        this.detail = null;
      },
    );
  }

  async loadDiff() {
    this.diff = null;
    this.diffError = null;
    const db = this.deps.db();
    if (!db || !this.compareKey || !this.selectedKey) {
      // Nothing to compare now: supersede a diff still in flight so it does not reappear.
      await this.diffLoads(Promise.resolve(null), () => {}, () => {});
      return;
    }
    await this.diffLoads(
      this.deps.api.diff({
        db,
        thread_id: this.threadId,
        a: { checkpoint_ns: this.compareKey.ns, checkpoint_id: this.compareKey.id },
        b: { checkpoint_ns: this.selectedKey.ns, checkpoint_id: this.selectedKey.id },
      }),
      (d) => (this.diff = d),
      (e) => (this.diffError = toFailure(e)),
    );
  }

  /** The replay steps of the selected branch (null: no branch or no database). */
  async loadReplay(): Promise<ReplayStep[] | null> {
    const db = this.deps.db();
    if (!db || this.branch.length === 0) return null;
    const tip = this.rows[this.branch[this.branch.length - 1]];
    return this.deps.api.replay({ db, thread_id: this.threadId, checkpoint_ns: tip.ns, tip: tip.id });
  }

  /** Selects row `i`, or (while picking, or with shift) compares with it. */
  select(i: number, shift = false) {
    if (i < 0 || i >= this.rows.length) return;
    const key = this.keyOf(i);
    // The same row again (a click on it, a key held at the end of a branch) loads nothing.
    if (this.pickingCompare || shift) {
      if (!same(this.compareKey, key)) this.compareKey = key;
      this.pickingCompare = false;
      return;
    }
    if (!same(this.selectedKey, key)) this.selectedKey = key;
  }

  /** The person selects row `i` (a click on a row, shift-click to compare; the scrubber):
   * Play pauses first. */
  pick(i: number, shift = false) {
    this.replay.interrupt();
    this.select(i, shift);
  }

  /** Moves the selection through the graph (see graph/stepping.ts): the person's keys, so Play
   * pauses. */
  step(step: Step) {
    this.pick(move(this.rows, this.kids, this.selected, step));
  }

  /** Compares with the selected checkpoint's parent, if it has one. */
  compareWithParent() {
    const parent = this.current?.parent_row;
    if (parent !== null && parent !== undefined) this.compareKey = this.keyOf(parent);
  }

  togglePicking() {
    this.pickingCompare = !this.pickingCompare;
  }

  /** Stops comparing (and picking). */
  cancelCompare() {
    this.compareKey = null;
    this.pickingCompare = false;
  }

  /** The compared checkpoint becomes the selected one and the other way round. */
  swap() {
    const a = this.compareKey;
    this.compareKey = this.selectedKey;
    this.selectedKey = a;
  }

  /** Folds a subgraph namespace away in the DAG, or back in. */
  toggleNs(ns: string) {
    this.collapsed = this.collapsed.includes(ns) ? this.collapsed.filter((c) => c !== ns) : [...this.collapsed, ns];
    this.loadGraph();
  }

  /** Unfolds a subgraph namespace and selects its latest checkpoint. */
  openNs(ns: string) {
    if (this.collapsed.includes(ns)) this.collapsed = this.collapsed.filter((c) => c !== ns);
    return this.loadGraph().then(() => {
      const head = this.rows.findIndex((r) => r.ns === ns && r.ns_head);
      if (head >= 0) this.select(head);
    });
  }

  /** Copy fork of the selected checkpoint. */
  async forkHere() {
    const at = this.current;
    const db = this.deps.db();
    if (!db || !at) return;
    const ok = await this.forking.run(async () => {
      const f = await this.deps.api.fork({ db, thread_id: this.threadId, checkpoint_ns: at.ns, checkpoint_id: at.id, edits: [] });
      await this.forked(f, "Forked");
    });
    if (!ok && this.forking.error) this.deps.toast("error", `${errorTitle(this.forking.error.code)} ${this.forking.error.message}`);
  }

  /** A fork (or an edit or merge) wrote `f`: show it, selected, and say how to resume it. */
  async forked(f: ForkResult, verb: string) {
    this.fresh = new Set([f.checkpoint_id]);
    await this.loadGraph({ ns: f.checkpoint_ns, id: f.checkpoint_id });
    this.deps.toast("ok", forkedText(verb, f, this.threadId, this.deps.dialect()), 9000);
  }

  /** A re-run wrote checkpoints: highlight them and reload the DAG. */
  rerunCheckpoints(ids: string[]) {
    this.fresh = new Set([...this.fresh, ...ids]);
    this.loadGraph();
  }
}
