// The thread screen's live part: the thread as its server lists it (status, runs, metadata) and,
// for a session whose threads change under it (state/live.ts), the polls that bring in new
// checkpoints as runs land: the DAG reloads in place (the selection stays), the selected
// checkpoint's detail reloads when it may have changed (it was or is its namespace's latest).

import type { DbInfo, ServerThread, ThreadSummary } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call } from "../ipc/api";
import { app } from "./app.svelte";
import { hasServerPart } from "./agentserver";
import { graphSignature, isBusy, Poller, POLL_PAGE, pollsLive, type PollEnv, type TickResult } from "./live";
import type { ThreadView } from "./threadview.svelte";

/** What the live part runs on (the app's commands; fakes in tests). */
export interface LiveThreadDeps {
  list(db: string, limit: number | null): Promise<ThreadSummary[]>;
  db(): Pick<DbInfo, "db" | "kind" | "server"> | null;
  env?: PollEnv;
}

const appDeps: LiveThreadDeps = {
  list: (db, limit) => call(commands.listThreads({ db, limit })),
  db: () => app.db,
};

/** The part of the thread view a poll reloads. */
export type LiveView = Pick<ThreadView, "graph" | "detail" | "current" | "loadGraph" | "loadDetail">;

const serverKey = (s: ServerThread | null) =>
  s ? `${s.status ?? ""}|${s.updated_at ?? ""}|${s.runs.map((r) => `${r.run_id}:${r.status ?? ""}`).join(",")}` : "";

export class LiveThread {
  /** The thread as the server lists it (null: not a server's thread, or not listed). */
  server = $state.raw<ServerThread | null>(null);
  /** The server runs it now. */
  readonly busy = $derived(isBusy(this.server));

  private readonly deps: LiveThreadDeps;
  private poller: Poller | null = null;

  constructor(
    readonly threadId: string,
    private readonly view: LiveView,
    deps: Partial<LiveThreadDeps> = {},
  ) {
    this.deps = { ...appDeps, ...deps };
  }

  /** Loads the server's part (a server's session) and polls (a live one). Returns the stop. */
  start(): () => void {
    const info = this.deps.db();
    if (hasServerPart(info)) void this.loadServer().catch(() => {});
    if (pollsLive(info)) {
      this.poller = new Poller(() => this.tick(), this.deps.env);
      this.poller.start();
    }
    return () => this.stop();
  }

  stop() {
    this.poller?.stop();
    this.poller = null;
  }

  /** Something was written here (a fork, a re-run): poll fast again. */
  poke() {
    this.poller?.poke();
  }

  /** Looks the thread up in the server's most recently active threads (the open one is among
   * them while it runs), else in the whole list; true if its entry changed. */
  async loadServer(limit: number | null = POLL_PAGE): Promise<boolean> {
    const db = this.deps.db()?.db;
    if (!db) return false;
    let found = (await this.deps.list(db, limit)).find((t) => t.thread_id === this.threadId);
    if (!found && limit !== null) found = (await this.deps.list(db, null)).find((t) => t.thread_id === this.threadId);
    const next = found?.server ?? null;
    const changed = serverKey(next) !== serverKey(this.server);
    if (changed) this.server = next;
    return changed;
  }

  /** One poll: the server's part, then the DAG (and the detail when it may have changed). */
  async tick(): Promise<TickResult> {
    const before = graphSignature(this.view.graph);
    const wasLatest = this.view.detail?.live === true || this.view.current?.ns_head === true;
    const serverChanged = await this.loadServer().catch(() => false);
    await this.view.loadGraph();
    const graphChanged = graphSignature(this.view.graph) !== before;
    const isLatest = this.view.current?.ns_head === true;
    if ((graphChanged || serverChanged) && (wasLatest || isLatest)) await this.view.loadDetail();
    return { changed: serverChanged || graphChanged, busy: this.busy };
  }
}
