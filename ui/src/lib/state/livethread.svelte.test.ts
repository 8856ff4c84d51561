// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { describe, expect, it } from "vitest";
import type { CheckpointDetail, ServerThread, ThreadGraph, ThreadSummary } from "../ipc/bindings";
import { row } from "../graph/testrows";
import { chain } from "./testthread";
import { LiveThread, type LiveView } from "./livethread.svelte";
import { POLL_PAGE, type PollEnv } from "./live";

const server = (status: string, runs: string[] = []): ServerThread => ({
  thread_id: "t",
  status,
  metadata: {},
  has_checkpoints: true,
  runs: runs.map((s, i) => ({ run_id: `r${i}`, status: s })),
});

const summary = (id: string, s: ServerThread | null): ThreadSummary =>
  ({ thread_id: id, namespaces: [""], checkpoint_count: 1, next: [], interrupts: [], server: s }) as unknown as ThreadSummary;

/** A thread view whose DAG answers come from a queue. */
function fakeView(graphs: ThreadGraph[]) {
  const calls = { graph: 0, detail: 0 };
  const view: LiveView & { selected: string } = {
    graph: graphs[0],
    detail: { live: true } as CheckpointDetail,
    selected: "c3",
    get current() {
      return this.graph?.rows.find((r) => r.id === this.selected) ?? null;
    },
    loadGraph: async () => {
      calls.graph++;
      view.graph = graphs[Math.min(calls.graph, graphs.length - 1)];
    },
    loadDetail: async () => {
      calls.detail++;
    },
  };
  return { view, calls };
}

const noTimers: PollEnv = { setTimer: () => 0, clearTimer: () => {}, hidden: () => false, onVisibility: () => () => {} };

function deps(lists: ThreadSummary[][], kind: "agentserver" | "devserver" | "sqlite" = "agentserver") {
  const asked: (number | null)[] = [];
  return {
    asked,
    deps: {
      db: () => ({ db: "h", kind, server: null }),
      list: async (_db: string, limit: number | null) => {
        asked.push(limit);
        return lists.shift() ?? [];
      },
      env: noTimers,
    },
  };
}

describe("LiveThread", () => {
  it("finds the thread in the latest page, else in the whole list", async () => {
    const d = deps([[summary("other", server("idle"))], [summary("t", server("busy"))]]);
    const live = new LiveThread("t", fakeView([chain()]).view, d.deps);
    expect(await live.loadServer()).toBe(true);
    expect(d.asked).toEqual([POLL_PAGE, null]);
    expect(live.server?.status).toBe("busy");
    expect(live.busy).toBe(true);
  });

  it("a poll with a new checkpoint reloads the DAG and the latest checkpoint's detail", async () => {
    const grown = chain([row("c4", 0, { parent_row: 1, head: true, ns_head: true })]);
    const { view, calls } = fakeView([chain(), grown]);
    const d = deps([[summary("t", server("busy"))], [summary("t", server("busy"))]]);
    const live = new LiveThread("t", view, d.deps);
    await live.loadServer(null);
    const r = await live.tick();
    expect(r).toEqual({ changed: true, busy: true });
    expect(calls).toEqual({ graph: 1, detail: 1 });
  });

  it("a quiet poll changes nothing and leaves a history checkpoint's detail alone", async () => {
    const { view, calls } = fakeView([chain(), chain(), chain([row("c4", 0, { parent_row: 1, head: true, ns_head: true })])]);
    view.selected = "c2"; // a history checkpoint
    view.detail = { live: false } as CheckpointDetail;
    const d = deps([[summary("t", server("idle"))], [summary("t", server("idle"))], [summary("t", server("idle"))]]);
    const live = new LiveThread("t", view, d.deps);
    await live.loadServer(null);
    expect(await live.tick()).toEqual({ changed: false, busy: false });
    expect(await live.tick()).toEqual({ changed: true, busy: false });
    expect(calls.detail).toBe(0);
  });

  it("a run that ends is a change", async () => {
    const { view } = fakeView([chain()]);
    const d = deps([[summary("t", server("busy", ["running"]))], [summary("t", server("idle", ["success"]))]]);
    const live = new LiveThread("t", view, d.deps);
    await live.loadServer(null);
    expect(await live.tick()).toEqual({ changed: true, busy: false });
  });

  it("polls only a live session; loads the server part of a dev folder once", async () => {
    const d = deps([[summary("t", server("idle"))]], "devserver");
    const live = new LiveThread("t", fakeView([chain()]).view, d.deps);
    const stop = live.start();
    await new Promise((r) => setTimeout(r, 0));
    expect(d.asked).toEqual([POLL_PAGE]);
    expect(live.server?.status).toBe("idle");
    stop();
    const none = deps([], "sqlite");
    new LiveThread("t", fakeView([chain()]).view, none.deps).start()();
    expect(none.asked).toEqual([]);
  });
});
