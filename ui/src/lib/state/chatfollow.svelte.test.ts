import { describe, expect, it } from "vitest";
import type { CheckpointDetail } from "../ipc/bindings";
import { ChatFollow } from "./chatfollow.svelte";

const msg = (id: string) => ({ $type: "langchain_core.messages.ai.AIMessage", id, content: id });

/** A detail with what the follow reads. */
function detail(id: string, parent: string | null, ids: string[], updated: string[] | null = ["messages"]): CheckpointDetail {
  return {
    checkpoint_ns: "",
    checkpoint_id: id,
    parent_checkpoint_id: parent,
    updated_channels: updated,
    values: { messages: ids.map(msg) },
  } as unknown as CheckpointDetail;
}

function loader(store: Record<string, string[]>) {
  const asked: string[] = [];
  const load = async (_ns: string, id: string) => {
    asked.push(id);
    if (!(id in store)) throw new Error("gone");
    return new Set(store[id]);
  };
  return { asked, load };
}

describe("ChatFollow", () => {
  it("stepping forward compares with the checkpoint shown before, reading nothing", async () => {
    const l = loader({});
    const f = new ChatFollow(l.load, 60_000);
    await f.arrived(detail("c1", null, ["h1"]));
    expect(f.added.size).toBe(0);
    await f.arrived(detail("c2", "c1", ["h1", "a1", "a2"]));
    expect([...f.added]).toEqual(["a1", "a2"]);
    expect(f.seq).toBe(1);
    expect(l.asked).toEqual([]);
    // The same checkpoint again (a poll): no new highlight.
    await f.arrived(detail("c2", "c1", ["h1", "a1", "a2"]));
    expect(f.seq).toBe(1);
    f.fade();
    expect(f.added.size).toBe(0);
  });

  it("stepping back reads the parent once, and nothing when the messages did not change", async () => {
    const l = loader({ c1: ["h1"] });
    const f = new ChatFollow(l.load, 60_000);
    // The screen opens on c3: nothing followed, nothing read.
    await f.arrived(detail("c3", "c2", ["h1", "a1", "t1"]));
    expect(f.added.size).toBe(0);
    await f.arrived(detail("c2", "c1", ["h1", "a1"]));
    expect([...f.added]).toEqual(["a1"]);
    expect(l.asked).toEqual(["c1"]);
    // A step that wrote no message list: no read, no highlight.
    await f.arrived(detail("c9", "c8", ["h1"], ["count"]));
    expect(f.added.size).toBe(0);
    expect(l.asked).toEqual(["c1"]);
  });

  it("drops an answer for a selection already left, and survives a failed read", async () => {
    let release = () => {};
    const slow = new Promise<void>((r) => (release = r));
    const f = new ChatFollow(async (_ns, id) => {
      if (id === "p") await slow;
      if (id === "x") throw new Error("gone");
      return new Set<string>();
    }, 60_000);
    await f.arrived(detail("open", null, []));
    const first = f.arrived(detail("a", "p", ["m1"]));
    await f.arrived(detail("b", "q", ["m2"]));
    expect([...f.added]).toEqual(["m2"]);
    release();
    await first;
    expect([...f.added]).toEqual(["m2"]);
    await f.arrived(detail("c", "x", ["m3"]));
    expect(f.added.size).toBe(0);
  });

  it("fades by itself", async () => {
    const f = new ChatFollow(async () => new Set<string>(), 5);
    await f.arrived(detail("open", null, []));
    await f.arrived(detail("a", "p", ["m1"]));
    expect(f.added.size).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(f.added.size).toBe(0);
  });
});
