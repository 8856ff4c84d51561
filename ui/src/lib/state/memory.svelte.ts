// The Memory screen's state (LangGraph's long-term memory Store): the namespace tree, the
// chosen prefix, the item list (paged, or a text search under the prefix), the selected item,
// and the writes (put, delete). The screen and its dialogs only lay it out.
//
// Loads overlap (clicking through namespaces, typing a search): each kind goes through a
// `latest()` gate, so the answer for a prefix, search or item the user has already left never
// lands. A failing load shows its error in place of the list, never the previous list.

import type {
  StoreDeleteRequest,
  StoreDeleteResult,
  StoreGetRequest,
  StoreItem,
  StoreListRequest,
  StoreNamespace,
  StoreNamespacesRequest,
  StorePutRequest,
  StorePutResult,
  StoreSearchRequest,
} from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, toFailure, type Failure } from "../ipc/api";
import { app, type Toast } from "./app.svelte";
import { latest } from "./latest";
import { buildNamespaceTree, formatNamespace, isUnder, itemId, PAGE, sameItem, totalItems, type ItemRef } from "./memory";

/** The dialogs the Memory screen opens (one at a time). */
export type MemoryDialog = "edit" | "new" | "delete";

/** The commands the Memory screen calls. */
export interface MemoryApi {
  list(req: StoreListRequest): Promise<StoreItem[]>;
  search(req: StoreSearchRequest): Promise<StoreItem[]>;
  get(req: StoreGetRequest): Promise<StoreItem>;
  namespaces(req: StoreNamespacesRequest): Promise<StoreNamespace[]>;
  put(req: StorePutRequest): Promise<StorePutResult>;
  remove(req: StoreDeleteRequest): Promise<StoreDeleteResult>;
}

export const backendApi: MemoryApi = {
  list: (req) => call(commands.storeList(req)),
  search: (req) => call(commands.storeSearch(req)),
  get: (req) => call(commands.storeGet(req)),
  namespaces: (req) => call(commands.storeNamespaces(req)),
  put: (req) => call(commands.storePut(req)),
  remove: (req) => call(commands.storeDelete(req)),
};

/** What the view needs from the rest of the app (tests pass fakes). */
export interface MemoryDeps {
  api: MemoryApi;
  /** The open database's handle, null when none is open. */
  db: () => string | null;
  /** The backend has no such database open (any more): back to the open screen. */
  notOpen: () => void;
  toast: (kind: Toast["kind"], text: string, ms?: number) => void;
  /** Typing in the search box searches after this many ms of quiet. */
  searchDelay: number;
  /** Items per page. */
  pageSize: number;
  now: () => number;
}

const appDeps = (): MemoryDeps => ({
  api: backendApi,
  db: () => app.db?.db ?? null,
  notOpen: () => (app.screen = { name: "open" }),
  toast: (kind, text, ms) => app.toast(kind, text, ms),
  searchDelay: 300,
  pageSize: PAGE,
  now: () => Date.now(),
});

/** `users/u-1 · prefs`. */
export const itemName = (i: ItemRef) => `${formatNamespace(i.namespace)} · ${i.key}`;

export class MemoryView {
  // Raw: replaced whole on each load, never mutated.
  namespaces = $state.raw<StoreNamespace[] | null>(null);
  treeError = $state<Failure | null>(null);
  /** The namespace prefix the list is under ([]: everything). */
  prefix = $state.raw<string[]>([]);
  /** The search box's text. */
  query = $state("");
  /** The search the list shows ("": no search, the plain list). */
  searched = $state("");
  /** The list (null while it loads or when its load failed). */
  items = $state.raw<StoreItem[] | null>(null);
  itemsError = $state<Failure | null>(null);
  /** More items past the ones loaded. */
  hasMore = $state(false);
  loadingMore = $state(false);
  /** The selected item, as last read. */
  selected = $state.raw<StoreItem | null>(null);
  selectedError = $state<Failure | null>(null);
  dialog = $state<MemoryDialog | null>(null);
  /** When the list was read (for the TTL badges). */
  now = $state(0);

  readonly tree = $derived(this.namespaces ? buildNamespaceTree(this.namespaces) : []);
  readonly total = $derived(this.namespaces ? totalItems(this.namespaces) : 0);

  private readonly deps: MemoryDeps;
  private readonly treeLoads = latest();
  private readonly itemLoads = latest();
  private readonly itemReads = latest();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(deps: Partial<MemoryDeps> = {}) {
    this.deps = { ...appDeps(), ...deps };
    this.now = this.deps.now();
  }

  /** Loads the tree and the list; returns the cleanup (a pending search is dropped). */
  start(): () => void {
    this.reload();
    return () => this.cancelTyping();
  }

  /** Both again, the list keeping its prefix and search. */
  reload() {
    return Promise.all([this.loadTree(), this.loadItems(false)]);
  }

  private failed(e: unknown): Failure {
    const f = toFailure(e);
    if (f.code === "not_open") this.deps.notOpen();
    return f;
  }

  async loadTree() {
    const db = this.deps.db();
    if (!db) return;
    await this.treeLoads(
      this.deps.api.namespaces({ db, prefix: [] }),
      (list) => {
        this.namespaces = list;
        this.treeError = null;
      },
      (e) => {
        this.namespaces = null;
        this.treeError = this.failed(e);
      },
    );
  }

  private page(db: string, offset: number): Promise<StoreItem[]> {
    // One more than a page: whether there is a next one.
    const page = { db, prefix: this.prefix, limit: this.deps.pageSize + 1, offset };
    return this.searched ? this.deps.api.search({ ...page, query: this.searched }) : this.deps.api.list(page);
  }

  /** The first page. `fresh`: another prefix or search, so the old list goes at once. */
  async loadItems(fresh = true) {
    const db = this.deps.db();
    if (!db) return;
    if (fresh) this.items = null;
    this.loadingMore = false;
    await this.itemLoads(
      this.page(db, 0),
      (list) => this.landed(list, []),
      (e) => this.itemsFailed(e),
    );
  }

  /** The next page, appended. */
  async loadMore() {
    const db = this.deps.db();
    const shown = this.items;
    if (!db || !shown || !this.hasMore || this.loadingMore) return;
    this.loadingMore = true;
    const done = await this.itemLoads(
      this.page(db, shown.length),
      (list) => this.landed(list, shown),
      (e) => this.itemsFailed(e),
    );
    if (done) this.loadingMore = false;
  }

  private landed(list: StoreItem[], before: StoreItem[]) {
    const size = this.deps.pageSize;
    // A write between pages shifts the rows: an item already shown is not shown twice.
    const seen = new Set(before.map(itemId));
    this.items = [...before, ...list.slice(0, size).filter((i) => !seen.has(itemId(i)))];
    this.hasMore = list.length > size;
    this.itemsError = null;
    this.loadingMore = false;
    this.now = this.deps.now();
    const fresh = this.items.find((i) => sameItem(i, this.selected));
    if (fresh && !this.selectedError) this.selected = fresh;
  }

  private itemsFailed(e: unknown) {
    this.items = null;
    this.hasMore = false;
    this.loadingMore = false;
    this.itemsError = this.failed(e);
  }

  /** Show the items under a namespace ([]: all). The selection stays when it is under it. */
  setPrefix(prefix: string[]) {
    this.prefix = prefix;
    if (this.selected && !isUnder(this.selected.namespace, prefix)) this.deselect();
    this.loadItems();
  }

  /** The search box changed: search once typing pauses. */
  typed(text: string) {
    this.query = text;
    this.cancelTyping();
    this.timer = setTimeout(() => this.search(), this.deps.searchDelay);
  }

  private cancelTyping() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Search for the box's text now (Enter); an empty box is the plain list. */
  search() {
    this.cancelTyping();
    const q = this.query.trim();
    if (q === this.searched && this.items) return;
    this.searched = q;
    this.loadItems();
  }

  clearSearch() {
    this.query = "";
    this.search();
  }

  /** Select an item: shown at once as listed, then read again (it may have changed since). */
  async select(item: StoreItem) {
    const db = this.deps.db();
    if (!db) return;
    this.selected = item;
    this.selectedError = null;
    await this.itemReads(
      this.deps.api.get({ db, namespace: item.namespace, key: item.key }),
      (fresh) => (this.selected = fresh),
      (e) => {
        // Not the listed value under an error: it may be gone or changed.
        this.selected = null;
        this.selectedError = this.failed(e);
      },
    );
  }

  /** Select an item by its namespace and key (a link to it): read, then shown (the list moves
   * to its namespace when it is not under the one shown); an error in place of the item when it
   * cannot be read (gone, say). */
  async open(ref: ItemRef) {
    const db = this.deps.db();
    if (!db) return;
    // The list shows where the item is when it is elsewhere.
    if (!isUnder(ref.namespace, this.prefix)) {
      this.prefix = ref.namespace;
      void this.loadItems();
    }
    this.selected = null;
    this.selectedError = null;
    await this.itemReads(
      this.deps.api.get({ db, namespace: ref.namespace, key: ref.key }),
      (item) => (this.selected = item),
      (e) => (this.selectedError = this.failed(e)),
    );
  }

  deselect() {
    // Supersede a read still in flight: its item is no longer selected.
    this.itemReads(Promise.resolve(null), () => {}, () => {});
    this.selected = null;
    this.selectedError = null;
  }

  /** Put an item (errors are thrown for the dialog to show); then select it and reload. */
  async put(req: Omit<StorePutRequest, "db">): Promise<StorePutResult | null> {
    const db = this.deps.db();
    if (!db) return null;
    const r = await this.deps.api.put({ db, ...req });
    this.itemReads(Promise.resolve(null), () => {}, () => {});
    this.selected = r.item;
    this.selectedError = null;
    this.dialog = null;
    this.deps.toast("ok", `${r.created ? "Created" : "Saved"} ${itemName(r.item)}.`);
    if (r.removed_vectors.length)
      this.deps.toast("info", `Its embeddings (${r.removed_vectors.join(", ")}) were removed: the program's store re-embeds it on its next put.`, 8000);
    await this.reload();
    return r;
  }

  /** Whether an item exists (before creating one: a put would replace it). */
  async exists(item: ItemRef): Promise<boolean> {
    const db = this.deps.db();
    if (!db) return false;
    try {
      await this.deps.api.get({ db, namespace: item.namespace, key: item.key });
      return true;
    } catch (e) {
      if (toFailure(e).code === "not_found") return false;
      throw e;
    }
  }

  /** What deleting an item would remove (nothing is written). */
  async previewDelete(item: ItemRef): Promise<StoreDeleteResult | null> {
    const db = this.deps.db();
    if (!db) return null;
    return this.deps.api.remove({ db, namespace: item.namespace, key: item.key, dry_run: true });
  }

  /** Delete an item and its vectors (errors are thrown for the dialog to show); then reload. */
  async remove(item: ItemRef): Promise<StoreDeleteResult | null> {
    const db = this.deps.db();
    if (!db) return null;
    const r = await this.deps.api.remove({ db, namespace: item.namespace, key: item.key, dry_run: false });
    if (sameItem(this.selected, item)) this.deselect();
    this.dialog = null;
    const vectors = r.removed_vectors ? ` and its ${r.removed_vectors === 1 ? "embedding" : `${r.removed_vectors} embeddings`}` : "";
    this.deps.toast("ok", `Deleted ${itemName(r.item)}${vectors}.`);
    await this.reload();
    return r;
  }
}
