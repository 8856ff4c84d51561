import { afterEach, describe, expect, it } from "vitest";
import { tick } from "svelte";
import type {
  CheckpointDetail,
  CheckpointDiff,
  CheckpointRequest,
  DiffRequest,
  ForkRequest,
  ForkResult,
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
const chain = (extra: GraphRow[] = []): ThreadGraph => {
  const rows = [
    ...extra,
    row("c3", 0, [], { parent_row: extra.length + 1, head: true, ns_head: true }),
    row("c2", 0, [], { parent_row: extra.length + 3 }),
    row("s0", 1, [], { ns: "sub:1", parent_row: extra.length + 3, ns_head: true }),
    row("c1", 0, [], { parent_row: extra.length + 4 }),
    row("c0", 0, [], {}),
  ];
  return { thread_id: "t", width: 2, head: rows[0].id, rows, namespaces: [], warnings: [] };
};

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const detailOf = (req: CheckpointRequest) =>
  ({ checkpoint_id: req.checkpoint_id, checkpoint_ns: req.checkpoint_ns, config: {}, live: false }) as unknown as CheckpointDetail;
const diffOf = (req: DiffRequest) => ({ a_id: req.a.checkpoint_id, b_id: req.b.checkpoint_id }) as unknown as CheckpointDiff;

/** A backend that answers at once and records each request as it would travel (JSON). */
function fakeBackend(overrides: Partial<ThreadApi> = {}) {
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
async function settle() {
  for (let i = 0; i < 10; i++) await tick();
}

const stops: (() => void)[] = [];
afterEach(() => {
  while (stops.length) stops.pop()!();
});

async function open(overrides: Partial<ThreadApi> = {}) {
  const backend = fakeBackend(overrides);
  const toasts: [string, string, number | undefined][] = [];
  let notOpen = 0;
  const view = new ThreadView("t", {
    api: backend.api,
    db: () => "db1",
    notOpen: () => notOpen++,
    toast: (kind, text, ms) => toasts.push([kind, text, ms]),
  });
  stops.push(view.start());
  await settle();
  return { view, calls: backend.calls, toasts, notOpen: () => notOpen };
}

const key = (id: string, ns = "") => ({ ns, id });
const detailReq = (id: string, reveal = false, ns = "") => ({
  db: "db1",
  thread_id: "t",
  checkpoint_ns: ns,
  checkpoint_id: id,
  reveal_secrets: reveal,
});

describe("ThreadView", () => {
  it("loads the graph, selects the head and loads its detail", async () => {
    const { view, calls } = await open();
    expect(calls.graph).toEqual([{ db: "db1", thread_id: "t", collapsed: [] }]);
    expect(view.selectedKey).toEqual(key("c3"));
    expect(view.selected).toBe(0);
    expect(view.current?.id).toBe("c3");
    expect(view.branch.map((i) => view.rows[i].id)).toEqual(["c0", "c1", "c2", "c3"]);
    expect(view.position).toBe(3);
    expect(calls.detail).toEqual([detailReq("c3")]);
    expect(view.detail?.checkpoint_id).toBe("c3");
    expect(calls.diff).toEqual([]);
  });

  it("steps along the branch, loading each detail once; the same row again loads nothing", async () => {
    const { view, calls } = await open();
    view.step("older");
    await settle();
    expect(view.current?.id).toBe("c2");
    expect(view.position).toBe(2);
    expect(view.detail?.checkpoint_id).toBe("c2");
    view.select(view.selected);
    await settle();
    view.step("newer");
    await settle();
    view.step("newer"); // at the tip already
    await settle();
    expect(calls.detail.map((r) => r.checkpoint_id)).toEqual(["c3", "c2", "c3"]);
    view.step("root");
    await settle();
    expect(view.current?.id).toBe("c0");
    view.select(99); // off the graph: ignored
    expect(view.current?.id).toBe("c0");
  });

  it("never lets a stale detail answer replace a newer one", async () => {
    const pending = new Map<string, ReturnType<typeof deferred<CheckpointDetail>>>();
    const { view } = await open({
      detail: (req) => {
        const d = deferred<CheckpointDetail>();
        pending.set(req.checkpoint_id, d);
        return d.promise;
      },
    });
    view.step("older"); // c2
    await settle();
    view.step("older"); // c1
    await settle();
    pending.get("c1")!.resolve(detailOf(detailReq("c1")));
    await settle();
    pending.get("c2")!.resolve(detailOf(detailReq("c2")));
    await settle();
    expect(view.detail?.checkpoint_id).toBe("c1");
  });

  it("reloads the detail with secrets shown when reveal is on", async () => {
    const { view, calls } = await open();
    view.reveal = true;
    await settle();
    expect(calls.detail).toEqual([detailReq("c3"), detailReq("c3", true)]);
  });

  it("shows a failed detail's error instead of the detail", async () => {
    const { view } = await open({
      detail: async (req) => {
        if (req.checkpoint_id === "c2") throw { code: "decode", message: "bad msgpack" };
        return detailOf(req);
      },
    });
    expect(view.detail).not.toBeNull();
    view.step("older");
    await settle();
    expect(view.detail).toBeNull();
    expect(view.detailError?.message).toBe("bad msgpack");
    view.step("newer");
    await settle();
    expect(view.detailError).toBeNull();
    expect(view.detail?.checkpoint_id).toBe("c3");
  });

  it("compares a shift-clicked checkpoint (a) with the selected one (b)", async () => {
    const { view, calls } = await open();
    view.select(4, true); // c0
    await settle();
    expect(view.selectedKey).toEqual(key("c3"));
    expect(view.compareKey).toEqual(key("c0"));
    expect(view.compare).toBe(4);
    expect(calls.diff).toEqual([
      { db: "db1", thread_id: "t", a: { checkpoint_ns: "", checkpoint_id: "c0" }, b: { checkpoint_ns: "", checkpoint_id: "c3" } },
    ]);
    expect(view.diff).toMatchObject({ a_id: "c0", b_id: "c3" });
    view.swap();
    await settle();
    expect(view.selectedKey).toEqual(key("c0"));
    expect(view.compareKey).toEqual(key("c3"));
    expect(view.diff).toMatchObject({ a_id: "c3", b_id: "c0" });
  });

  it("drops a diff still in flight when the comparison is cancelled", async () => {
    const d = deferred<CheckpointDiff>();
    const { view } = await open({ diff: () => d.promise });
    view.compareWithParent();
    await settle();
    expect(view.compareKey).toEqual(key("c2"));
    expect(view.diff).toBeNull();
    view.pickingCompare = true;
    view.cancelCompare();
    expect(view.pickingCompare).toBe(false);
    await settle();
    d.resolve(diffOf({ db: "db1", thread_id: "t", a: { checkpoint_id: "c2" }, b: { checkpoint_id: "c3" } }));
    await settle();
    expect(view.compareKey).toBeNull();
    expect(view.diff).toBeNull();
  });

  it("while picking, the next selection is the one compared with, then picking ends", async () => {
    const { view } = await open();
    view.togglePicking();
    expect(view.pickingCompare).toBe(true);
    view.select(1);
    expect(view.compareKey).toEqual(key("c2"));
    expect(view.selectedKey).toEqual(key("c3"));
    expect(view.pickingCompare).toBe(false);
    view.select(3);
    expect(view.selectedKey).toEqual(key("c1"));
  });

  it("a checkpoint without a parent has nothing to compare with", async () => {
    const { view } = await open();
    view.step("root");
    view.compareWithParent();
    expect(view.compareKey).toBeNull();
  });

  it("goes back to the open screen when the backend no longer has the database", async () => {
    const { view, notOpen } = await open({
      graph: async () => {
        throw { code: "not_open", message: "no such database" };
      },
    });
    expect(view.graphError?.code).toBe("not_open");
    expect(view.graph).toBeNull();
    expect(notOpen()).toBe(1);
  });

  it("after a fork, highlights and selects the new head and says how to resume it", async () => {
    let graphs = 0;
    const { view, calls, toasts } = await open({
      graph: async () => (++graphs === 1 ? chain() : chain([row("f1", 1, [], { parent_row: 2, head: true })])),
      fork: async (req) =>
        ({ thread_id: "t", checkpoint_ns: req.checkpoint_ns, checkpoint_id: "f1", parent_checkpoint_id: req.checkpoint_id, step: 7 }) as ForkResult,
    });
    view.step("older");
    await settle();
    await view.forkHere();
    await settle();
    expect(calls.fork).toEqual([{ db: "db1", thread_id: "t", checkpoint_ns: "", checkpoint_id: "c2", edits: [] }]);
    expect(view.selectedKey).toEqual(key("f1"));
    expect([...view.fresh]).toEqual(["f1"]);
    expect(view.detail?.checkpoint_id).toBe("f1");
    expect(toasts).toHaveLength(1);
    expect(toasts[0][0]).toBe("ok");
    expect(toasts[0][1]).toContain("Forked: new checkpoint f1 (step 7) is the head.");
    expect(toasts[0][1]).toContain('{"configurable": {"thread_id": "t"}}');
    expect(toasts[0][2]).toBe(9000);
    expect(view.forking.busy).toBe(false);
  });

  it("reports a failed fork as an error toast", async () => {
    const { view, toasts } = await open({
      fork: async () => {
        throw { code: "not_found", message: "gone" };
      },
    });
    await view.forkHere();
    expect(toasts).toHaveLength(1);
    expect(toasts[0][0]).toBe("error");
    expect(toasts[0][1]).toMatch(/gone$/);
    expect(view.forking.error?.code).toBe("not_found");
  });

  it("carries a selection asked for by a superseded graph reload over to the one that lands", async () => {
    const answers: ReturnType<typeof deferred<ThreadGraph>>[] = [];
    let first = true;
    const { view } = await open({
      graph: () => {
        if (first) {
          first = false;
          return Promise.resolve(chain());
        }
        const d = deferred<ThreadGraph>();
        answers.push(d);
        return d.promise;
      },
    });
    const withFork = chain([row("f1", 1, [], { parent_row: 2, head: true })]);
    const forkLoad = view.loadGraph(key("f1")); // a fork's reload …
    const tailLoad = view.loadGraph(); // … overtaken by a re-run's
    answers[1].resolve(withFork);
    answers[0].resolve(chain());
    await Promise.all([forkLoad, tailLoad]);
    expect(view.graph).toBe(withFork);
    expect(view.selectedKey).toEqual(key("f1"));
  });

  it("keeps the selection across a reload and drops a comparison whose checkpoint is gone", async () => {
    let graphs = 0;
    const { view, calls } = await open({
      graph: async () => (++graphs === 1 ? chain([row("x", 1, [], { parent_row: 1 })]) : chain()),
    });
    view.step("older"); // x → c3
    view.select(0, true); // compare with x
    expect(view.compareKey).toEqual(key("x"));
    await settle();
    const details = calls.detail.length;
    await view.loadGraph();
    await settle();
    expect(view.selectedKey).toEqual(key("c3"));
    expect(view.compareKey).toBeNull();
    expect(calls.detail.length).toBe(details);
  });

  it("folds a subgraph namespace away and back, and opens one at its latest checkpoint", async () => {
    const { view, calls } = await open();
    view.toggleNs("sub:1");
    await settle();
    expect(calls.graph.at(-1)).toEqual({ db: "db1", thread_id: "t", collapsed: ["sub:1"] });
    view.toggleNs("sub:1");
    await settle();
    expect(calls.graph.at(-1)?.collapsed).toEqual([]);
    view.collapsed = ["sub:1"];
    await view.openNs("sub:1");
    expect(view.collapsed).toEqual([]);
    expect(calls.graph.at(-1)?.collapsed).toEqual([]);
    expect(view.selectedKey).toEqual(key("s0", "sub:1"));
  });

  it("adds a re-run's checkpoints to the highlighted ones and reloads the graph", async () => {
    const { view, calls } = await open();
    view.fresh = new Set(["a"]);
    view.rerunCheckpoints(["b", "c"]);
    await settle();
    expect([...view.fresh]).toEqual(["a", "b", "c"]);
    expect(calls.graph).toHaveLength(2);
  });

  it("asks for the replay of the selected branch up to its tip and plays it from the root", async () => {
    const { view, calls } = await open();
    await view.replay.toggle();
    expect(calls.replay).toEqual([{ db: "db1", thread_id: "t", checkpoint_ns: "", tip: "c3" }]);
    expect(view.replay.playing).toBe(true);
    expect(view.current?.id).toBe("c0");
  });

  it("stops loading and playing once stopped", async () => {
    const { view, calls } = await open();
    await view.replay.toggle();
    stops.pop()!();
    expect(view.replay.playing).toBe(false);
    view.step("tip");
    await settle();
    expect(calls.detail.map((r) => r.checkpoint_id)).toEqual(["c3", "c0"]);
  });

  it("loads nothing without an open database", async () => {
    const { api, calls } = fakeBackend();
    const view = new ThreadView("t", { api, db: () => null, notOpen: () => {}, toast: () => {} });
    stops.push(view.start());
    await settle();
    await view.replay.toggle();
    await view.forkHere();
    expect(calls).toEqual({ graph: [], detail: [], diff: [], replay: [], fork: [] });
  });
});
