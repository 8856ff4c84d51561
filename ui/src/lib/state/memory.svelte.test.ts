import { afterEach, describe, expect, it, vi } from "vitest";
import { tick } from "svelte";
import type { StoreItem, StoreNamespace } from "../ipc/bindings";
import { Failure } from "../ipc/api";
import { isUnder } from "./memory";
import { MemoryView, type MemoryApi } from "./memory.svelte";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function settle() {
  for (let i = 0; i < 10; i++) await tick();
}

const item = (ns: string, key: string, value: Record<string, unknown> = {}, extra: Partial<StoreItem> = {}): StoreItem => ({
  namespace: ns.split("/"),
  key,
  value: value as StoreItem["value"],
  preview: JSON.stringify(value),
  created_at: "2026-01-01T00:00:00+00:00",
  updated_at: "2026-01-01T00:00:00+00:00",
  expired: false,
  ...extra,
});

/** A store in memory behind the MemoryApi, recording each request; `hold` makes a command wait. */
function fakeStore(seed: StoreItem[]) {
  let rows = [...seed];
  const calls: { cmd: string; req: unknown }[] = [];
  const held: Partial<Record<keyof MemoryApi, () => Promise<never> | null>> = {};
  const answer = <T>(cmd: keyof MemoryApi, req: unknown, f: () => T): Promise<T> => {
    calls.push({ cmd, req: JSON.parse(JSON.stringify(req)) });
    const hold = held[cmd]?.();
    return hold ?? Promise.resolve().then(f);
  };
  const under = (prefix: string[] = []) => rows.filter((r) => isUnder(r.namespace, prefix));
  const page = <T>(list: T[], offset = 0, limit?: number | null) => list.slice(offset, limit == null ? undefined : offset + limit);
  const find = (ns: string[], key: string) => rows.find((r) => r.key === key && r.namespace.join("/") === ns.join("/"));
  const api: MemoryApi = {
    list: (req) => answer("list", req, () => page(under(req.prefix), req.offset, req.limit)),
    search: (req) =>
      answer("search", req, () => page(under(req.prefix).filter((r) => JSON.stringify(r.value).includes(req.query)), req.offset, req.limit)),
    get: (req) =>
      answer("get", req, () => {
        const r = find(req.namespace, req.key);
        if (!r) throw new Failure("not_found", `no item ${req.key}`);
        return r;
      }),
    namespaces: (req) =>
      answer("namespaces", req, () => {
        const counts = new Map<string, number>();
        for (const r of under(req.prefix)) counts.set(r.namespace.join("/"), (counts.get(r.namespace.join("/")) ?? 0) + 1);
        return [...counts].map(([ns, items]): StoreNamespace => ({ namespace: ns.split("/"), items }));
      }),
    put: (req) =>
      answer("put", req, () => {
        const old = find(req.namespace, req.key);
        const next = item(req.namespace.join("/"), req.key, req.value as Record<string, unknown>, { ttl_minutes: req.ttl_minutes ?? null });
        rows = [next, ...rows.filter((r) => r !== old)];
        return { item: next, created: !old, removed_vectors: (old?.vectors ?? []).map((v) => v.field) };
      }),
    remove: (req) =>
      answer("remove", req, () => {
        const old = find(req.namespace, req.key);
        if (!old) throw new Failure("not_found", `no item ${req.key}`);
        if (!req.dry_run) rows = rows.filter((r) => r !== old);
        return { item: old, removed_vectors: old.vectors?.length ?? 0, dry_run: req.dry_run };
      }),
  };
  return { api, calls, held, rows: () => rows };
}

const seed = () => [
  item("users/u-1", "prefs", { theme: "dark" }),
  item("users/u-1", "facts", { likes: "tea" }, { vectors: [{ field: "$", dims: 8 }] }),
  item("users/u-2", "prefs", { theme: "light" }),
  item("docs", "readme", { text: "hello" }),
  item("docs", "faq", { text: "dark mode?" }),
];

const stops: (() => void)[] = [];
afterEach(() => {
  while (stops.length) stops.pop()!();
  vi.useRealTimers();
});

async function open(rows = seed(), pageSize = 50) {
  const store = fakeStore(rows);
  const toasts: [string, string][] = [];
  let notOpen = 0;
  const view = new MemoryView({
    api: store.api,
    db: () => "db1",
    notOpen: () => notOpen++,
    toast: (kind, text) => toasts.push([kind, text]),
    searchDelay: 200,
    pageSize,
    now: () => 1000,
  });
  stops.push(view.start());
  await settle();
  return { view, store, toasts, notOpen: () => notOpen };
}

const keys = (items: StoreItem[] | null) => items?.map((i) => `${i.namespace.join("/")}:${i.key}`);

describe("MemoryView: a link to an item", () => {
  it("opens the item it names (the list moves to its namespace), or says it is gone", async () => {
    const { view, store } = await open();
    view.setPrefix(["docs"]);
    await settle();
    await view.open({ namespace: ["users", "u-1"], key: "prefs" });
    await settle();
    expect(store.calls.filter((c) => c.cmd === "get").at(-1)?.req).toEqual({ db: "db1", namespace: ["users", "u-1"], key: "prefs" });
    expect([view.selected?.value, view.selectedError, view.prefix]).toEqual([{ theme: "dark" }, null, ["users", "u-1"]]);
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts"]);
    await view.open({ namespace: ["users", "u-1"], key: "gone" });
    expect([view.selected, view.selectedError?.code]).toEqual([null, "not_found"]);
  });
});

describe("MemoryView: loading", () => {
  it("loads the tree with rolled-up counts and the first page of everything", async () => {
    const { view, store } = await open();
    expect(store.calls.map((c) => c.cmd).sort()).toEqual(["list", "namespaces"]);
    expect(store.calls.find((c) => c.cmd === "list")?.req).toEqual({ db: "db1", prefix: [], limit: 51, offset: 0 });
    expect(view.total).toBe(5);
    expect(view.tree.map((n) => [n.label, n.total])).toEqual([
      ["docs", 2],
      ["users", 3],
    ]);
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts", "users/u-2:prefs", "docs:readme", "docs:faq"]);
    expect(view.hasMore).toBe(false);
    expect(view.now).toBe(1000);
  });

  it("pages: one more than a page says there is more; Load more appends the next", async () => {
    const { view, store } = await open(seed(), 2);
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts"]);
    expect(view.hasMore).toBe(true);
    await view.loadMore();
    expect(store.calls.at(-1)?.req).toEqual({ db: "db1", prefix: [], limit: 3, offset: 2 });
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts", "users/u-2:prefs", "docs:readme"]);
    await view.loadMore();
    expect(view.items).toHaveLength(5);
    expect(view.hasMore).toBe(false);
    const before = store.calls.length;
    await view.loadMore(); // nothing more: no request
    expect(store.calls.length).toBe(before);
  });

  it("does not show an item twice when a write elsewhere shifted the pages", async () => {
    const { view, store } = await open(seed(), 2);
    await store.api.put({ db: "db1", namespace: ["other"], key: "new", value: {} }); // the program writes
    await view.loadMore();
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts", "users/u-2:prefs"]);
    await view.loadMore();
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts", "users/u-2:prefs", "docs:readme"]);
  });

  it("filters by a namespace prefix and drops a selection outside it", async () => {
    const { view, store } = await open();
    await view.select(view.items![3]); // docs:readme
    view.setPrefix(["users"]);
    expect(view.items).toBeNull(); // not the old list while the new one loads
    expect(view.selected).toBeNull();
    await settle();
    expect(store.calls.at(-1)?.req).toEqual({ db: "db1", prefix: ["users"], limit: 51, offset: 0 });
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-1:facts", "users/u-2:prefs"]);
  });

  it("never lets the answer for a prefix the user has left land", async () => {
    const { view, store } = await open();
    const slow = deferred<never>();
    store.held.list = () => slow.promise;
    view.setPrefix(["docs"]);
    store.held.list = undefined;
    view.setPrefix(["users", "u-2"]);
    await settle();
    expect(keys(view.items)).toEqual(["users/u-2:prefs"]);
    slow.reject(new Failure("internal", "late failure"));
    await settle();
    expect(keys(view.items)).toEqual(["users/u-2:prefs"]);
    expect(view.itemsError).toBeNull();
  });

  it("shows a failing load's error instead of the list, and the list again on retry", async () => {
    const { view, store } = await open();
    store.held.list = () => Promise.reject(new Failure("locked", "database is locked"));
    await view.loadItems(false);
    expect(view.items).toBeNull();
    expect(view.itemsError?.message).toBe("database is locked");
    store.held.list = undefined;
    await view.loadItems(false);
    expect(view.items).toHaveLength(5);
    expect(view.itemsError).toBeNull();
  });

  it("goes back to the open screen when the database is no longer open", async () => {
    const { view, store, notOpen } = await open();
    store.held.namespaces = () => Promise.reject(new Failure("not_open", "no such database"));
    await view.loadTree();
    expect(view.treeError?.code).toBe("not_open");
    expect(view.namespaces).toBeNull();
    expect(notOpen()).toBe(1);
  });
});

describe("MemoryView: search", () => {
  it("searches under the prefix once typing pauses; an empty box lists again", async () => {
    vi.useFakeTimers();
    const { view, store } = await open();
    view.setPrefix(["docs"]);
    view.typed("da");
    view.typed("dark");
    await vi.advanceTimersByTimeAsync(199);
    expect(store.calls.filter((c) => c.cmd === "search")).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(store.calls.filter((c) => c.cmd === "search").map((c) => c.req)).toEqual([
      { db: "db1", prefix: ["docs"], query: "dark", limit: 51, offset: 0 },
    ]);
    expect(keys(view.items)).toEqual(["docs:faq"]);
    view.clearSearch();
    await settle();
    expect(view.searched).toBe("");
    expect(keys(view.items)).toEqual(["docs:readme", "docs:faq"]);
  });

  it("searches at once on Enter, and not again for the same text", async () => {
    const { view, store } = await open();
    view.typed("  theme ");
    view.search();
    await settle();
    const searches = () => store.calls.filter((c) => c.cmd === "search").length;
    expect(searches()).toBe(1);
    expect(keys(view.items)).toEqual(["users/u-1:prefs", "users/u-2:prefs"]);
    view.search();
    await settle();
    expect(searches()).toBe(1);
  });
});

describe("MemoryView: selection and writes", () => {
  it("reads a selected item again; the read of an item left behind is dropped", async () => {
    const { view, store } = await open();
    const slow = deferred<StoreItem>();
    store.held.get = () => slow.promise as Promise<never>;
    const first = view.select(view.items![0]);
    store.held.get = undefined;
    await view.select(view.items![2]);
    slow.resolve(item("users/u-1", "prefs", { theme: "stale" }));
    await first;
    expect(view.selected?.key).toBe("prefs");
    expect(view.selected?.namespace).toEqual(["users", "u-2"]);
  });

  it("shows an error, not the listed value, when the selected item is gone", async () => {
    const { view, store } = await open();
    store.held.get = () => Promise.reject(new Failure("not_found", "no item prefs"));
    await view.select(view.items![0]);
    expect(view.selected).toBeNull();
    expect(view.selectedError?.code).toBe("not_found");
  });

  it("puts an edit: says its embeddings went, selects it, reloads tree and list", async () => {
    const { view, store, toasts } = await open();
    await view.select(view.items![1]); // users/u-1 facts, with a vector
    view.dialog = "edit";
    const r = await view.put({ namespace: ["users", "u-1"], key: "facts", value: { likes: "coffee" }, ttl_minutes: 60 });
    expect(r?.created).toBe(false);
    expect(store.calls.find((c) => c.cmd === "put")?.req).toEqual({
      db: "db1",
      namespace: ["users", "u-1"],
      key: "facts",
      value: { likes: "coffee" },
      ttl_minutes: 60,
    });
    expect(view.dialog).toBeNull();
    expect(view.selected?.value).toEqual({ likes: "coffee" });
    expect(toasts).toEqual([
      ["ok", "Saved users/u-1 · facts."],
      ["info", "Its embeddings ($) were removed: the program's store re-embeds it on its next put."],
    ]);
    expect(store.calls.slice(-2).map((c) => c.cmd).sort()).toEqual(["list", "namespaces"]);
    expect(keys(view.items)?.[0]).toBe("users/u-1:facts");
  });

  it("creates a new item in a new namespace and counts it in the tree", async () => {
    const { view, toasts } = await open();
    await view.put({ namespace: ["agents", "a1"], key: "notes", value: { n: 1 }, ttl_minutes: null });
    expect(toasts[0]).toEqual(["ok", "Created agents/a1 · notes."]);
    expect(view.tree.map((n) => [n.label, n.total])).toEqual([
      ["agents", 1],
      ["docs", 2],
      ["users", 3],
    ]);
    expect(view.total).toBe(6);
  });

  it("says whether an item exists before a new one would replace it", async () => {
    const { view, store } = await open();
    expect(await view.exists({ namespace: ["docs"], key: "faq" })).toBe(true);
    expect(await view.exists({ namespace: ["docs"], key: "nope" })).toBe(false);
    store.held.get = () => Promise.reject(new Failure("locked", "database is locked"));
    await expect(view.exists({ namespace: ["docs"], key: "faq" })).rejects.toThrow("database is locked");
  });

  it("leaves everything as it was when a put fails (the dialog shows the error)", async () => {
    const { view, store, toasts } = await open();
    store.held.put = () => Promise.reject(new Failure("invalid_input", "the value must be a JSON object"));
    view.dialog = "new";
    await expect(view.put({ namespace: ["x"], key: "k", value: {} })).rejects.toThrow("the value must be a JSON object");
    expect(view.dialog).toBe("new");
    expect(toasts).toEqual([]);
    expect(view.items).toHaveLength(5);
  });

  it("previews a delete without writing, then deletes, deselects and reloads", async () => {
    const { view, store, toasts } = await open();
    await view.select(view.items![1]);
    const facts = { namespace: ["users", "u-1"], key: "facts" };
    const preview = await view.previewDelete(facts);
    expect(preview).toMatchObject({ dry_run: true, removed_vectors: 1 });
    expect(store.rows()).toHaveLength(5);
    view.dialog = "delete";
    await view.remove(facts);
    expect(store.calls.filter((c) => c.cmd === "remove").map((c) => (c.req as { dry_run: boolean }).dry_run)).toEqual([true, false]);
    expect(store.rows()).toHaveLength(4);
    expect(view.selected).toBeNull();
    expect(view.dialog).toBeNull();
    expect(toasts).toEqual([["ok", "Deleted users/u-1 · facts and its embedding."]]);
    expect(keys(view.items)).not.toContain("users/u-1:facts");
    expect(view.tree.find((n) => n.label === "users")?.total).toBe(2);
  });
});
