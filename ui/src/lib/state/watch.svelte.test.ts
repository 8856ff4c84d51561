// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { describe, expect, it } from "vitest";
import type { WatchReport, WatchRequest } from "../ipc/bindings";
import { Failure } from "../ipc/api";
import { Watch, type WatchHost } from "./watch.svelte";
import { change } from "./testwatch";
import { branchColor } from "../graph/lanes";

class Host implements WatchHost {
  readonly threadId = "t1";
  selected = $state<string | null>(null);
  selects: string[] = [];
  db = () => "db1";
  selectedId = () => this.selected;
  along?: (ns: string) => string | null;
  select(key: { ns: string; id: string }) {
    this.selects.push(`${key.ns}/${key.id}`);
    this.selected = key.id;
  }
}

const report = (ids: string[], ns = ""): WatchReport => ({
  thread_id: "t1",
  checkpoint_ns: ns,
  path: "plan.steps",
  channel: "plan",
  checkpoints_read: 9,
  unreadable: 0,
  head: ids[ids.length - 1] ?? null,
  changes: ids.map((id) => change(id, { on_head_branch: id !== "b" })),
});

describe("Watch", () => {
  it("loads the changes of a path and jumps between them", async () => {
    const host = new Host();
    const asked: WatchRequest[] = [];
    const w = new Watch(host, async (req) => (asked.push(req), report(["a", "b", "c"], "sub:1")));
    await w.start("plan.steps", "sub:1");
    expect(asked).toEqual([{ db: "db1", thread_id: "t1", checkpoint_ns: "sub:1", path: "plan.steps", max_value_bytes: null, along: null }]);
    expect(w.changes.map((c) => c.checkpoint_id)).toEqual(["a", "b", "c"]);
    expect(w.cursor).toBe(-1);
    w.next();
    expect(host.selects).toEqual(["sub:1/a"]);
    expect(w.cursor).toBe(0);
    w.next();
    w.next();
    w.next();
    expect(host.selects).toEqual(["sub:1/a", "sub:1/b", "sub:1/c"]);
    w.prev();
    expect(host.selected).toBe("b");
    // Only the head's branch: b is not listed, prev/next skip it.
    w.headOnly = true;
    host.selected = "c";
    w.prev();
    expect(host.selected).toBe("a");
    // The selection moved elsewhere: prev/next go on from the change last jumped to.
    host.selected = "elsewhere";
    w.next();
    expect(host.selected).toBe("c");
  });

  it("asks for the changes along the selected branch, and groups them", async () => {
    const host = new Host();
    const tips: string[] = [];
    host.along = (ns: string) => (tips.push(ns), host.selected === "b" ? "b" : null);
    const asked: WatchRequest[] = [];
    const w = new Watch(host, async (req) => (asked.push(req), report(["a", "c", "b"])));
    host.selected = "b";
    await w.start("plan", "");
    expect(tips).toEqual([""]);
    expect(asked[0].along).toBe("b");
    expect(w.along).toBe("b");
    // No rows to read the line from: the head's branch is the line (b is off it).
    expect(w.groups.map((g) => [g.line, g.start, g.count])).toEqual([
      [true, 0, 2],
      [false, 2, 1],
    ]);
    // Looked for again from where the selection is now.
    host.selected = "a";
    await w.reload();
    expect(asked[1].along).toBeNull();
  });

  it("shows a failure, and a newer watch wins over a slower older one", async () => {
    const host = new Host();
    let release: (r: WatchReport) => void = () => {};
    const slow = new Promise<WatchReport>((r) => (release = r));
    const answers: Promise<WatchReport>[] = [slow, Promise.reject(new Failure("invalid_input", 'bad path "x["'))];
    const w = new Watch(host, () => answers.shift()!);
    const first = w.start("plan", "");
    await w.start("x[", "");
    expect(w.error?.code).toBe("invalid_input");
    expect(w.loading).toBe(false);
    release(report(["a"]));
    await first;
    expect(w.report).toBeNull();
    expect(w.path).toBe("x[");
    w.close();
    expect(w.path).toBeNull();
    expect(w.error).toBeNull();
  });

  it("colours a change's branch as the graph does, a key the graph lacks by its hash", () => {
    const host = Object.assign(new Host(), { colors: () => new Map([["trunk", 0], ["fork", 3]]), trunk: () => "trunk" });
    const w = new Watch(host, async () => report([]));
    expect(w.colorOf("fork")).toBe(3);
    expect(w.colorOf("trunk")).toBe(0);
    expect(w.colorOf("elsewhere")).toBe(branchColor("elsewhere", false));
  });
});
