import { describe, expect, it } from "vitest";
import type { StatePage, StatePageRequest } from "../ipc/bindings";
import { PagedList } from "./pagedlist.svelte";

const where = { db: "db1", thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1", channel: "messages", live: true, reveal_secrets: false };
const TOTAL = 250;
const HITS = [5, 130, 240];

function server() {
  const calls: StatePageRequest[] = [];
  const page = async (req: StatePageRequest): Promise<StatePage> => {
    calls.push(req);
    const offset = req.offset ?? 0;
    const limit = req.limit ?? 50;
    const items = Array.from({ length: Math.max(0, Math.min(TOTAL, offset + limit) - offset) }, (_, i) => `item ${offset + i}`);
    const hits = req.query ? HITS.map((index) => ({ index, path: `messages[${index}]`, snippet: `item ${index}` })) : [];
    return { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1", path: req.path, total: TOTAL, offset, items, value: null, folded: 0, hits, hit_count: hits.length };
  };
  return { calls, page };
}

describe("a paged list", () => {
  it("starts with the detail's first page and goes to others within the list", async () => {
    const s = server();
    const list = new PagedList(where, { items: ["item 0"], total: TOTAL, offset: 0 }, s.page, 100);
    expect(s.calls).toEqual([]);
    await list.go(100);
    expect(list.offset).toBe(100);
    expect(list.items[0]).toBe("item 100");
    await list.go(10_000); // past the end: the last page
    expect(list.offset).toBe(200);
    expect(list.items.length).toBe(50);
    expect(s.calls.map((c) => [c.path, c.offset, c.limit, c.query])).toEqual([
      ["messages", 100, 100, null],
      ["messages", 200, 100, null],
    ]);
  });

  it("searches the whole list on the server and steps from hit to hit, page by page", async () => {
    const s = server();
    const list = new PagedList(where, { items: [], total: TOTAL, offset: 0 }, s.page, 100);
    await list.search("ITEM");
    expect(list.hitCount).toBe(3);
    expect(list.current).toBe(5);
    expect(list.offset).toBe(0);
    await list.step(1);
    expect(list.current).toBe(130);
    expect(list.offset).toBe(100);
    await list.step(1);
    expect(list.offset).toBe(200);
    await list.step(1); // wraps to the first
    expect(list.current).toBe(5);
    expect(list.offset).toBe(0);
    await list.search("  ");
    expect([list.query, list.hitCount, list.current]).toEqual(["", 0, null]);
  });

  it("says a failed page in one line and keeps the page shown", async () => {
    const list = new PagedList(where, { items: ["item 0"], total: TOTAL, offset: 0 }, async () => {
      throw { code: "not_found", message: "nothing at messages in this checkpoint" };
    });
    await list.go(50);
    expect(list.error).toBe("nothing at messages in this checkpoint");
    expect(list.items).toEqual(["item 0"]);
    expect(list.loading).toBe(false);
  });
});

describe("a folded string in a paged list", () => {
  const path = "messages[101].content";
  const folded = { $folded: { chars: 40_000, path }, $type: "builtins.str", $value: "start" };

  it("is fetched whole by its own path and shown in place of the fold", async () => {
    const calls: StatePageRequest[] = [];
    const page = async (req: StatePageRequest): Promise<StatePage> => {
      calls.push(req);
      return { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1", path: req.path, total: null, offset: 0, items: [], value: "x".repeat(40_000), folded: 0, hits: [], hit_count: 0 };
    };
    const list = new PagedList(where, { items: [{ content: "a" }, { content: folded }], total: TOTAL, offset: 100 }, page, 100);
    await list.unfold(101, path);
    expect(calls.map((c) => [c.path, c.fold])).toEqual([[path, 0]]);
    expect(list.items[1]).toEqual({ content: "x".repeat(40_000) });
    expect(list.unfolding).toEqual([]);
    expect(list.whole.map((w) => [w.index, w.path, w.text.length])).toEqual([[101, path, 40_000]]);
  });

  it("says a failed fetch in one line and keeps the fold", async () => {
    const list = new PagedList(where, { items: [{ content: folded }], total: TOTAL, offset: 101 }, async () => {
      throw { code: "not_found", message: "nothing at messages[101].content in this checkpoint" };
    });
    await list.unfold(101, path);
    expect(list.error).toBe("nothing at messages[101].content in this checkpoint");
    expect(list.items[0]).toEqual({ content: folded });
    expect(list.unfolding).toEqual([]);
  });
});

describe("an empty search", () => {
  it("does not drop a page being read when there was nothing to clear", async () => {
    let release: () => void = () => {};
    const s = server();
    const slow = async (req: StatePageRequest) => {
      await new Promise<void>((r) => (release = r));
      return s.page(req);
    };
    const list = new PagedList(where, { items: ["item 0"], total: TOTAL, offset: 0 }, slow, 100);
    const going = list.go(100);
    await list.search(""); // the component's first, empty search, while the page loads
    release();
    await going;
    expect(list.offset).toBe(100);
    expect(list.items[0]).toBe("item 100");
  });
});
