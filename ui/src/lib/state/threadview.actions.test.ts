import { afterEach, describe, expect, it } from "vitest";
import type { ForkResult, ThreadGraph } from "../ipc/bindings";
import { row } from "../graph/testrows";
import { ThreadView } from "./threadview.svelte";
import { chain, deferred, fakeBackend, key, openThread, settle, started, stopAll, stopLast } from "./testthread";

afterEach(stopAll);

describe("ThreadView: graph reloads and actions", () => {
  it("goes back to the open screen when the backend no longer has the database", async () => {
    const { view, notOpen } = await openThread({
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
    const { view, calls, toasts } = await openThread({
      graph: async () => (++graphs === 1 ? chain() : chain([row("f1", 1, { parent_row: 2, head: true })])),
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
    const { view, toasts } = await openThread({
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
    const { view } = await openThread({
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
    const withFork = chain([row("f1", 1, { parent_row: 2, head: true })]);
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
    const { view, calls } = await openThread({
      graph: async () => (++graphs === 1 ? chain([row("x", 1, { parent_row: 1, head: true })]) : chain()),
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
    const { view, calls } = await openThread();
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
    const { view, calls } = await openThread();
    view.fresh = new Set(["a"]);
    view.rerunCheckpoints(["b", "c"]);
    await settle();
    expect([...view.fresh]).toEqual(["a", "b", "c"]);
    expect(calls.graph).toHaveLength(2);
  });

  it("asks for the replay of the selected branch up to its tip and plays it from the root", async () => {
    const { view, calls } = await openThread();
    await view.replay.toggle();
    expect(calls.replay).toEqual([{ db: "db1", thread_id: "t", checkpoint_ns: "", tip: "c3" }]);
    expect(view.replay.playing).toBe(true);
    expect(view.current?.id).toBe("c0");
  });

  it("pauses Play when the person picks a row or steps", async () => {
    const { view } = await openThread();
    await view.replay.toggle();
    expect(view.replay.playing).toBe(true);
    view.pick(1); // rows are newest first: c3, c2, …
    expect(view.replay.playing).toBe(false);
    expect(view.current?.id).toBe("c2");
    await view.replay.toggle();
    expect(view.replay.playing).toBe(true);
    view.step("older");
    expect(view.replay.playing).toBe(false);
  });

  it("stops loading and playing once stopped", async () => {
    const { view, calls } = await openThread();
    await view.replay.toggle();
    stopLast();
    expect(view.replay.playing).toBe(false);
    view.step("tip");
    await settle();
    expect(calls.detail.map((r) => r.checkpoint_id)).toEqual(["c3", "c0"]);
  });

  it("loads nothing without an open database", async () => {
    const { api, calls } = fakeBackend();
    const view = new ThreadView("t", { api, db: () => null, notOpen: () => {}, toast: () => {} });
    started(view.start());
    await settle();
    await view.replay.toggle();
    await view.forkHere();
    expect(calls).toEqual({ graph: [], detail: [], diff: [], replay: [], fork: [] });
  });
});
