// Test helpers for ThreadView: a small thread, a fake backend that records requests, and a way to
// start a view on it.
import { tick } from "svelte";
import { PAGE_SIZE } from "./paging";
import type {
  CheckpointDetail,
  CheckpointDiff,
  CheckpointRequest,
  DiffRequest,
  ForkRequest,
  GraphRequest,
  GraphRow,
  ReplayRequest,
  ReplayStep,
  ThreadGraph,
} from "../ipc/bindings";
import { row } from "../graph/testrows";
import { ThreadView, type ThreadApi } from "./threadview.svelte";

// A thread of four checkpoints c0 → c1 → c2 → c3 (rows newest first), with a subgraph
// checkpoint s0 spawned by c1.
export const chain = (extra: GraphRow[] = []): ThreadGraph => {
  const rows = [
    ...extra,
    row("c3", 0, { parent_row: extra.length + 1, head: true, ns_head: true }),
    row("c2", 0, { parent_row: extra.length + 3 }),
    row("s0", 1, { ns: "sub:1", parent_row: extra.length + 3, ns_head: true }),
    row("c1", 0, { parent_row: extra.length + 4 }),
    row("c0", 0, {}),
  ];
  return { thread_id: "t", width: 2, head: rows[0].id, rows, namespaces: [], warnings: [], unreadable: [], tokens: null, models: [] };
};

export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export const detailOf = (req: CheckpointRequest) =>
  ({ checkpoint_id: req.checkpoint_id, checkpoint_ns: req.checkpoint_ns, config: {}, live: false }) as unknown as CheckpointDetail;
export const diffOf = (req: DiffRequest) => ({ a_id: req.a.checkpoint_id, b_id: req.b.checkpoint_id }) as unknown as CheckpointDiff;

/** A backend that answers at once and records each request as it would travel (JSON). */
export function fakeBackend(overrides: Partial<ThreadApi> = {}) {
  const calls = {
    graph: [] as GraphRequest[],
    detail: [] as CheckpointRequest[],
    diff: [] as DiffRequest[],
    replay: [] as ReplayRequest[],
    fork: [] as ForkRequest[],
  };
  const json = <T>(v: T): T => JSON.parse(JSON.stringify(v));
  const api: ThreadApi = {
    graph: (req) => (calls.graph.push(json(req)), overrides.graph ? overrides.graph(req) : Promise.resolve(chain())),
    detail: (req) => (calls.detail.push(json(req)), overrides.detail ? overrides.detail(req) : Promise.resolve(detailOf(req))),
    diff: (req) => (calls.diff.push(json(req)), overrides.diff ? overrides.diff(req) : Promise.resolve(diffOf(req))),
    replay: (req) => (calls.replay.push(json(req)), overrides.replay ? overrides.replay(req) : Promise.resolve([] as ReplayStep[])),
    fork: (req) => (calls.fork.push(json(req)), overrides.fork ? overrides.fork(req) : Promise.reject(new Error("no fork"))),
  };
  return { api, calls };
}

/** Let effects run and answered loads apply. */
export async function settle() {
  for (let i = 0; i < 10; i++) await tick();
}

const stops: (() => void)[] = [];

/** Stops every view started by openThread (call it in afterEach). */
export function stopAll() {
  while (stops.length) stops.pop()!();
}

/** Stops the view opened last (as leaving the screen does). */
export function stopLast() {
  stops.pop()?.();
}

/** Registers the cleanup of a view the test started itself. */
export function started(stop: () => void) {
  stops.push(stop);
}

/** A ThreadView of thread "t" in database "db1" on a fake backend, started and settled. */
export async function openThread(overrides: Partial<ThreadApi> = {}) {
  const backend = fakeBackend(overrides);
  const toasts: [string, string, number | undefined][] = [];
  const reducers: [string, string | null][] = [];
  let notOpen = 0;
  const view = new ThreadView("t", {
    api: backend.api,
    db: () => "db1",
    notOpen: () => notOpen++,
    toast: (kind, text, ms) => toasts.push([kind, text, ms]),
    saveReducer: async (channel, reducer) => {
      if (channel === "refused") throw new Error("setting refused");
      reducers.push([channel, reducer]);
    },
  });
  stops.push(view.start());
  await settle();
  return { view, calls: backend.calls, toasts, reducers, notOpen: () => notOpen };
}

/** A checkpoint key. */
export const key = (id: string, ns = "") => ({ ns, id });
/** The detail request of a checkpoint, as sent. */
export const detailReq = (id: string, reveal = false, ns = "", full = false, raw = false, live = true) => ({
  db: "db1",
  thread_id: "t",
  checkpoint_ns: ns,
  checkpoint_id: id,
  reveal_secrets: reveal,
  full,
  raw,
  reducers: {},
  allow_locked: true,
  live,
  page: PAGE_SIZE,
});
