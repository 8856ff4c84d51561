import { afterEach, describe, expect, it } from "vitest";
import type { CheckpointDetail, CheckpointDiff } from "../ipc/bindings";
import { row } from "../graph/testrows";
import { chain, deferred, detailOf, detailReq, diffOf, key, openThread, settle, stopAll } from "./testthread";

afterEach(stopAll);

describe("ThreadView: selection, detail and diff", () => {
  it("loads the graph, selects the head and loads its detail", async () => {
    const { view, calls } = await openThread();
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
    const { view, calls } = await openThread();
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

  it("opens a checkpoint in full once, on purpose; stepping on is budgeted again", async () => {
    const { view, calls } = await openThread();
    await view.openFull();
    view.step("older");
    await settle();
    expect(calls.detail).toEqual([detailReq("c3"), detailReq("c3", false, "", true), detailReq("c2")]);
  });

  it("never lets a stale detail answer replace a newer one", async () => {
    const pending = new Map<string, ReturnType<typeof deferred<CheckpointDetail>>>();
    const { view } = await openThread({
      detail: (req) => {
        const d = deferred<CheckpointDetail>();
        pending.set(req.checkpoint_id ?? "", d);
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

  it("opens a thread waiting inside a sub-agent on its head, not the newer sub-agent checkpoint", async () => {
    const { view, calls } = await openThread({
      graph: async () => chain([row("s9", 1, { ns: "tools:9", ns_head: true, parent_row: 4 })]),
    });
    expect(view.rows[0].id).toBe("s9");
    expect(view.selectedKey).toEqual(key("c3"));
    expect(calls.detail).toEqual([detailReq("c3")]);
  });

  it("asks the latest checkpoint live, or as its step record when asked", async () => {
    const { view, calls } = await openThread();
    view.stepRecord = true;
    await settle();
    view.stepRecord = false;
    await settle();
    expect(calls.detail).toEqual([detailReq("c3"), detailReq("c3", false, "", false, false, false), detailReq("c3")]);
  });

  it("reloads the detail with secrets shown when reveal is on", async () => {
    const { view, calls } = await openThread();
    view.reveal = true;
    await settle();
    expect(calls.detail).toEqual([detailReq("c3"), detailReq("c3", true)]);
  });

  it("reloads the detail in the stored view of DeltaChannels when asked, and back", async () => {
    const { view, calls } = await openThread();
    view.delta.setRaw(true);
    await settle();
    expect(view.delta.raw).toBe(true);
    view.delta.setRaw(false);
    await settle();
    expect(calls.detail).toEqual([detailReq("c3"), detailReq("c3", false, "", false, true), detailReq("c3")]);
  });

  it("remembers a chosen reducer, then reloads the detail; a refusal is a toast", async () => {
    const { view, calls, reducers, toasts } = await openThread();
    view.delta.choose("log", "last");
    await settle();
    expect(reducers).toEqual([["log", "last"]]);
    expect(calls.detail.length).toBe(2);
    view.delta.choose("refused", null);
    await settle();
    expect(calls.detail.length).toBe(2);
    expect(toasts.map((t) => t[1])).toContain("setting refused");
  });

  it("shows a failed detail's error instead of the detail", async () => {
    const { view } = await openThread({
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
    const { view, calls } = await openThread();
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
    const { view } = await openThread({ diff: () => d.promise });
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
    const { view } = await openThread();
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
    const { view } = await openThread();
    view.step("root");
    view.compareWithParent();
    expect(view.compareKey).toBeNull();
  });
});
